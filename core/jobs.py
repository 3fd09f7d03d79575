"""Jobs: submitting, reading, listing and cancelling them, and their traces.

Deduplication. A job whose canonical spec (:func:`faceoff.core.specs.spec_hash`) equals that of an
earlier job of the same team that is queued, running or succeeded is not run again:
:func:`submit_job` returns the earlier job (``created=False``) unless ``force``. Failed and
cancelled jobs are never reused, so resubmitting them runs them again. Sweeps
(:mod:`faceoff.core.sweeps`) own their jobs.

Status changes go through :mod:`faceoff.core.lifecycle`; like it, the functions here that
write never commit: the caller (an API route) commits.

Pinning and quotas. A job pinned to a host (``host``) is refused unless a live worker serves
that host (:func:`check_host`, GET /health's ``worker_hosts``), or the request says
``wait_for_host``: the job then records the host it waits for (``Job.waiting``: "waiting for
host H" until a worker there takes it). A team may have at most ``TEAM_MAX_QUEUED_JOBS``
queued jobs and ``TEAM_MAX_OPEN_SWEEPS`` sweeps with a queued or running job
(:func:`check_quotas`, QuotaExceeded: 429). A cancelled queued job's messages are removed
from the broker (:func:`withdraw_cancelled`), so cancelling leaves nothing there.

Traces. The API's ``GET /jobs/{id}/trace`` and the dashboard read trace points through
:func:`get_trace` and :func:`trace_columns`, which keep the same points for the same
``max_points`` (:func:`downsample`: log-spaced in epochs, first and last kept).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
from sqlalchemy import ARRAY, ColumnElement, Integer, Row, any_, bindparam, func, select
from sqlalchemy.orm import Session

from faceoff.core.auth import owned_by
from faceoff.core.datasets import Caps, check_test_split, resolve_dataset
from faceoff.core.db import one_or_not_found, page
from faceoff.core.errors import ConflictError, QuotaExceeded
from faceoff.core.health import job_capacity, live_hosts
from faceoff.core.labels import check_labels
from faceoff.core.lifecycle import INITIAL, Event, apply
from faceoff.core.models import (
    CANCELLED,
    QUEUED,
    RUNNING,
    STATUSES,
    SUCCEEDED,
    TERMINAL,
    Dataset,
    Job,
    JobCoefficients,
    Sweep,
    TracePoint,
)
from faceoff.core.queue import enqueue, withdraw
from faceoff.core.settings import Settings
from faceoff.core.specs import (
    JobSpec,
    SpecError,
    StopSpec,
    canonical_job,
    dump_spec,
    objective_hash,
    spec_hash,
)
from faceoff.core.workers import unavailable_everywhere
from faceoff.solvers.catalogue import get_spec
from faceoff.solvers.spec import MemoryEstimateError

log = logging.getLogger(__name__)

REUSABLE = (QUEUED, RUNNING, SUCCEEDED)
QUOTA_LOCK = 0x0F0A_0030  # PostgreSQL advisory lock class of a team's submissions
# a trace of more than LONG_TRACE × max_points points is downsampled from its epochs first
# (get_trace, trace_columns): the kept points are then read whole; a shorter one is read whole
LONG_TRACE = 4

# the columns of a trace point that trace_columns can read
TRACE_COLUMNS = ("seq", "iteration", "epoch", "time_s", "primal", "dual", "gap", "nnz_x")
# and the items of a point's extras it can read, by name (None where a point has none):
# "test", the held-out metrics of a job with a test split (solvers.heldout)
TRACE_EXTRAS = ("test",)
Item = TypeVar("Item")


# ---------------------------------------------------------------- submitting


def check_stop_limits(stop: StopSpec, settings: Settings) -> None:
    """SpecError when the stop rules exceed this server's ``MAX_JOB_SECONDS``."""
    if stop.max_seconds > settings.MAX_JOB_SECONDS:
        raise SpecError(
            ("stop", "max_seconds"),
            f"max_seconds {stop.max_seconds:g} exceeds this server's limit of "
            f"{settings.MAX_JOB_SECONDS:g} seconds",
        )


