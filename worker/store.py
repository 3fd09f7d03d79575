"""The worker's database reads and writes: claiming a job, heartbeats, trace batches, the
job's end, and the reaper's requeueing of jobs whose worker was lost.

Every change of a job goes through :func:`faceoff.core.lifecycle.apply`, one conditional
UPDATE: a job is claimed by ``UPDATE ... WHERE status = 'queued'``, so of several
deliveries of its message (a redelivery, the reaper's, the broker-restart re-send) only one
runs it. Every later write of a run is conditioned on the job being ``running`` with the
run's attempt number, so a run that the reaper has superseded changes nothing. Each
function here is one transaction (``session_scope``: it commits), which
:func:`retrying` can run again whole. Trace points
are inserted with ``ON CONFLICT DO NOTHING`` on (job_id, seq): writing a batch twice keeps
one copy, so a batch whose commit was lost with the connection can simply be written again.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, NamedTuple, TypeVar, cast

import numpy as np
from sqlalchemy import Table, case, delete, func, or_, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import CursorResult
from sqlalchemy.orm import Session

from faceoff.core import summaries
from faceoff.core.datasets import find_dataset
from faceoff.core.db import brief, connection, is_unavailable, session_scope
from faceoff.core.lifecycle import Event, apply
from faceoff.core.machine import load_average
from faceoff.core.models import (
    QUEUED,
    RUNNING,
    Dataset,
    Job,
    JobCoefficients,
    TracePoint,
    utcnow,
)
from faceoff.solvers.catalogue import distribution_of
from faceoff.solvers.spec import AUTO_EXTRA

log = logging.getLogger(__name__)

# a job whose worker was lost this many times is failed, not run again: a lost run is
# retried once (a run killed for its time or by a signal is failed at once, never retried)
MAX_ATTEMPTS = 2
MAX_BACKOFF_SECONDS = 5.0
_INSERTS: dict[str, Callable[[Table], postgresql.Insert | sqlite.Insert]] = {
    "postgresql": postgresql.insert,
    "sqlite": sqlite.insert,
}
T = TypeVar("T")


def retrying(write: Callable[[], T], seconds: float, what: str) -> T:
    """``write()``, tried again with exponential backoff (0.1 s doubling up to
    ``MAX_BACKOFF_SECONDS``) while the database is unavailable, for at most ``seconds``;
    then the last error is raised. Other errors are raised at once."""
    deadline = time.monotonic() + seconds
    delay = 0.1
    while True:
        try:
            return write()
        except Exception as err:
            if not is_unavailable(err) or time.monotonic() + delay > deadline:
                raise
            log.warning(
                "%s: database unavailable (%s); retrying in %.1f s", what, brief(err), delay
            )
        time.sleep(delay)
        delay = min(2 * delay, MAX_BACKOFF_SECONDS)


@dataclass(frozen=True)
class Claim:
    """A job this run has marked running: what the run needs from the database."""

    job_id: int
    attempt: int
    spec: dict[str, Any]
    dataset: str
    source: dict[str, Any]
    machine_host: str | None = None  # the host whose running jobs count as concurrent
    test_source: dict[str, Any] | None = None  # a test dataset's ({"split": "dataset"})


def _running_on(session: Session, machine_host: str) -> int:
    """How many jobs are running on ``machine_host`` (worker_host ``machine_host:pid``)."""
    escaped = machine_host.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    query = select(func.count()).where(
        Job.status == RUNNING, Job.worker_host.like(f"{escaped}:%", escape="\\")
    )
    return int(session.scalar(query) or 0)


def _crowding(session: Session, machine_host: str | None) -> dict[str, Any]:
    """Values raising ``concurrency_max`` to the jobs now running on the host."""
    if machine_host is None:
        return {}
    running = _running_on(session, machine_host)
    highest = case(
        (Job.concurrency_max.is_(None), running),
        (Job.concurrency_max < running, running),
        else_=Job.concurrency_max,
    )
    return {"concurrency_max": highest}


def claim_job(
    url: str, job_id: int, host: str, machine: dict[str, Any] | None = None
) -> Claim | None:
    """Mark a queued job running for a new attempt, or return None when it must not run.

    A missing job, or one that is not queued (finished, or running for another delivery
    of its message), is skipped; a queued job whose cancellation was requested is
    cancelled. A rerun (attempt > 1, after the reaper requeued the job) deletes the
    earlier trace points, so the new trace starts at seq 0.

    With the ``machine`` record (core.machine) the job records it (with the distribution
    and version its solver comes from, ``solver``), the host's load average
    and how many jobs are running on ``machine["host"]`` counting this one
    (``worker_host`` must then be ``host:pid``).
    """
    with session_scope(url) as session:
        # the write comes first: SQLite cannot turn a read transaction into a write one
        # once another connection has written
        run = {
            "worker_host": host,
            "machine": machine,
            "load_start": load_average() if machine else None,
        }
        if not apply(session, job_id, Event.CLAIM, values=run):
            apply(session, job_id, Event.CANCEL, where=[Job.cancel_requested.is_(True)])
            status = session.scalar(select(Job.status).where(Job.id == job_id))
            log.info("job %d is %s; this delivery does not run it", job_id, status or "missing")
            return None
        # the job is this run's until the transaction ends
        attempts, spec, dataset_id, team_id = session.execute(
            select(Job.attempts, Job.spec, Job.dataset_id, Job.team_id).where(Job.id == job_id)
        ).one()
        dataset = session.execute(
            select(Dataset.name, Dataset.source).where(Dataset.id == dataset_id)
        ).one()
        test_source = None
        test = spec.get("test") or {}
        if test.get("split") == "dataset":  # the dataset the team sees under that name
            found = find_dataset(session, str(test.get("dataset")), team_id=team_id)
            test_source = None if found is None else found.source
        if attempts > 1:
            session.execute(delete(TracePoint).where(TracePoint.job_id == job_id))
            summaries.forget(session, job_id)
        machine_host = machine["host"] if machine else None
        if machine is not None and machine_host is not None:
            running = _running_on(session, machine_host)
            crowd = {"concurrency": running, "concurrency_max": running}
            # the record names the distribution the job's solver comes from, and its version
            name, version = distribution_of(str(spec.get("solver")))
            ran = {**machine, "solver": {"distribution": name, "version": version}}
            values = {**crowd, "machine": ran}
            apply(session, job_id, Event.PROGRESS, attempt=attempts, values=values)
        return Claim(
            job_id, attempts, spec, dataset.name, dataset.source, machine_host, test_source
        )


def _plain(value: Any) -> Any:
    """A JSON value: NumPy scalars as Python ones, non-finite floats as None."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


