"""``/references``: certified optima P* of objectives."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query, Response

from faceoff.api.deps import AuthenticatedRoute, Limit, Offset, SessionDep, SettingsDep, TeamDep
from faceoff.api.schemas import (
    JobPublic,
    Message,
    ReferenceCreate,
    ReferencePublic,
    ReferencesPublic,
)
from faceoff.core import jobs, references
from faceoff.core.specs import Loss
from faceoff.solvers.vocabulary import PENALTY_NAMES

router = APIRouter(prefix="/references", tags=["references"], route_class=AuthenticatedRoute)

HASH = r"^[0-9a-f]{64}$"
Penalty = Literal[PENALTY_NAMES]  # type: ignore[valid-type]
Weight = Annotated[float | None, Query(ge=0, le=1e6, allow_inf_nan=False)]


@router.post(
    "",
    response_model=JobPublic,
    status_code=201,
    responses={200: {"model": JobPublic, "description": "an identical job exists"}},
)
def create_reference(
    body: ReferenceCreate,
    response: Response,
    session: SessionDep,
    settings: SettingsDep,
    team: TeamDep,
) -> JobPublic:
    """Submit the high-precision run (tol 1e-13) that certifies P* of an objective (a job
    of your team).

    When it succeeds, the worker records its P and gap as the objective's reference
    (GET /references/{objective_hash}, the hash is the job's ``objective_hash`` once the
    job has run). References are keyed by the content of the data (a digest of the matrix
    and labels after transforms), not by the dataset's name, and shared by every team: P*
    is a property of the objective.
    """
    spec = references.reference_job_spec(
        body.objective(), body.solver, body.max_seconds, body.max_epochs
    )
    job, created = jobs.submit_job(session, spec, settings, body.force, team_id=team)
    session.commit()
    if created:
        jobs.enqueue_new([job], settings)
    else:
        response.status_code = 200
    return JobPublic.model_validate(job)


@router.get("", response_model=ReferencesPublic)
def read_references(
    session: SessionDep,
    team: TeamDep,
    objective_hash: Annotated[str | None, Query(pattern=HASH)] = None,
    dataset: Annotated[
        str | None, Query(min_length=1, max_length=200, pattern=r"^[\w.+-]+$")
    ] = None,
    loss: Loss | None = None,
    penalty: Penalty | None = None,
    l1: Weight = None,
    l2: Weight = None,
    limit: Limit = 100,
    offset: Offset = 0,
) -> ReferencesPublic:
    """The certified optima P*, newest first, filtered; ``count`` is the number of matches
    in all. ``objective_hash`` is a job's once a worker has run it; ``dataset`` a shared
    dataset's name or one of your team's (matched through your jobs on it)."""
    where = references.ReferenceFilter(
        objective_hash=objective_hash, dataset=dataset, loss=loss, penalty=penalty, l1=l1, l2=l2
    )
    rows, count = references.list_references(session, where, limit, offset, team_id=team)
    shown = references.as_read_by(session, rows, team_id=team)
    return ReferencesPublic(data=[ReferencePublic.model_validate(r) for r in shown], count=count)


@router.get(
    "/{objective_hash}", response_model=ReferencePublic, responses={404: {"model": Message}}
)
def read_reference(
    objective_hash: Annotated[str, Path(pattern=HASH)], session: SessionDep, team: TeamDep
) -> ReferencePublic:
    """The best certified optimum of an objective, by a job's ``objective_hash`` once a
    worker has run the job (it is then the hash of the job's data digest, loss and weights).
    The description names the dataset only if it is shared with every team; on a private
    dataset, only the team whose job certified it sees that job and the data's digest."""
    found = references.get_reference(session, objective_hash)
    (shown,) = references.as_read_by(session, [found], team_id=team)
    return ReferencePublic.model_validate(shown)
