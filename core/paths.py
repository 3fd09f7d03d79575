"""Regularization-path jobs read back: one row per λ, from the trace.

A path job (a job spec with ``path``: solvers.path) records one trace end to end, each
point's extras naming its λ (``{"path": {"index": k, "l1": λ, "lambda_max": λ_max}}``) with
seq and solver time running on across the λs. Its λs are read from that trace, never from
a second record: a λ's row is its last point (its solution so far), with its own time (the
path's time at its end less the λ before's) and how close it came (the relative duality
gap that certifies it, :func:`faceoff.solvers.gap.relative_gap`). The path reaches ε when
every λ of its grid does: :func:`path_time_to_eps`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from faceoff.core import jobs
from faceoff.core.errors import ConflictError
from faceoff.core.models import TracePoint
from faceoff.solvers.gap import relative_gap

STEP_FIELDS = (
    "index",
    "l1",
    "ratio",  # l1 / λ_max
    "seconds",  # this λ's solver time
    "time_s",  # the path's solver time at this λ's end
    "epochs",  # this λ's passes over the data
    "primal",
    "gap",
    "gap_rel",
    "nnz",  # support size of this λ's solution
    "points",
)


def steps_of(points: Sequence[Any]) -> list[dict[str, Any]]:
    """One row of :data:`STEP_FIELDS` per λ of a path trace (objects or rows with ``seq``,
    ``time_s``, ``epoch``, ``primal``, ``gap``, ``nnz_x`` and ``extras``, in seq order),
    in grid order. Points without a λ (not a path's) are skipped."""
    last: dict[int, Any] = {}
    count: dict[int, int] = {}
    meta: dict[int, dict[str, Any]] = {}
    for point in points:
        where = (point.extras or {}).get("path")
        if not isinstance(where, dict) or "index" not in where:
            continue
        k = int(where["index"])
        last[k] = point
        count[k] = count.get(k, 0) + 1
        meta[k] = where
    rows, before = [], 0.0
    for k in sorted(last):
        point, where = last[k], meta[k]
        top = where.get("lambda_max")
        l1 = float(where["l1"])
        rows.append(
            {
                "index": k,
                "l1": l1,
                "ratio": l1 / top if top else math.nan,
                "seconds": float(point.time_s) - before,
                "time_s": float(point.time_s),
                "epochs": float(point.epoch),
                "primal": float(point.primal),
                "gap": float(point.gap),
                "gap_rel": float(relative_gap(point.gap, point.primal)),
                "nnz": int(point.nnz_x),
                "points": count[k],
            }
        )
        before = float(point.time_s)
    return rows


def lambda_max_of(points: Sequence[Any]) -> float | None:
    """λ_max of a path trace (its first point's), None if the trace is not a path's."""
    for point in points:
        where = (point.extras or {}).get("path")
        if isinstance(where, dict) and where.get("lambda_max") is not None:
            return float(where["lambda_max"])
    return None


def path_time_to_eps(steps: Sequence[dict[str, Any]], n_lambdas: int, eps: float) -> float | None:
    """The path's solver time when each of its ``n_lambdas`` λs has a relative gap ≤ ε
    (each λ is solved from the one before, so it is the last λ's end); None when a λ is
    missing or above ε."""
    if len(steps) < n_lambdas or not steps:
        return None
    if any(not (step["gap_rel"] <= eps) for step in steps):
        return None
    return float(steps[-1]["time_s"])


def job_paths(
    session: Session, job_ids: Sequence[int]
) -> dict[int, tuple[float | None, list[dict[str, Any]]]]:
    """{job id: (λ_max, its λ rows)} of ``job_ids`` (the caller checks who may read them),
    read in one query."""
    points: dict[int, list[Any]] = {job_id: [] for job_id in job_ids}
    if job_ids:
        query = (
            select(
                TracePoint.job_id,
                TracePoint.seq,
                TracePoint.time_s,
                TracePoint.epoch,
                TracePoint.primal,
                TracePoint.gap,
                TracePoint.nnz_x,
                TracePoint.extras,
            )
            .where(TracePoint.job_id.in_(list(job_ids)))
            .order_by(TracePoint.job_id, TracePoint.seq)
        )
        for row in session.execute(query):
            points[row.job_id].append(row)
    return {job_id: (lambda_max_of(found), steps_of(found)) for job_id, found in points.items()}


def grid_size(path: Mapping[str, Any] | None) -> int | None:
    """How many λs a stored job spec's ``path`` holds (None: not a path job)."""
    if path is None:
        return None
    if path.get("lambdas") is not None:
        return len(path["lambdas"])
    return int(path["n_lambdas"])


def get_path(session: Session, job_id: int, *, team_id: int | None) -> dict[str, Any]:
    """The team's path job ``job_id`` read back: its status, solver, λ_max, grid size, tol,
    λ rows so far, solver time and whether every λ reached tol. NotFoundError if the team
    has no such job, ConflictError if it is not a path job."""
    job = jobs.get_job(session, job_id, team_id=team_id)
    n_lambdas = grid_size(job.spec.get("path"))
    if n_lambdas is None:
        raise ConflictError(
            f"job {job_id} solves one l1, not a path: its trace is GET /jobs/{job_id}/trace"
        )
    top, steps = job_paths(session, [job.id])[job.id]
    tol = float(job.spec.get("stop", {}).get("tol", 0.0))
    return {
        "job_id": job.id,
        "status": job.status,
        "solver": job.solver,
        "lambda_max": top,
        "n_lambdas": n_lambdas,
        "tol": tol,
        "seconds": steps[-1]["time_s"] if steps else 0.0,
        "reached": path_time_to_eps(steps, n_lambdas, tol) is not None,
        "steps": steps,
    }