_COLUMNS = ("job_id", "seq", "iteration", "epoch", "time_s", "primal", "dual", "gap", "nnz_x")
COPY_MIN_POINTS = 200  # from this batch size on, PostgreSQL gets the points by COPY


def write_points(session: Session, job_id: int, points: list) -> None:
    """Insert trace points (``faceoff.solvers.trace.TracePoint``) of a job; existing (job, seq) rows
    are left as they are. Large batches on PostgreSQL go through COPY into a temporary
    staging table and one ``INSERT ... SELECT ... ON CONFLICT DO NOTHING`` (about 3× the
    rate of a multi-row INSERT; bench/run_service.py measures both)."""
    rows = [
        (
            job_id,
            p.seq,
            p.iteration,
            p.epoch,
            p.time_s,
            p.primal,
            p.dual,
            p.gap,
            p.nnz_x,
            {str(k): _plain(v) for k, v in p.extras.items()},
        )
        for p in points
    ]
    dialect = session.get_bind().dialect.name
    if dialect == "postgresql" and len(rows) >= COPY_MIN_POINTS:
        _copy_rows(session, rows)
        return
    statement = _INSERTS[dialect](cast(Table, TracePoint.__table__)).on_conflict_do_nothing(
        index_elements=["job_id", "seq"]
    )
    names = (*_COLUMNS, "extras")
    session.execute(statement, [dict(zip(names, row, strict=True)) for row in rows])