def check_job_memory(
    spec: JobSpec,
    shape: tuple[int, int, int],
    settings: Settings,
    loc: tuple[str, ...] = (),
    classes: int = 1,
    capacity: dict | None = None,
    held_out_bytes: int = 0,
) -> None:
    """SpecError when the job's working memory on a dataset of ``shape`` (n, d, nnz), with
    ``classes`` columns of X (K of a K-class objective), an upper bound
    (SolverSpec.working_bytes), and ``held_out_bytes`` of its test set
    (solvers.heldout.HeldOut.nbytes), exceeds ``MAX_JOB_BYTES`` or what a job of a worker may
    take: ``capacity`` (a worker's record: core.health.record_capacity), by default the
    live worker with the most (of the job's host if pinned; none known: MAX_JOB_BYTES
    alone). The worker checks again with the loaded matrix and its own capacity."""
    solver = get_spec(spec.solver)
    n, d, nnz = shape
    params = solver.load_params(spec.params)
    try:
        needed = solver.working_bytes(n, d, nnz, params, spec.penalty, classes) + held_out_bytes
    except MemoryEstimateError as err:
        raise SpecError(
            loc or ("solver",),
            f"{err}; its jobs cannot be admitted until the plug-in is fixed — choose "
            f"another solver",
        ) from None
    if capacity is None:
        capacity = job_capacity(settings, spec.host)

    def fits(size: float) -> bool:
        return size <= settings.MAX_JOB_BYTES and (
            capacity is None or size <= capacity["job_bytes"]
        )

    if fits(needed):
        return
    where = ("params",) if solver.extra_memory else ("dataset",)
    besides = ""
    if classes > 1:
        where = where if solver.extra_memory else ("multiclass",)
        besides = f" and {classes} classes (X is {d} features × {classes} classes)"
    if held_out_bytes:
        where = ("test",) if fits(needed - held_out_bytes) else where  # it fits without
        besides += f", a held-out set of {held_out_bytes} bytes"
    if capacity is not None and capacity["job_bytes"] < settings.MAX_JOB_BYTES:
        limit = (
            f"what a job of any live worker may take: at most {capacity['job_bytes']} bytes "
            f"({capacity['job_bytes'] / 2**30:.2f} GiB) on host {capacity['host']!r}, its "
            f"{capacity['memory_bytes']} bytes of memory less a 1 GiB baseline, ÷ "
            f"{capacity['concurrency']} jobs at once (GET /api/v1/health: worker_memory)"
        )
    else:
        limit = (
            f"this server's limit of {settings.MAX_JOB_BYTES} bytes "
            f"({settings.MAX_JOB_BYTES / 2**30:.1f} GiB) per job (FACEOFF_MAX_JOB_BYTES)"
        )
    raise SpecError(
        (*loc, *where),
        f"{spec.solver} on a {n} × {d} dataset with {nnz} non-zeros{besides} and parameters "
        f"{spec.params} needs up to {needed:.0f} bytes ({needed / 2**30:.2f} GiB) of working "
        f"memory, more than {limit}",
    )


def check_host(
    host: str | None, wait_for_host: bool, settings: Settings, loc: tuple[str, ...] = ("host",)
) -> str | None:
    """The host a job pinned to ``host`` must wait for: None when it is pinned to no host or
    to one a live worker serves (GET /health's ``worker_hosts``, core.health.live_hosts);
    ``host`` with ``wait_for_host``; otherwise SpecError at ``loc`` naming the host and the
    live ones."""
    if host is None:
        return None
    hosts = live_hosts(settings, host)
    if host in hosts:
        return None
    if wait_for_host:
        return host
    raise SpecError(
        loc,
        f"no live worker serves host {host!r}; live hosts: {', '.join(hosts) or 'none'} "
        "(GET /api/v1/health: worker_hosts). Pin to one of them, or set wait_for_host to "
        "true to queue it until a worker starts there",
    )


def check_runnable(solver: str, settings: Settings, loc: tuple[str | int, ...] = ()) -> None:
    """SpecError at ``loc`` + solver when no live worker can run ``solver`` (each one's
    warm-up of it failed, or the plug-in is not installed there: core.workers), naming
    each worker's host and reason."""
    reason = unavailable_everywhere(solver, settings)
    if reason is not None:
        raise SpecError((*loc, "solver"), reason)


