"""The service layer: submitting, querying and cancelling jobs and sweeps, registering
datasets, dataset statistics and the reference optima P*. The API routes only call these.

Deduplication. A job whose canonical spec (:func:`faceoff.core.specs.spec_hash`) equals that of an
earlier job that is queued, running or succeeded is not run again: :func:`submit_job`
returns the earlier job (``created=False``) unless ``force``. Failed and cancelled jobs are
never reused, so resubmitting them runs them again.

A sweep owns its jobs (``Job.sweep_id``), so its progress and results are self-contained:

- submitting a sweep whose canonical spec equals an existing sweep's returns that sweep;
- otherwise each expanded job reuses an identical reusable job only if that job belongs to
  no sweep (it is then adopted: its ``sweep_id`` becomes the new sweep's); an identical job
  of another sweep is not taken away from it, and a new job is created instead.

``force=True`` always creates new jobs (and a new sweep).
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from faceoff.core import uploads
from faceoff.core.auth import owned_by, visible_datasets
from faceoff.core.datasets import Caps, check_dataset, check_source
from faceoff.core.jsonsafe import json_safe
from faceoff.core.models import (
    CANCELLED,
    QUEUED,
    RUNNING,
    STATUSES,
    SUCCEEDED,
    Dataset,
    Job,
    Reference,
    Sweep,
    TracePoint,
    utcnow,
)
from faceoff.core.objectives import content_objective, objective_key
from faceoff.core.settings import Settings
from faceoff.core.specs import (
    JobSpec,
    ObjectiveSpec,
    SpecError,
    StopSpec,
    SweepSpec,
    canonical_job,
    check_text,
    expand_sweep,
    objective_hash,
    spec_hash,
    sweep_size,
)
from faceoff.core.uploads import UploadTooLarge as UploadTooLarge  # raised by the routes
from faceoff.solvers.catalogue import CATALOGUE
from faceoff.solvers.vocabulary import smoothness as smoothness  # β of a loss, Numba-free

log = logging.getLogger(__name__)

REUSABLE = (QUEUED, RUNNING, SUCCEEDED)
# a reference optimum replaces another at an equal gap if its gap is within this of |P|
REFERENCE_RTOL = 1e-9


class NotFoundError(LookupError):
    """An id that names nothing; the message says which."""


class ConflictError(Exception):
    """A request that contradicts the current state (cancel a finished job, reuse a name)."""


def _check_text(value: str, loc: tuple[str | int, ...]) -> None:
    """SpecError at ``loc`` unless ``value`` is printable text (:func:`check_text`)."""
    try:
        check_text(value)
    except ValueError as err:
        raise SpecError(loc, f"{loc[-1] if loc else 'value'} {err}") from None


# ---------------------------------------------------------------- datasets


def get_dataset(session: Session, dataset_id: int, *, team_id: int | None) -> Dataset:
    """A dataset the team may use (NotFoundError for another team's upload)."""
    query = select(Dataset).where(Dataset.id == dataset_id, visible_datasets(team_id))
    dataset = session.scalars(query).one_or_none()
    if dataset is None:
        raise NotFoundError(f"dataset {dataset_id} not found")
    return dataset


def list_datasets(
    session: Session, limit: int, offset: int, *, team_id: int | None
) -> tuple[list[Dataset], int]:
    query = select(Dataset).where(visible_datasets(team_id))
    count = session.scalar(select(func.count()).select_from(query.subquery()))
    rows = session.scalars(query.order_by(Dataset.id).limit(limit).offset(offset))
    return list(rows), int(count or 0)


def _name_taken(existing: Dataset, team_id: int | None) -> ConflictError:
    """The error for a dataset name in use; another team's dataset is not described."""
    if existing.team_id not in (None, team_id):
        return ConflictError(f"dataset name {existing.name!r} is taken; choose another name")
    return ConflictError(
        f"dataset name {existing.name!r} is taken (id {existing.id}, source "
        f"{existing.source}); choose another name"
    )


def _add_dataset(session: Session, dataset: Dataset) -> Dataset:
    """Insert ``dataset``; if another request inserted the same name first, return that
    one when its source is the same, ConflictError otherwise."""
    try:
        with session.begin_nested():
            session.add(dataset)
    except IntegrityError:
        existing = session.scalars(select(Dataset).where(Dataset.name == dataset.name)).one()
        if existing.source != dataset.source or existing.team_id != dataset.team_id:
            raise _name_taken(existing, dataset.team_id) from None
        return existing
    return dataset


@lru_cache(maxsize=1)
def _public_names() -> dict[str, str]:
    """{casefolded name: public name} of every public dataset: the registry's and the
    datasets shipped with scikit-learn."""
    from faceoff.core.datasets import SKLEARN
    from faceoff.data.registry import REGISTRY

    return {name.casefold(): name for name in (*REGISTRY, *SKLEARN)}


def public_source(name: str) -> dict[str, Any] | None:
    """The source a dataset called ``name`` must have: that of the public dataset whose
    name it is (compared case-insensitively, so no look-alike can pass for it); None for a
    name free to use."""
    from faceoff.core.datasets import SKLEARN

    public = _public_names().get(name.casefold())
    if public is None:
        return None
    return {"kind": "sklearn" if public in SKLEARN else "registry", "name": public}


def check_public_name(name: str, source: dict[str, Any]) -> None:
    """ConflictError unless ``name`` is free or ``source`` is its public dataset's.

    Public names are reserved on every registration path (a registration of any source
    kind, an upload, the first use of a name in a job or sweep), so a name every team
    relies on always means the public data.
    """
    public = public_source(name)
    if public is not None and source != public:
        raise ConflictError(
            f"name {name!r} is reserved for the public dataset {public['name']!r} (source "
            f"{json.dumps(public)}); choose another name"
        )


def _public_dataset(source: dict[str, Any], name: str) -> Dataset:
    """The Dataset of a public ``source`` (UnknownDatasetError for an unknown registry
    name), registered as ``name``."""
    from faceoff.data.registry import get_spec

    if source["kind"] == "sklearn":  # breast_cancer, standardized (dense)
        return Dataset(name=name, source=source, n_samples=569, n_features=30, nnz=569 * 30)
    entry = get_spec(source["name"])
    return Dataset(
        name=name,
        source={"kind": "registry", "name": entry.name},
        n_samples=entry.n_samples,
        n_features=entry.n_features,
        nnz=entry.nnz,
    )


def resolve_dataset(
    session: Session, name: str, loc: tuple[str | int, ...], *, team_id: int | None, caps: Caps
) -> Dataset:
    """The dataset ``name`` the team may use; a public name is registered, with its public
    source, on first use.

    SpecError at ``loc`` for any other name, DatasetTooLarge for a shape over ``caps``
    (also one registered under larger caps).
    """
    from faceoff.data.registry import UnknownDatasetError, get_spec

    _check_text(name, loc)
    query = select(Dataset).where(Dataset.name == name, visible_datasets(team_id))
    dataset = session.scalars(query).one_or_none()
    if dataset is not None:
        check_dataset(dataset, caps, loc)
        return dataset
    public = public_source(name)
    if public is None or public["name"] != name:
        try:  # not a public name: the error names the public ones it is close to
            get_spec(name, dict.fromkeys(_public_names().values()))
        except UnknownDatasetError as err:
            raise SpecError(
                loc,
                f"{err}; use a registered dataset (GET /api/v1/datasets) or a public name "
                "(faceoff datasets list)",
            ) from None
    dataset = _public_dataset(public, name)
    check_dataset(dataset, caps, loc)
    return _add_dataset(session, dataset)


def synthetic_shape(source: dict[str, Any]) -> tuple[int, int, int]:
    """(n_samples, n_features, expected nnz) of a synthetic source."""
    n, d = int(source["n_samples"]), int(source["n_features"])
    return n, d, round(n * d * float(source["density"]))


def register_dataset(
    session: Session, name: str, source: dict[str, Any], *, team_id: int | None, caps: Caps
) -> tuple[Dataset, bool]:
    """Register ``name`` for a validated registry, synthetic or scikit-learn ``source``
    (shared by every team; ``team_id`` is the caller's).

    Returns (dataset, created); registering the same name and source again returns the
    existing dataset, a taken name with another source raises ConflictError. Nothing is
    loaded: a registry name is checked against the registry, shapes come from it, and
    the shape against ``caps`` (DatasetTooLarge).
    """
    from faceoff.data.registry import UnknownDatasetError

    _check_text(name, ("name",))
    check_public_name(name, source)
    existing = session.scalars(select(Dataset).where(Dataset.name == name)).one_or_none()
    if existing is not None:
        if existing.source != source or existing.team_id is not None:
            raise _name_taken(existing, team_id)
        return existing, False
    if source["kind"] == "synthetic":
        n, d, nnz = synthetic_shape(source)
        dataset = Dataset(name=name, source=source, n_samples=n, n_features=d, nnz=nnz)
    else:
        try:
            dataset = _public_dataset(source, name)
        except UnknownDatasetError as err:
            raise SpecError(("source", "name"), str(err)) from None
    check_source(source, caps)
    added = _add_dataset(session, dataset)
    return added, added is dataset


def store_upload(stream: BinaryIO, filename: str, settings: Settings) -> tuple[Path, str]:
    """Receive an upload into the upload folder: (temporary path, sha256), see
    :func:`faceoff.core.uploads.receive` (UploadTooLarge past the settings' limits)."""
    return uploads.receive(
        stream,
        settings.upload_dir,
        filename,
        settings.MAX_UPLOAD_BYTES,
        settings.MAX_UPLOAD_DECOMPRESSED_BYTES,
    )


def register_upload(
    session: Session,
    name: str,
    filename: str,
    path: Path,
    sha256: str,
    n_features: int | None,
    *,
    team_id: int | None,
    caps: Caps,
) -> tuple[Dataset, bool]:
    """Parse the uploaded svmlight file at ``path`` and register it as ``name``, private to
    the team ``team_id``.

    The file is validated first (SpecError ``FILENAME: line N: problem`` at ``("file",)``,
    DatasetTooLarge over ``caps``; the temporary file is removed); a valid file is kept as
    ``<sha256>.svm`` next to ``path``. Returns (dataset, created) as :func:`register_dataset`.
    """
    try:
        _check_text(name, ("name",))
        source = {"kind": "upload", "file": f"{sha256}.svm", "n_features": n_features}
        check_public_name(name, source)
        A = uploads.parse(path, filename, n_features, caps)
        existing = session.scalars(select(Dataset).where(Dataset.name == name)).one_or_none()
        if existing is not None and (
            existing.source != source or existing.team_id not in (None, team_id)
        ):
            raise _name_taken(existing, team_id)
        path.replace(path.parent / source["file"])
    finally:
        path.unlink(missing_ok=True)
    if existing is not None:
        return existing, False
    n, d = A.shape
    dataset = Dataset(
        name=name,
        source=source,
        n_samples=n,
        n_features=d,
        nnz=int(A.nnz),
        sha256=sha256,
        team_id=team_id,
    )
    added = _add_dataset(session, dataset)
    return added, added is dataset


def dataset_statistics(
    session: Session,
    dataset: Dataset,
    settings: Settings,
    loss: str,
    l2: float,
    gamma: float = 1.0,
    normalize: str = "none",
) -> dict[str, Any]:
    """``{"stats": data.stats.dataset_stats, "advice": data.stats.advise}`` of a dataset.

    The statistics of the untransformed data are cached in ``Dataset.stats`` (and fill in
    its shape); the advice depends on the loss and l2 and is computed each time. Raises
    DatasetError or ValueError when the data cannot be loaded or exceeds the caps. Memory is
    O(nnz + n_samples) beyond the matrix, whatever its declared number of features.
    """
    from faceoff.core.datasets import load_matrix
    from faceoff.data.stats import advise, dataset_stats
    from faceoff.data.transforms import normalize as transform

    A, b = load_matrix(dataset.source, settings.upload_dir, Caps.of(settings))
    A = transform(A, normalize)
    if normalize != "none":
        stats = json_safe(dataset_stats(A, b))
    elif dataset.stats is None:
        stats = json_safe(dataset_stats(A, b))
        dataset.stats = stats
        dataset.n_samples, dataset.n_features, dataset.nnz = stats["n"], stats["d"], stats["nnz"]
        session.commit()
    else:
        stats = dataset.stats
    advice = json_safe(advise(A, smoothness(loss, gamma), l2))
    return {"stats": stats, "advice": {"loss": loss, "gamma": gamma, **advice}}


# ---------------------------------------------------------------- jobs


def _check_limits(stop: StopSpec, settings: Settings) -> None:
    if stop.max_seconds > settings.MAX_JOB_SECONDS:
        raise SpecError(
            ("stop", "max_seconds"),
            f"max_seconds {stop.max_seconds:g} exceeds this server's limit of "
            f"{settings.MAX_JOB_SECONDS:g} seconds",
        )


def check_job_memory(
    spec: JobSpec, shape: tuple[int, int, int], settings: Settings, loc: tuple = ()
) -> None:
    """SpecError when the job's working memory on a dataset of ``shape`` (n, d, nnz)
    exceeds ``MAX_JOB_BYTES``; the worker checks again with the loaded matrix."""
    solver = CATALOGUE[spec.solver]
    n, d, nnz = shape
    needed = solver.working_bytes(n, d, nnz, spec.params, spec.penalty)
    if needed <= settings.MAX_JOB_BYTES:
        return
    where = ("params",) if solver.extra_memory else ("dataset",)
    raise SpecError(
        (*loc, *where),
        f"{spec.solver} on a {n} × {d} dataset with {nnz} non-zeros and parameters "
        f"{spec.params} needs about {needed / 2**30:.1f} GiB, more than this server's limit "
        f"of {settings.MAX_JOB_BYTES / 2**30:.1f} GiB per job (FACEOFF_MAX_JOB_BYTES)",
    )


def _shape(dataset: Dataset) -> tuple[int, int, int]:
    return dataset.n_samples or 0, dataset.n_features or 0, dataset.nnz or 0


def _reusable(session: Session, digest: str, team_id: int | None) -> Job | None:
    query = select(Job).where(
        Job.spec_hash == digest, Job.status.in_(REUSABLE), owned_by(Job.team_id, team_id)
    )
    return session.scalars(query.order_by(Job.id.desc()).limit(1)).first()


def _new_job(
    spec: JobSpec, digest: str, dataset: Dataset, team_id: int | None, sweep: Sweep | None = None
) -> Job:
    return Job(
        team_id=team_id,
        sweep=sweep,
        dataset=dataset,
        spec=spec.model_dump(mode="json"),
        spec_hash=digest,
        objective_hash=objective_hash(spec),
        solver=spec.solver,
        loss=spec.loss,
        status=QUEUED,
        cancel_requested=False,
        attempts=0,
        n_points=0,
    )


def submit_job(
    session: Session,
    spec: JobSpec,
    settings: Settings,
    force: bool = False,
    *,
    team_id: int | None,
) -> tuple[Job, bool]:
    """(job, created): a new queued job of the team, or its identical reusable one (see
    module doc: deduplication is within a team).

    Validates against the catalogue and the server limits (SpecError). The caller commits
    and then enqueues a created job.
    """
    spec = canonical_job(spec)
    _check_limits(spec.stop, settings)
    caps = Caps.of(settings)
    dataset = resolve_dataset(session, spec.dataset, ("dataset",), team_id=team_id, caps=caps)
    check_job_memory(spec, _shape(dataset), settings)
    digest = spec_hash(spec)
    if not force and (existing := _reusable(session, digest, team_id)) is not None:
        return existing, False
    job = _new_job(spec, digest, dataset, team_id)
    session.add(job)
    session.flush()
    return job, True


def _sweep_key(spec: SweepSpec) -> str:
    return json.dumps(spec.model_dump(mode="json"), sort_keys=True)


def submit_sweep(
    session: Session,
    spec: SweepSpec,
    settings: Settings,
    force: bool = False,
    *,
    team_id: int | None,
) -> tuple[Sweep, list[Job], bool]:
    """(sweep, new jobs to enqueue, whether the sweep is new), owned by the team.

    Refuses sweeps above ``MAX_SWEEP_JOBS`` before expanding them; deduplicates within the
    team as in the module doc. The caller commits, then enqueues the new jobs.
    """
    size = sweep_size(spec)
    if size > settings.MAX_SWEEP_JOBS:
        raise SpecError(
            (),
            f"the sweep expands to {size} jobs, more than this server's limit of "
            f"{settings.MAX_SWEEP_JOBS}; split it into smaller sweeps",
        )
    if spec.name is not None:
        _check_text(spec.name, ("name",))
    _check_limits(spec.stop, settings)
    caps = Caps.of(settings)
    specs = expand_sweep(spec)
    key = _sweep_key(spec)
    if not force:
        query = select(Sweep).where(Sweep.n_jobs == size, owned_by(Sweep.team_id, team_id))
        for existing in session.scalars(query):
            if json.dumps(existing.spec, sort_keys=True) == key:
                return existing, [], False
    datasets = {
        name: resolve_dataset(session, name, ("datasets", i), team_id=team_id, caps=caps)
        for i, name in enumerate(spec.datasets)
    }
    for job_spec in specs:
        check_job_memory(job_spec, _shape(datasets[job_spec.dataset]), settings, ("solvers",))
    digests = [spec_hash(job_spec) for job_spec in specs]
    standalone: dict[str, Job] = {}
    if not force:
        query = select(Job).where(
            Job.spec_hash.in_(set(digests)),
            Job.status.in_(REUSABLE),
            Job.sweep_id.is_(None),
            owned_by(Job.team_id, team_id),
        )
        for job in session.scalars(query.order_by(Job.id)):
            standalone[job.spec_hash] = job
    sweep = Sweep(name=spec.name, spec=spec.model_dump(mode="json"), n_jobs=size, team_id=team_id)
    session.add(sweep)
    created = []
    for job_spec, digest in zip(specs, digests, strict=True):
        if (existing := standalone.pop(digest, None)) is not None:
            existing.sweep = sweep
            continue
        job = _new_job(job_spec, digest, datasets[job_spec.dataset], team_id, sweep)
        session.add(job)
        created.append(job)
    session.flush()
    return sweep, created, True


def enqueue_new(jobs: Sequence[Job], settings: Settings) -> None:
    """Send committed new jobs to the broker (``worker.run_job``).

    A job that is not sent — the broker cannot be reached, or this process dies before
    sending — stays queued: a worker's reaper sends it once it has waited
    ``DISPATCH_TIMEOUT_SECONDS`` with the broker's queue empty (worker.reaper). So the
    submission succeeds either way, and resubmitting it returns the same queued job.
    """
    from faceoff.core.queue import enqueue

    for index, job in enumerate(jobs):
        try:
            enqueue(job.id, settings, max_seconds=job.spec["stop"]["max_seconds"])
        except Exception as err:
            log.warning(
                "%d jobs from %d on not sent to the broker (%s: %s); a worker's reaper sends "
                "them later",
                len(jobs) - index,
                job.id,
                type(err).__name__,
                err,
            )
            return


def get_job(session: Session, job_id: int, *, team_id: int | None) -> Job:
    """A job of the team (NotFoundError for another team's: its existence is not told)."""
    query = select(Job).where(Job.id == job_id, owned_by(Job.team_id, team_id))
    job = session.scalars(query).one_or_none()
    if job is None:
        raise NotFoundError(f"job {job_id} not found")
    return job


@dataclass(frozen=True)
class JobFilter:
    """Filters of :func:`list_jobs`; None means any."""

    status: str | None = None
    sweep_id: int | None = None
    solver: str | None = None
    dataset: str | None = None
    loss: str | None = None


def list_jobs(
    session: Session, where: JobFilter, limit: int, offset: int, *, team_id: int | None
) -> tuple[list[Job], int]:
    """The team's matching jobs, newest first, and how many match in all."""
    query = select(Job).where(owned_by(Job.team_id, team_id))
    if where.status is not None:
        query = query.where(Job.status == where.status)
    if where.sweep_id is not None:
        query = query.where(Job.sweep_id == where.sweep_id)
    if where.solver is not None:
        query = query.where(Job.solver == where.solver)
    if where.loss is not None:
        query = query.where(Job.loss == where.loss)
    if where.dataset is not None:
        query = query.join(Job.dataset).where(Dataset.name == where.dataset)
    count = session.scalar(select(func.count()).select_from(query.subquery()))
    rows = session.scalars(query.order_by(Job.id.desc()).limit(limit).offset(offset))
    return list(rows), int(count or 0)


def cancel_job(session: Session, job_id: int, *, team_id: int | None) -> Job:
    """Request cancellation of a job of the team: a queued job is cancelled at once, a
    running one is flagged (the worker stops it between chunks); ConflictError for a
    finished job. Commits."""
    job = get_job(session, job_id, team_id=team_id)
    cancelled = (
        session.execute(
            update(Job)
            .where(Job.id == job_id, Job.status == QUEUED)
            .values(
                status=CANCELLED,
                cancel_requested=True,
                stop_reason="cancelled",
                finished_at=utcnow(),
            )
        ).rowcount
        or session.execute(
            update(Job).where(Job.id == job_id, Job.status == RUNNING).values(cancel_requested=True)
        ).rowcount
    )
    session.commit()
    session.refresh(job)
    if not cancelled:
        raise ConflictError(
            f"job {job_id} has already finished (status {job.status}); only queued or "
            "running jobs can be cancelled"
        )
    return job


def get_trace(
    session: Session,
    job_id: int,
    after_seq: int = -1,
    max_points: int | None = None,
    *,
    team_id: int | None,
) -> list[TracePoint]:
    """The job's trace points with ``seq > after_seq``, in order.

    With ``max_points``, at most that many, evenly spaced in log(epoch) (as the trace grid
    itself is), always keeping the first and the last point; evenly spaced in seq when the
    epochs do not increase (e.g. a single positive epoch).
    """
    get_job(session, job_id, team_id=team_id)
    points = list(
        session.scalars(
            select(TracePoint)
            .where(TracePoint.job_id == job_id, TracePoint.seq > after_seq)
            .order_by(TracePoint.seq)
        )
    )
    if max_points is None or len(points) <= max_points:
        return points
    return [points[i] for i in downsample([p.epoch for p in points], max_points)]


def downsample(epochs: Sequence[float], count: int) -> list[int]:
    """Indices of at most ``count`` of ``epochs`` (nondecreasing), evenly spaced in
    log(epoch), with the first and the last."""
    n = len(epochs)
    if n <= count:
        return list(range(n))
    if count <= 2:
        return [0, n - 1][:count] if count else []
    values = np.maximum.accumulate(np.asarray(epochs, dtype=float))
    positive = values[values > 0]
    if positive.size < 2 or not positive[0] < values[-1]:
        return sorted(set(np.linspace(0, n - 1, count).round().astype(int).tolist()))
    targets = np.geomspace(positive[0], values[-1], count - 1)
    chosen = np.searchsorted(values, targets, side="left")
    return sorted({0, n - 1, *np.minimum(chosen, n - 1).tolist()})


# ---------------------------------------------------------------- sweeps


def get_sweep(session: Session, sweep_id: int, *, team_id: int | None) -> Sweep:
    query = select(Sweep).where(Sweep.id == sweep_id, owned_by(Sweep.team_id, team_id))
    sweep = session.scalars(query).one_or_none()
    if sweep is None:
        raise NotFoundError(f"sweep {sweep_id} not found")
    return sweep


def list_sweeps(
    session: Session, limit: int, offset: int, *, team_id: int | None
) -> tuple[list[Sweep], int]:
    query = select(Sweep).where(owned_by(Sweep.team_id, team_id))
    count = session.scalar(select(func.count()).select_from(query.subquery()))
    rows = session.scalars(query.order_by(Sweep.id.desc()).limit(limit).offset(offset))
    return list(rows), int(count or 0)


def sweep_progress(session: Session, sweep_ids: Iterable[int]) -> dict[int, dict[str, int]]:
    """{sweep id: {status: number of its jobs}} with every status present."""
    ids = list(sweep_ids)
    out = {i: dict.fromkeys(STATUSES, 0) for i in ids}
    rows = session.execute(
        select(Job.sweep_id, Job.status, func.count())
        .where(Job.sweep_id.in_(ids))
        .group_by(Job.sweep_id, Job.status)
    )
    for sweep_id, status, count in rows:
        out[sweep_id][status] = int(count)
    return out


def job_counts(session: Session) -> dict[str, int]:
    """{status: number of jobs} with every status present."""
    out = dict.fromkeys(STATUSES, 0)
    for status, count in session.execute(select(Job.status, func.count()).group_by(Job.status)):
        out[status] = int(count)
    return out


# ---------------------------------------------------------------- references


def reference_job_spec(
    objective: ObjectiveSpec, solver: str, max_seconds: float, max_epochs: float
) -> JobSpec:
    """The high-precision job that certifies P* of ``objective``."""
    return JobSpec(
        **objective.model_dump(),
        solver=solver,
        stop={"tol": 1e-13, "max_seconds": max_seconds, "max_epochs": max_epochs},
    )


def get_reference(session: Session, digest: str) -> Reference:
    """The reference of a content-keyed objective hash (a job's ``objective_hash`` once a
    worker has run it)."""
    reference = session.scalars(
        select(Reference).where(Reference.objective_hash == digest)
    ).one_or_none()
    if reference is None:
        raise NotFoundError(
            f"no reference optimum for objective {digest}; a job's objective_hash keys its "
            "reference once a worker has run the job (it then hashes the job's data), and "
            "POST /api/v1/references computes one"
        )
    return reference


def _better(primal: float, gap: float, reference: Reference) -> bool:
    if gap < reference.gap:
        return True
    return gap <= REFERENCE_RTOL * max(1.0, abs(primal)) and primal < reference.primal


def reference_objective(job: Job) -> tuple[str, dict[str, Any]]:
    """(content key, description) of the objective a job with ``data_hash`` solved.

    The description names the dataset only if it is shared with every team: a reference is
    read by everyone, and must not tell another team's private dataset names.
    """
    spec = job.spec
    identity = content_objective(job.data_hash, spec["loss"], spec["gamma"], spec["l1"], spec["l2"])
    key = objective_key(identity)
    described = {**identity, "normalize": spec["normalize"], "positive": spec["positive"]}
    if job.dataset.team_id is None:
        described["dataset"] = job.dataset.name
    return key, described


def record_reference(session: Session, job: Job) -> Reference | None:
    """Keep P* of the job's objective if this succeeded job certifies it better.

    The objective is keyed by content (core.objectives): the digest of the data the worker
    solved on (``job.data_hash``), the loss and the weights; a job without a digest records
    nothing. Better: a smaller final gap, or a gap ≤ 1e-9·max(1, |P|) and a lower P.
    Upserts the Reference (flushes; the caller commits) and returns it, or None when the
    job does not improve it. The worker calls this when a job succeeds.
    """
    primal, gap = job.primal, job.gap
    if job.status != SUCCEEDED or primal is None or gap is None or job.data_hash is None:
        return None
    if not (math.isfinite(primal) and math.isfinite(gap)) or gap < 0:
        return None
    key, objective = reference_objective(job)
    for _ in range(2):  # a concurrent insert of the same objective: retry as an update
        reference = session.scalars(
            select(Reference).where(Reference.objective_hash == key)
        ).one_or_none()
        if reference is not None:
            if not _better(primal, gap, reference):
                return None
            reference.primal, reference.gap, reference.job_id = primal, gap, job.id
            reference.objective, reference.created_at = objective, utcnow()
            session.flush()
            return reference
        reference = Reference(
            objective_hash=key, objective=objective, primal=primal, gap=gap, job_id=job.id
        )
        try:
            with session.begin_nested():
                session.add(reference)
        except IntegrityError:
            continue
        return reference
    return None