def _copy_rows(session: Session, rows: list[tuple]) -> None:
    """COPY ``rows`` into the connection's staging table (emptied at commit), then move them
    into trace_points, skipping (job_id, seq) pairs that are already there."""
    columns = ", ".join((*_COLUMNS, "extras"))
    connection = session.connection().connection.driver_connection  # a psycopg connection
    assert connection is not None, "COPY needs an open psycopg connection"
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TEMP TABLE IF NOT EXISTS trace_stage (LIKE trace_points) ON COMMIT DELETE ROWS"
        )
        with cursor.copy(f"COPY trace_stage ({columns}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row((*row[:-1], json.dumps(row[-1]) if row[-1] else "{}"))
        cursor.execute(
            f"INSERT INTO trace_points ({columns}) SELECT {columns} FROM trace_stage "
            "ON CONFLICT (job_id, seq) DO NOTHING"
        )


class Identity(NamedTuple):
    """What the worker learns of a job before running it: the digest of its data and the
    content-keyed objective hash (core.references), from building its problem, and how its
    solver traces a run (``native``, ``callback`` or ``refit``: solvers.catalogue)."""

    data_hash: str
    objective_hash: str
    trace_mode: str


def _record(session: Session, claim: Claim, event: Event, values: dict[str, Any]) -> bool:
    """Apply ``event`` of this run (its attempt) to its job; False if the run has been
    superseded."""
    return apply(session, claim.job_id, event, attempt=claim.attempt, values=values)


def set_identity(url: str, claim: Claim, identity: Identity) -> bool:
    """Key this run's job by the content of its data and say how its trace is made; False
    if the run has been superseded."""
    with session_scope(url) as session:
        return _record(session, claim, Event.PROGRESS, identity._asdict())


def record_dataset(
    url: str, dataset: str, labels: dict[str, Any], shape: tuple[int, int, int]
) -> None:
    """Set what reading the dataset named ``dataset`` told, where it is not known yet: its
    labels record (core.labels; a registry entry's declared labels are never replaced)
    and its shape (n_samples, n_features, nnz: random binning features know their columns
    only once built), so that the API checks the jobs that follow against them."""
    n, d, nnz = shape
    named = Dataset.name == dataset
    with session_scope(url) as session:
        unlabelled = update(Dataset).where(named, Dataset.labels.is_(None))
        session.execute(unlabelled.values(labels=labels))
        session.execute(
            update(Dataset)
            .where(named, Dataset.n_features.is_(None))
            .values(n_samples=n, n_features=d, nnz=nnz)
        )


def beat(url: str, claim: Claim) -> bool:
    """Record that this run is alive, and the jobs running on its host if more than seen
    so far; False if it has been superseded."""
    with session_scope(url) as session:
        values = {"heartbeat_at": utcnow(), **_crowding(session, claim.machine_host)}
        return _record(session, claim, Event.PROGRESS, values)


def _summary(points: list) -> dict[str, Any]:
    """The job's summary columns from its last trace point, and, with its first point,
    what the solver's ``auto`` parameters chose (``jobs.auto``: that point's extras hold
    it; listings name it without reading the trace)."""
    last = points[-1]
    summary = {
        "n_points": last.seq + 1,
        "epoch": last.epoch,
        "time_s": last.time_s,
        "primal": last.primal,
        "gap": last.gap,
    }
    if points[0].seq == 0:
        chosen = points[0].extras.get(AUTO_EXTRA)
        summary["auto"] = {str(k): _plain(v) for k, v in chosen.items()} if chosen else None
    return summary


def save_batch(url: str, claim: Claim, points: list) -> bool:
    """Write a batch of trace points, set the job's summary to the last one and add the
    batch to its trace summary (core.summaries), in one transaction; False (nothing
    written) if this run has been superseded."""
    with session_scope(url) as session:
        values = {**_summary(points), "heartbeat_at": utcnow()}
        if not _record(session, claim, Event.PROGRESS, values):
            return False
        write_points(session, claim.job_id, points)
        summaries.record(session, claim.job_id, points)
    return True


class Coefficients(NamedTuple):
    """A run's final iterate ``x`` (shape (d,) or (d, K)) and, for a K-class problem, the
    class values of its columns."""

    x: np.ndarray
    classes: np.ndarray | None = None


def write_coefficients(session: Session, job_id: int, coefficients: Coefficients) -> None:
    """Store the job's final iterate as float64 bytes in C order (replacing any): one copy
    of x, none if it is already float64 and C-contiguous before ``tobytes``."""
    x = np.ascontiguousarray(coefficients.x, dtype=np.float64)
    classes = coefficients.classes
    session.execute(delete(JobCoefficients).where(JobCoefficients.job_id == job_id))
    session.add(
        JobCoefficients(
            job_id=job_id,
            shape=[int(n) for n in x.shape],
            dtype=x.dtype.str,
            classes=None if classes is None else [float(c) for c in classes],
            data=x.tobytes(),
        )
    )


def finish_job(
    url: str,
    claim: Claim,
    event: Event,
    stop_reason: str | None,
    error: str | None,
    points: list,
    identity: Identity | None = None,
    wall_s: float | None = None,
    coefficients: Coefficients | None = None,
) -> bool:
    """End this run's job by ``event`` (succeed, fail or halt), writing its last trace
    ``points``, the ``identity`` of its data, when known, ``wall_s``, the wall time the
    run cost (None when the solver did not return), and its final iterate
    (``coefficients``, when the run sent it) in the same transaction; False if the run has
    been superseded (nothing written)."""
    with session_scope(url) as session:
        values: dict[str, Any] = {
            "stop_reason": stop_reason,
            "error": error,
            "wall_s": wall_s,
            **_crowding(session, claim.machine_host),
        }
        if claim.machine_host is not None:
            values["load_end"] = load_average()
        if identity is not None:
            values.update(identity._asdict())
        if points:
            values.update(_summary(points))
        if not _record(session, claim, event, values):
            return False
        if points:
            write_points(session, claim.job_id, points)
            summaries.record(session, claim.job_id, points)
        if coefficients is not None:
            write_coefficients(session, claim.job_id, coefficients)
    return True


def fail_running_job(url: str, job_id: int, error: str) -> bool:
    """Fail a job left running by a run that cannot end it (its process was killed)."""
    with session_scope(url) as session:
        return apply(session, job_id, Event.FAIL, values={"error": error})


class Send(NamedTuple):
    """What sending a job's message needs: its id, its ``max_seconds`` (the time limits)
    and the worker host it is pinned to (None: any)."""

    job_id: int
    max_seconds: float
    host: str | None = None


def _send(job_id: int, spec: dict[str, Any]) -> Send:
    return Send(job_id, float(spec["stop"]["max_seconds"]), spec.get("host"))


def requeue_lost(url: str, timeout: float) -> list[Send]:
    """Requeue the running jobs whose heartbeat is older than ``timeout`` seconds (their
    worker was lost): how to send each (:class:`Send`), for the caller to send again.

    Each job is taken by a conditional UPDATE, so of several reapers one requeues it. A job
    that has been tried ``MAX_ATTEMPTS`` times is failed instead. A requeued job counts as
    sent now: if its caller dies before sending it, :func:`take_overdue` finds it later.
    """
    cutoff = utcnow() - timedelta(seconds=timeout)
    stale = [or_(Job.heartbeat_at.is_(None), Job.heartbeat_at < cutoff)]
    requeued = []
    with session_scope(url) as session:
        query = select(Job.id, Job.attempts, Job.spec).where(Job.status == RUNNING, *stale)
        lost = session.execute(query).all()
        for job_id, attempts, spec in lost:
            if attempts >= MAX_ATTEMPTS:
                error = (
                    f"the worker running this job was lost {attempts} times (its pool process "
                    "or the whole worker was killed, or stopped answering); not run again"
                )
                values = {"error": error}
                if apply(session, job_id, Event.FAIL, attempt=attempts, where=stale, values=values):
                    log.error("job %d: %s", job_id, error)
            elif apply(session, job_id, Event.REQUEUE, attempt=attempts, where=stale):
                log.warning(
                    "job %d: its worker was lost during attempt %d; requeued", job_id, attempts
                )
                requeued.append(_send(job_id, spec))
    return requeued


def unqueue(url: str, job_id: int) -> None:
    """Undo :func:`requeue_lost` for a job whose message could not be sent: back to running
    with its stale heartbeat, so that a later pass requeues it again."""
    with session_scope(url) as session:
        apply(session, job_id, Event.UNQUEUE)


def take_overdue(url: str, timeout: float, hosts: Sequence[str | None] | None = None) -> list[Send]:
    """How to send the queued jobs last sent ``timeout`` seconds ago or never (oldest
    first), marked sent now for the caller to send again; with ``hosts``, only the jobs
    pinned to one of them (None in it: the unpinned jobs).

    One conditional UPDATE takes them, so of several reapers one sends each job.
    """
    cutoff = utcnow() - timedelta(seconds=timeout)
    if hosts is not None and not hosts:
        return []
    overdue = [Job.status == QUEUED, or_(Job.dispatched_at.is_(None), Job.dispatched_at < cutoff)]
    if hosts is not None:
        named = [host for host in hosts if host is not None]
        pinned = [Job.pinned_host.in_(named)] if named else []
        overdue.append(or_(*pinned, *([Job.pinned_host.is_(None)] if None in hosts else [])))
    with session_scope(url) as session:
        rows = session.execute(
            update(Job).where(*overdue).values(dispatched_at=utcnow()).returning(Job.id, Job.spec)
        ).all()
    return sorted(_send(job_id, spec) for job_id, spec in rows)


def host_served(url: str, host: str) -> int:
    """A worker serves ``host``: its queued jobs no longer wait for one (``waiting_for_host``
    cleared); how many were."""
    with session_scope(url) as session:
        statement = (
            update(Job)
            .where(Job.status == QUEUED, Job.waiting_for_host == host)
            .values(waiting_for_host=None)
            .execution_options(synchronize_session=False)
        )
        return int(cast(CursorResult[Any], session.execute(statement)).rowcount)


def pinned_hosts(url: str) -> list[str]:
    """The worker hosts that queued jobs are pinned to, sorted."""
    with session_scope(url) as session:
        query = select(Job.pinned_host).where(Job.status == QUEUED, Job.pinned_host.is_not(None))
        return sorted(host for host in session.scalars(query.distinct()) if host is not None)


def untake(url: str, job_ids: list[int]) -> None:
    """Undo :func:`take_overdue` for jobs that could not be sent: overdue again at once."""
    with session_scope(url) as session:
        session.execute(
            update(Job).where(Job.id.in_(job_ids), Job.status == QUEUED).values(dispatched_at=None)
        )


def ping(url: str) -> None:
    """Raise unless the database answers."""
    with connection(url) as conn:
        conn.execute(select(1))


def queued_jobs(url: str) -> list[Send]:
    """How to send every queued job, oldest first."""
    with session_scope(url) as session:
        rows = session.execute(
            select(Job.id, Job.spec).where(Job.status == QUEUED).order_by(Job.id)
        )
        return [_send(job_id, spec) for job_id, spec in rows]


class CancelCheck:
    """``should_stop()`` for the stop rules: True once the job's cancellation is requested
    or this run is superseded. Reads the database at most every ``interval`` seconds; while
    the database is unavailable the last answer stands and the run goes on."""

    def __init__(self, url: str, claim: Claim, interval: float = 0.25) -> None:
        self.url = url
        self.claim = claim
        self.interval = interval
        self._read_at = time.monotonic()  # the claim has just read the job
        self._stop = False
        self._failing = False

    def __call__(self) -> bool:
        now = time.monotonic()
        if not self._stop and now - self._read_at >= self.interval:
            self._read_at = now
            query = select(Job.cancel_requested, Job.attempts, Job.status).where(
                Job.id == self.claim.job_id
            )
            try:
                with connection(self.url) as conn:
                    row = conn.execute(query).one_or_none()
            except Exception as err:
                if not is_unavailable(err):
                    raise
                if not self._failing:
                    log.warning("job %d: cancel checks skipped: %s", self.claim.job_id, brief(err))
                self._failing = True
                return False
            self._failing = False
            self._stop = (
                row is None
                or row.cancel_requested
                or row.attempts != self.claim.attempt
                or row.status != RUNNING
            )
        return self._stop