def check_quotas(
    session: Session, settings: Settings, team_id: int | None, jobs: int, sweeps: int = 0
) -> None:
    """QuotaExceeded when ``jobs`` more queued jobs, or ``sweeps`` more open sweeps (with a
    queued or running job), would take the team past ``TEAM_MAX_QUEUED_JOBS`` or
    ``TEAM_MAX_OPEN_SWEEPS``. On PostgreSQL the team's submissions are serialized until the
    caller commits (an advisory lock), so concurrent ones cannot pass a quota together."""
    if session.get_bind().dialect.name == "postgresql":
        session.execute(select(func.pg_advisory_xact_lock(QUOTA_LOCK, team_id or 0)))
    mine = owned_by(Job.team_id, team_id)
    retry = settings.QUOTA_RETRY_AFTER_SECONDS
    if sweeps:
        active = Job.status.in_((QUEUED, RUNNING))
        query = select(func.count(Job.sweep_id.distinct())).where(Job.sweep_id.is_not(None))
        open_sweeps = session.scalar(query.where(active, mine)) or 0
        if open_sweeps + sweeps > settings.TEAM_MAX_OPEN_SWEEPS:
            raise QuotaExceeded(
                f"your team has {open_sweeps} sweeps with queued or running jobs, its quota "
                f"(FACEOFF_TEAM_MAX_OPEN_SWEEPS = {settings.TEAM_MAX_OPEN_SWEEPS}); wait for "
                "one to finish, or cancel its jobs",
                retry,
            )
    queued = session.scalar(select(func.count()).where(Job.status == QUEUED, mine)) or 0
    if queued + jobs > settings.TEAM_MAX_QUEUED_JOBS:
        raise QuotaExceeded(
            f"your team has {queued} queued jobs and this would add {jobs}, more than its "
            f"quota of {settings.TEAM_MAX_QUEUED_JOBS} (FACEOFF_TEAM_MAX_QUEUED_JOBS); wait for "
            "some to run, or cancel some",
            retry,
        )


def dataset_shape(dataset: Dataset) -> tuple[int, int, int]:
    """(n_samples, n_features, nnz) of a registered dataset, 0 where not known."""
    return dataset.n_samples or 0, dataset.n_features or 0, dataset.nnz or 0


def _reusable(session: Session, digest: str, team_id: int | None) -> Job | None:
    query = select(Job).where(
        Job.spec_hash == digest, Job.status.in_(REUSABLE), owned_by(Job.team_id, team_id)
    )
    return session.scalars(query.order_by(Job.id.desc()).limit(1)).first()


def new_job(
    spec: JobSpec,
    digest: str,
    dataset: Dataset,
    team_id: int | None,
    sweep: Sweep | None = None,
    waiting_for_host: str | None = None,
) -> Job:
    """A queued job of the canonical ``spec`` (``digest``: its spec hash), not yet added;
    ``waiting_for_host``: as :func:`check_host` says."""
    return Job(
        team_id=team_id,
        sweep=sweep,
        dataset=dataset,
        spec=dump_spec(spec),
        spec_hash=digest,
        objective_hash=objective_hash(spec),
        solver=spec.solver,
        loss=spec.loss,
        status=INITIAL,
        cancel_requested=False,
        attempts=0,
        n_points=0,
        pinned_host=spec.host,
        waiting_for_host=waiting_for_host,
    )


def submit_job(
    session: Session,
    spec: JobSpec,
    settings: Settings,
    force: bool = False,
    *,
    team_id: int | None,
    wait_for_host: bool = False,
) -> tuple[Job, bool]:
    """(job, created): a new queued job of the team, or its identical reusable one (see
    module doc: deduplication is within a team).

    Validates against the catalogue and the server limits (SpecError), the pinned host
    (:func:`check_host`) and the team's quotas (QuotaExceeded). The caller commits and then
    enqueues a created job.
    """
    spec = canonical_job(spec)
    check_stop_limits(spec.stop, settings)
    waiting = check_host(spec.host, wait_for_host, settings)
    check_runnable(spec.solver, settings)
    caps = Caps.of(settings)
    dataset = resolve_dataset(session, spec.dataset, ("dataset",), team_id=team_id, caps=caps)
    check_test_split(session, dataset, spec.test, caps, ("test",), team_id=team_id)
    classes = check_labels(dataset, spec, settings.MAX_CLASSES)
    check_job_memory(spec, dataset_shape(dataset), settings, classes=classes)
    digest = spec_hash(spec)
    if not force and (existing := _reusable(session, digest, team_id)) is not None:
        return existing, False
    check_quotas(session, settings, team_id, jobs=1)
    job = new_job(spec, digest, dataset, team_id, waiting_for_host=waiting)
    session.add(job)
    session.flush()
    return job, True


