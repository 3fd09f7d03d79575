"""``/datasets``: register (public name, synthetic, scikit-learn), upload an svmlight file,
read, statistics and the primal-vs-dual advisor."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, File, Form, Path, Query, Request, Response, UploadFile

from faceoff.api.deps import AuthenticatedRoute, Limit, Offset, SessionDep, SettingsDep, TeamDep
from faceoff.api.schemas import (
    DatasetCreate,
    DatasetPublic,
    DatasetsPublic,
    DatasetStatsPublic,
    Message,
    Responses,
)
from faceoff.core import datasets as service
from faceoff.core import uploads
from faceoff.core.datasets import NAME_PATTERN, Caps
from faceoff.core.errors import DataUnavailable
from faceoff.core.specs import Gamma, Loss, Normalize, SpecError, TextInt

router = APIRouter(prefix="/datasets", tags=["datasets"], route_class=AuthenticatedRoute)

DatasetId = Annotated[TextInt, Path(ge=1, le=2**31 - 1, description="dataset id")]
NOT_FOUND: Responses = {404: {"model": Message, "description": "no such dataset"}}
EXISTS: Responses = {
    200: {"model": DatasetPublic, "description": "already registered, same source"}
}
TAKEN: Responses = {409: {"model": Message, "description": "the name is taken by another source"}}
MULTIPART_OVERHEAD = 64 * 1024


@router.get("", response_model=DatasetsPublic)
def read_datasets(
    session: SessionDep, team: TeamDep, limit: Limit = 100, offset: Offset = 0
) -> DatasetsPublic:
    """The shared datasets (public registry names are registered on first use) and your
    team's uploads."""
    rows, count = service.list_datasets(session, limit, offset, team_id=team)
    return DatasetsPublic(data=[DatasetPublic.model_validate(d) for d in rows], count=count)


@router.post("", response_model=DatasetPublic, status_code=201, responses={**EXISTS, **TAKEN})
def create_dataset(
    body: DatasetCreate,
    response: Response,
    session: SessionDep,
    settings: SettingsDep,
    team: TeamDep,
) -> DatasetPublic:
    """Register a public registry dataset, a synthetic problem, a scikit-learn dataset
    (shared by every team) or random features of a dataset you can use (shared, or your
    team's if made of your upload), within the size caps (MAX_SAMPLES, MAX_FEATURES,
    MAX_NNZ, MAX_CLASSES)."""
    source = body.source.model_dump(mode="json", exclude_none=True)
    dataset, created = service.register_dataset(
        session, body.name, source, team_id=team, caps=Caps.of(settings)
    )
    session.commit()
    if not created:
        response.status_code = 200
    return DatasetPublic.model_validate(dataset)


@router.post(
    "/upload",
    response_model=DatasetPublic,
    status_code=201,
    responses={
        **EXISTS,
        **TAKEN,
        413: {
            "model": Message,
            "description": "larger than MAX_UPLOAD_BYTES, or than MAX_UPLOAD_DECOMPRESSED_BYTES "
            "once decompressed, or holding more than API_MAX_UPLOAD_VALUES feature values",
        },
        422: {
            "description": "not a valid svmlight file (FILE: line N: problem), a container "
            "other than one layer of gzip or bzip2, or n_features or the file's shape over "
            "MAX_FEATURES, MAX_SAMPLES or MAX_NNZ"
        },
    },
)
def upload_dataset(
    request: Request,
    response: Response,
    session: SessionDep,
    settings: SettingsDep,
    team: TeamDep,
    file: Annotated[UploadFile, File(description="svmlight file: plain, bzip2 or gzip")],
    name: Annotated[
        str | None,
        Form(min_length=1, max_length=200, pattern=NAME_PATTERN, description="default: file"),
    ] = None,
    n_features: Annotated[TextInt | None, Form(ge=1, le=2**31 - 1)] = None,
) -> DatasetPublic:
    """Upload and register an svmlight file, private to your team (validated before it is
    registered; kept decompressed as ``<sha256>.svm``, whatever the client's file name)."""
    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) > settings.MAX_UPLOAD_BYTES + MULTIPART_OVERHEAD:
        raise uploads.UploadTooLarge(settings.MAX_UPLOAD_BYTES)
    dataset, created = uploads.upload_dataset(
        session, file.file, file.filename or "upload.svm", name, n_features, settings, team_id=team
    )
    session.commit()
    if not created:
        response.status_code = 200
    return DatasetPublic.model_validate(dataset)


@router.get("/{dataset_id}", response_model=DatasetPublic, responses=NOT_FOUND)
def read_dataset(dataset_id: DatasetId, session: SessionDep, team: TeamDep) -> DatasetPublic:
    return DatasetPublic.model_validate(service.get_dataset(session, dataset_id, team_id=team))


@router.get(
    "/{dataset_id}/stats",
    response_model=DatasetStatsPublic,
    responses={**NOT_FOUND, 422: {"description": "invalid query, or the data cannot be loaded"}},
)
def read_dataset_stats(
    dataset_id: DatasetId,
    session: SessionDep,
    settings: SettingsDep,
    team: TeamDep,
    loss: Loss = "logistic",
    l2: Annotated[float, Query(gt=0, le=1e6, allow_inf_nan=False)] = 1e-4,
    gamma: Annotated[Gamma, Query()] = 1.0,
    normalize: Normalize = "none",
) -> DatasetStatsPublic:
    """Size, sparsity, norms and labels (cached), and the Faceoff advisor for ``loss`` and
    ``l2``: predicted work of primal vs dual coordinate descent."""
    dataset = service.get_dataset(session, dataset_id, team_id=team)
    try:
        result = service.dataset_statistics(
            session,
            dataset,
            loss,
            l2,
            gamma,
            normalize,
            upload_dir=settings.upload_dir,
            caps=Caps.in_process(settings),
        )
    except DataUnavailable as err:
        raise SpecError(("path", "dataset_id"), str(err)) from None
    return DatasetStatsPublic(dataset_id=dataset.id, normalize=normalize, **result)
