"""The worker's database reads and writes: claiming a job, trace batches, the job's end.

Every write of a run is conditioned on the job being ``running`` with the run's attempt
number, so a run that a redelivery has superseded changes nothing. Trace points are
inserted with ``ON CONFLICT DO NOTHING`` on (job_id, seq): writing a batch twice keeps one
copy.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy import delete, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from core.db import engine_for, session_scope
from core.models import CANCELLED, FAILED, QUEUED, RUNNING, TERMINAL, Job, TracePoint, utcnow

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 3  # a job whose worker was lost this many times is failed, not run again
_INSERTS = {"postgresql": postgresql.insert, "sqlite": sqlite.insert}


@dataclass(frozen=True)
class Claim:
    """A job this run has marked running: what the run needs from the database."""

    job_id: int
    attempt: int
    spec: dict[str, Any]
    dataset: str
    source: dict[str, Any]


def claim_job(url: str, job_id: int, host: str) -> Claim | None:
    """Mark the job running for a new attempt, or return None when it must not run.

    A missing or finished job is skipped; a job whose cancellation was requested is
    cancelled; a job still ``running`` is a redelivery after its worker was lost: it runs
    again (its earlier trace points are deleted, so the new trace starts at seq 0) unless
    it has been tried ``MAX_ATTEMPTS`` times already, then it fails.
    """
    with session_scope(url) as session:
        job = session.get(Job, job_id)
        if job is None:
            log.warning("job %d does not exist; nothing to run", job_id)
            return None
        if job.status in TERMINAL:
            log.info("job %d is already %s; not run again", job_id, job.status)
            return None
        pending = (
            Job.id == job_id,
            Job.attempts == job.attempts,
            Job.status.in_((QUEUED, RUNNING)),
        )
        now = utcnow()
        if job.cancel_requested:
            session.execute(
                update(Job)
                .where(*pending)
                .values(status=CANCELLED, stop_reason=CANCELLED, finished_at=now)
            )
            log.info("job %d was cancelled before it started", job_id)
            return None
        if job.status == RUNNING and job.attempts >= MAX_ATTEMPTS:
            error = (
                f"the worker running this job was lost {job.attempts} times (its process "
                "was killed, e.g. out of memory); not run again"
            )
            session.execute(
                update(Job).where(*pending).values(status=FAILED, error=error, finished_at=now)
            )
            log.error("job %d: %s", job_id, error)
            return None
        attempt = job.attempts + 1
        claimed = session.execute(
            update(Job)
            .where(*pending)
            .values(
                status=RUNNING,
                attempts=attempt,
                worker_host=host,
                started_at=now,
                finished_at=None,
                stop_reason=None,
                error=None,
                n_points=0,
                epoch=None,
                time_s=None,
                primal=None,
                gap=None,
            )
        ).rowcount
        if not claimed:
            log.info("job %d changed while it was being claimed; not run", job_id)
            return None
        if attempt > 1:
            session.execute(delete(TracePoint).where(TracePoint.job_id == job_id))
        return Claim(job_id, attempt, job.spec, job.dataset.name, job.dataset.source)


def _plain(value: Any) -> Any:
    """A JSON value: NumPy scalars as Python ones, non-finite floats as None."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def write_points(session: Session, job_id: int, points: list) -> None:
    """Insert trace points (``solvers.trace.TracePoint``) of a job; existing (job, seq) rows
    are left as they are."""
    rows = [
        {
            "job_id": job_id,
            "seq": p.seq,
            "iteration": p.iteration,
            "epoch": p.epoch,
            "time_s": p.time_s,
            "primal": p.primal,
            "dual": p.dual,
            "gap": p.gap,
            "nnz_x": p.nnz_x,
            "extras": {str(k): _plain(v) for k, v in p.extras.items()},
        }
        for p in points
    ]
    insert = _INSERTS[session.get_bind().dialect.name]
    statement = insert(TracePoint.__table__).on_conflict_do_nothing(
        index_elements=["job_id", "seq"]
    )
    session.execute(statement, rows)


def _current(claim: Claim) -> tuple:
    return (Job.id == claim.job_id, Job.attempts == claim.attempt, Job.status == RUNNING)


def save_batch(url: str, claim: Claim, points: list) -> bool:
    """Write a batch of trace points and set the job's summary to the last one, in one
    transaction; False (nothing written) if this run has been superseded."""
    last = points[-1]
    with session_scope(url) as session:
        summary = {
            "n_points": last.seq + 1,
            "epoch": last.epoch,
            "time_s": last.time_s,
            "primal": last.primal,
            "gap": last.gap,
        }
        if not session.execute(update(Job).where(*_current(claim)).values(**summary)).rowcount:
            return False
        write_points(session, claim.job_id, points)
    return True


def finish_job(
    url: str, claim: Claim, status: str, stop_reason: str | None, error: str | None
) -> bool:
    """End this run's job; False if the run has been superseded (nothing written)."""
    with session_scope(url) as session:
        values = {"status": status, "stop_reason": stop_reason, "error": error}
        statement = update(Job).where(*_current(claim)).values(**values, finished_at=utcnow())
        return bool(session.execute(statement).rowcount)


def fail_running_job(url: str, job_id: int, error: str) -> bool:
    """Fail a job left running by a run that cannot end it (its process was killed)."""
    with session_scope(url) as session:
        statement = (
            update(Job)
            .where(Job.id == job_id, Job.status == RUNNING)
            .values(status=FAILED, error=error, finished_at=utcnow())
        )
        return bool(session.execute(statement).rowcount)


class CancelCheck:
    """``should_stop()`` for the stop rules: True once the job's cancellation is requested
    or this run is superseded. Reads the database at most every ``interval`` seconds."""

    def __init__(self, url: str, claim: Claim, interval: float = 0.25) -> None:
        self.url = url
        self.claim = claim
        self.interval = interval
        self._read_at = -math.inf
        self._stop = False

    def __call__(self) -> bool:
        now = time.monotonic()
        if not self._stop and now - self._read_at >= self.interval:
            self._read_at = now
            query = select(Job.cancel_requested, Job.attempts).where(Job.id == self.claim.job_id)
            with engine_for(self.url).connect() as conn:
                row = conn.execute(query).one_or_none()
            self._stop = row is None or row.cancel_requested or row.attempts != self.claim.attempt
        return self._stop