def enqueue_new(jobs: Sequence[Job], settings: Settings) -> None:
    """Send committed new jobs to the broker (``worker.run_job``).

    A job that is not sent — the broker cannot be reached, or this process dies before
    sending — stays queued: a worker's reaper sends it once it has waited
    ``DISPATCH_TIMEOUT_SECONDS`` with the broker's queue empty (worker.reaper). So the
    submission succeeds either way, and resubmitting it returns the same queued job.
    """
    for index, job in enumerate(jobs):
        try:
            enqueue(job.id, settings, job.spec["stop"]["max_seconds"], job.pinned_host)
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


# ---------------------------------------------------------------- reading


def get_job(session: Session, job_id: int, *, team_id: int | None) -> Job:
    """A job of the team (NotFoundError for another team's: its existence is not told)."""
    query = select(Job).where(Job.id == job_id, owned_by(Job.team_id, team_id))
    return one_or_not_found(session, query, f"job {job_id} not found")


@dataclass(frozen=True)
class JobFilter:
    """Filters of :func:`list_jobs`; None means any."""

    status: str | None = None
    sweep_id: int | None = None
    solver: str | None = None
    dataset: str | None = None  # the dataset's name
    loss: str | None = None
    dataset_id: int | None = None
    job_ids: tuple[int, ...] | None = None
    sweep_ids: tuple[int, ...] | None = None  # any of these sweeps
    dataset_ids: tuple[int, ...] | None = None
    statuses: tuple[str, ...] | None = None


def _matching(where: JobFilter, team_id: int | None) -> list[ColumnElement[bool]]:
    """The conditions of ``where`` on the team's jobs (its ``dataset`` is on Dataset.name:
    the query joins Job.dataset)."""
    conditions = [owned_by(Job.team_id, team_id)]
    for column, value in (
        (Job.status, where.status),
        (Job.sweep_id, where.sweep_id),
        (Job.solver, where.solver),
        (Job.loss, where.loss),
        (Job.dataset_id, where.dataset_id),
        (Dataset.name, where.dataset),
    ):
        if value is not None:
            conditions.append(column == value)
    for column, values in (
        (Job.id, where.job_ids),
        (Job.sweep_id, where.sweep_ids),
        (Job.dataset_id, where.dataset_ids),
        (Job.status, where.statuses),
    ):
        if values is not None:
            conditions.append(column.in_(values))
    return conditions


def list_jobs(
    session: Session,
    where: JobFilter,
    limit: int | None,
    offset: int = 0,
    *,
    team_id: int | None,
) -> tuple[list[Job], int]:
    """The team's matching jobs, newest first (``limit`` None: all), and how many match in
    all."""
    query = select(Job)
    if where.dataset is not None:
        query = query.join(Job.dataset)
    query = query.where(*_matching(where, team_id)).order_by(Job.id.desc())
    return page(session, query, limit, offset, key=Job.id)


# What the dashboard's tables and figures read of a job (job_records), and of its dataset
JobRecord = Row[Any]
RECORD_COLUMNS = (
    Job.id,
    Job.sweep_id,
    Job.dataset_id,
    Job.solver,
    Job.spec,
    Job.auto,
    Job.loss,
    Job.objective_hash,
    Job.status,
    Job.waiting_for_host,
    Job.stop_reason,
    Job.n_points,
    Job.epoch,
    Job.time_s,
    Job.primal,
    Job.gap,
    Job.trace_mode,
    Job.wall_s,
    Job.machine,
    Job.concurrency,
    Job.concurrency_max,
    Job.load_start,
    Job.load_end,
    Job.created_at,
    Dataset.name.label("dataset"),
    Dataset.labels.label("dataset_labels"),
)


