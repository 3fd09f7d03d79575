"""Retention: pruning the traces of old finished jobs, keeping the jobs, their summaries and
the reference optima P*.

:func:`prune` takes the jobs that ended (succeeded, failed or cancelled) before a cutoff
and either **thins** their traces to the log-epoch grid the dashboard draws — the points
:func:`faceoff.core.jobs.downsample` keeps for ``max_points`` = :data:`KEEP_POINTS`, so
every figure and every ``GET /jobs/{id}/trace?max_points=500`` shows the same points as
before — or **drops** them (``keep_summaries_only``). Either way the job row (its final
values), its trace summary (core.summaries: time to ε on the whole grid, computed from the
whole trace first if it was not up to date) and P* stay, so the sweep, ranking and
profiles pages answer as before. A P* that improves afterwards cannot be applied to the
points that are gone: such a job's relative suboptimality is then read from what is left
of its trace (core.summaries.on_new_optimum). In both modes the jobs' stored final
iterates (``job_coefficients``: d·K float64 each, the bulk of an old job besides its trace)
are deleted; ``GET /jobs/{id}/coefficients`` then answers 409.

The caller commits (``faceoff prune``, ``POST /api/v1/admin/prune``); the work is done in
chunks of :data:`CHUNK` jobs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from faceoff.core import jobs, summaries
from faceoff.core.models import (
    TERMINAL,
    Job,
    JobCoefficients,
    JobSummary,
    Reference,
    TracePoint,
)

KEEP_POINTS = 500  # dashboard.rows.MAX_POINTS: the points a figure draws of a job
CHUNK = 200
THINNED, DROPPED = "thinned", "dropped"


@dataclass(frozen=True)
class Pruned:
    """What :func:`prune` did: jobs whose traces it thinned or dropped, points deleted and
    points kept, and of how many of those jobs it deleted the final coefficients."""

    jobs: int
    points_deleted: int
    points_kept: int
    mode: str
    coefficients_deleted: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "jobs": self.jobs,
            "points_deleted": self.points_deleted,
            "points_kept": self.points_kept,
            "mode": self.mode,
            "coefficients_deleted": self.coefficients_deleted,
        }


def _up_to_date(session: Session, job_ids: list[int]) -> None:
    """Summarize again those of ``job_ids`` whose summary does not cover their whole trace
    with the current P*, before any point goes."""
    current = (
        select(Job.id, Job.n_points, JobSummary.n_points, JobSummary.p_star, Reference.primal)
        .outerjoin(JobSummary, JobSummary.job_id == Job.id)
        .outerjoin(Reference, Reference.objective_hash == Job.objective_hash)
        .where(Job.id.in_(job_ids))
    )
    stale = [
        job_id
        for job_id, n, covered, used, p_star in session.execute(current)
        if covered != n or used != p_star
    ]
    summaries.rebuild(session, stale)


def prune(
    session: Session, before: datetime, keep_summaries_only: bool = False, limit: int | None = None
) -> Pruned:
    """Thin (or, with ``keep_summaries_only``, drop) the traces of the jobs that finished
    before ``before`` and still have their whole trace (or, to drop, any), and delete their
    final coefficients; at most ``limit`` jobs (None: all). Does not commit."""
    mode = DROPPED if keep_summaries_only else THINNED
    if keep_summaries_only:
        done = select(JobSummary.job_id).where(JobSummary.pruned == DROPPED)
    else:
        done = select(JobSummary.job_id).where(JobSummary.pruned.is_not(None))
    query = (
        select(Job.id)
        .where(
            Job.status.in_(TERMINAL),
            Job.finished_at < before,
            Job.n_points > 0,
            Job.id.not_in(done),
        )
        .order_by(Job.id)
        .limit(limit)
    )
    job_ids = list(session.scalars(query))
    deleted = kept = coefficients = 0
    for start in range(0, len(job_ids), CHUNK):
        chunk = job_ids[start : start + CHUNK]
        _up_to_date(session, chunk)
        gone = session.execute(delete(JobCoefficients).where(JobCoefficients.job_id.in_(chunk)))
        coefficients += int(getattr(gone, "rowcount", 0) or 0)
        if keep_summaries_only:
            result = session.execute(delete(TracePoint).where(TracePoint.job_id.in_(chunk)))
            deleted += int(getattr(result, "rowcount", 0) or 0)
        else:
            traces = jobs.trace_columns(
                session, [summaries.JobKey(j, "", 0) for j in chunk], ("seq", "epoch")
            )
            for job_id, trace in traces.items():
                chosen = jobs.downsample(trace["epoch"], KEEP_POINTS)
                keep = [trace["seq"][i] for i in chosen]
                if len(keep) < len(trace["seq"]):
                    session.execute(
                        delete(TracePoint).where(
                            TracePoint.job_id == job_id, TracePoint.seq.not_in(keep)
                        )
                    )
                deleted += len(trace["seq"]) - len(keep)
                kept += len(keep)
        session.execute(update(JobSummary).where(JobSummary.job_id.in_(chunk)).values(pruned=mode))
    return Pruned(len(job_ids), deleted, kept, mode, coefficients)


AGE_UNITS = {"d": 86400, "h": 3600, "m": 60}
AGE_ACCEPTED = "a whole number of days, hours or minutes such as 90d, 12h or 30m"


def parse_age(text: str) -> timedelta:
    """``90d``, ``12h``, ``30m`` as a timedelta; ValueError naming what is accepted."""
    match = re.fullmatch(r"\s*(\d{1,6})\s*([dhm])\s*", text or "")
    if not match:
        raise ValueError(f"age {text!r} is not accepted: {AGE_ACCEPTED}")
    return timedelta(seconds=int(match.group(1)) * AGE_UNITS[match.group(2)])