def job_records(
    session: Session,
    where: JobFilter,
    limit: int | None,
    offset: int = 0,
    *,
    team_id: int | None,
) -> tuple[list[JobRecord], int]:
    """:func:`list_jobs` as rows of :data:`RECORD_COLUMNS` (its dataset's ``dataset`` name
    and ``dataset_labels`` beside the job's columns) instead of Job objects: one query of
    the columns the dashboard reads, without building ORM objects or loading each job's
    dataset (the pages read thousands of jobs)."""
    query = select(*RECORD_COLUMNS).join(Job.dataset).where(*_matching(where, team_id))
    return page(session, query.order_by(Job.id.desc()), limit, offset, columns=True, key=Job.id)


def job_facets(session: Session, *, team_id: int | None) -> dict[str, list[str]]:
    """The distinct ``solver``, ``loss`` and ``status`` values of the team's jobs, sorted."""
    columns = {"solver": Job.solver, "loss": Job.loss, "status": Job.status}
    return {
        name: sorted(
            session.scalars(select(column).where(owned_by(Job.team_id, team_id)).distinct())
        )
        for name, column in columns.items()
    }


def job_counts(session: Session) -> dict[str, int]:
    """{status: number of jobs} of every team, with every status present."""
    out = dict.fromkeys(STATUSES, 0)
    for status, count in session.execute(select(Job.status, func.count()).group_by(Job.status)):
        out[status] = int(count)
    return out


def cancel_job(session: Session, job_id: int, *, team_id: int | None) -> Job:
    """Request cancellation of a job of the team: a queued job is cancelled at once, a
    running one is flagged (the worker stops it between chunks); ConflictError for a
    finished job. The caller commits."""
    job = get_job(session, job_id, team_id=team_id)
    cancelled = apply(session, job_id, Event.CANCEL)
    session.refresh(job)
    if not cancelled:
        raise ConflictError(
            f"job {job_id} has already finished (status {job.status}); only queued or "
            "running jobs can be cancelled"
        )
    return job


def withdraw_cancelled(job: Job, settings: Settings) -> None:
    """Remove a committed cancelled job's messages from the broker (core.queue.withdraw),
    and its host's queue once empty: nothing of it is left there. A broker that cannot be
    reached is logged: a worker that takes the message later skips it (its claim finds the
    job cancelled)."""
    if job.status != CANCELLED:
        return
    try:
        withdraw(job.id, settings, job.pinned_host)
    except Exception as err:  # noqa: BLE001 — the cancel stands whatever the broker says
        log.warning(
            "job %d: its messages could not be removed from the broker (%s: %s)",
            job.id,
            type(err).__name__,
            err,
        )


# ---------------------------------------------------------------- traces


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


def _thin(items: list[Item], epochs: Sequence[float], max_points: int | None) -> list[Item]:
    """``items`` (a trace in seq order, ``epochs`` theirs), at most ``max_points`` of them
    chosen by :func:`downsample` (None: all)."""
    if max_points is None or len(items) <= max_points:
        return items
    return [items[i] for i in downsample(epochs, max_points)]


def trace_points(
    session: Session, job: Job, after_seq: int = -1, *, limit: int | None = None
) -> list[TracePoint]:
    """The first ``limit`` (None: all) trace points of ``job`` with ``seq > after_seq``, in
    order. ``job`` comes from :func:`get_job` or :func:`list_jobs` (the team's)."""
    query = select(TracePoint).where(TracePoint.job_id == job.id, TracePoint.seq > after_seq)
    return list(session.scalars(query.order_by(TracePoint.seq).limit(limit)))


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
    job = get_job(session, job_id, team_id=team_id)
    if max_points is not None and _long(job.n_points - (after_seq + 1), max_points):
        seqs = _kept_seqs(session, job.id, after_seq, max_points)
        query = select(TracePoint).where(TracePoint.job_id == job.id, _seq_in(session, seqs))
        points = list(session.scalars(query.order_by(TracePoint.seq)))
    else:
        points = trace_points(session, job, after_seq)
    return _thin(points, [p.epoch for p in points], max_points)


def get_coefficients(session: Session, job_id: int, *, team_id: int | None) -> JobCoefficients:
    """The final iterate of a finished job of the team (its ``data``: float64 bytes, the
    only copy read). NotFoundError for another team's job, ConflictError for a job that
    has not finished or stored none."""
    job = get_job(session, job_id, team_id=team_id)
    if job.status not in TERMINAL:
        raise ConflictError(
            f"job {job_id} has not finished (status {job.status}): its coefficients are "
            "stored when it ends"
        )
    row = session.get(JobCoefficients, job_id)
    if row is None:
        raise ConflictError(
            f"job {job_id} ({job.status}) has no stored coefficients: its run ended without "
            "returning its final iterate (it failed, was killed, or ran before coefficients "
            "were kept), or retention deleted them"
        )
    return row


def coefficient_array(row: JobCoefficients) -> np.ndarray:
    """The stored final iterate as a read-only array over ``row.data`` (no copy), shape
    (d,) or (d, K)."""
    return np.frombuffer(row.data, dtype=np.dtype(row.dtype)).reshape(row.shape)


def _long(n_points: int, max_points: int | None) -> bool:
    """Whether a trace of ``n_points`` is thinned to ``max_points`` from its epochs first."""
    return max_points is not None and n_points > LONG_TRACE * max_points


def _kept_seqs(session: Session, job_id: int, after_seq: int, max_points: int) -> list[int]:
    """The seqs of the points of the job's trace after ``after_seq`` that :func:`_thin`
    keeps, from their epochs alone: a long trace is downsampled reading two numbers a
    point, and only the kept points whole."""
    query = select(TracePoint.seq, TracePoint.epoch).where(
        TracePoint.job_id == job_id, TracePoint.seq > after_seq
    )
    found = session.execute(query.order_by(TracePoint.seq)).all()
    return [found[i][0] for i in downsample([epoch for _, epoch in found], max_points)]


def _seq_in(session: Session, seqs: list[int]) -> ColumnElement[bool]:
    """``trace_points.seq`` is one of ``seqs``: one array parameter on PostgreSQL (a list
    of hundreds of parameters costs more to render than to run)."""
    if session.get_bind().dialect.name == "postgresql":
        return TracePoint.seq == any_(bindparam("seqs", seqs, type_=ARRAY(Integer)))
    return TracePoint.seq.in_(seqs)


def trace_columns(
    session: Session,
    jobs: Sequence[Any],
    fields: Sequence[str] = TRACE_COLUMNS,
    max_points: int | None = None,
) -> dict[int, dict[str, list[Any]]]:
    """{job id: {field: values in seq order}} of the traces of ``jobs`` (from
    :func:`get_job` or :func:`list_jobs`, or anything with their ``id``), ``fields`` of
    :data:`TRACE_COLUMNS` and :data:`TRACE_EXTRAS`, read in one query; with ``max_points``
    each keeps the points :func:`get_trace` keeps."""
    unknown = set(fields) - set(TRACE_COLUMNS) - set(TRACE_EXTRAS)
    if unknown:
        accepted = (*TRACE_COLUMNS, *TRACE_EXTRAS)
        raise ValueError(f"unknown trace fields {sorted(unknown)}; accepted: {accepted}")
    rows: dict[int, list[Sequence[Any]]] = {job.id: [] for job in jobs}
    columns = [
        TracePoint.extras[field] if field in TRACE_EXTRAS else getattr(TracePoint, field)
        for field in ("epoch", *fields)
    ]
    # a job known to hold more than LONG_TRACE × max_points is read by the points kept
    long = {job.id for job in jobs if _long(getattr(job, "n_points", None) or 0, max_points)}
    short = [job_id for job_id in rows if job_id not in long]
    if short:
        query = (
            select(TracePoint.job_id, *columns)
            .where(TracePoint.job_id.in_(short))
            .order_by(TracePoint.job_id, TracePoint.seq)
        )
        for job_id, *values in session.execute(query):
            rows[job_id].append(values)
    for job_id in sorted(long):
        assert max_points is not None  # _long
        seqs = _kept_seqs(session, job_id, -1, max_points)
        query = select(*columns).where(TracePoint.job_id == job_id, _seq_in(session, seqs))
        rows[job_id] = [tuple(r) for r in session.execute(query.order_by(TracePoint.seq))]
    traces = {}
    for job_id, points in rows.items():
        kept = _thin(points, [p[0] for p in points], max_points)
        traces[job_id] = {field: [p[i + 1] for p in kept] for i, field in enumerate(fields)}
    return traces
