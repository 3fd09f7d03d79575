"""Read-only queries of the dashboard: plain SQLAlchemy selects returning plain dicts.

Sessions refuse to flush, and are rolled back when done: the dashboard never writes.
Every query is for one viewer's ``team_id`` (None with authentication off): its jobs and
sweeps, the shared datasets and its uploads (core.auth); reference optima are shared.
Traces are downsampled in the database (every k-th ``seq``, plus the last point), so a
figure never carries more than ``max_points`` points per job.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sqlalchemy import and_, event, func, or_, select
from sqlalchemy.orm import Session

from faceoff.core.auth import owned_by, visible_datasets
from faceoff.core.db import session_factory
from faceoff.core.models import QUEUED, RUNNING, Dataset, Job, Reference, Sweep, TracePoint

MAX_POINTS = 500  # per job and figure
ACTIVE = (QUEUED, RUNNING)
TRACE_FIELDS = ("seq", "iteration", "epoch", "time_s", "primal", "gap")


def _refuse_flush(*_args) -> None:
    raise RuntimeError("the dashboard is read-only: it never writes to the database")


@contextmanager
def read_session(url: str) -> Iterator[Session]:
    """A session that cannot flush and is rolled back at the end."""
    session = session_factory(url)()
    event.listen(session, "before_flush", _refuse_flush)
    try:
        yield session
    finally:
        session.rollback()
        session.close()


def _job_row(job: Job, dataset_name: str) -> dict[str, Any]:
    spec = job.spec
    stop = spec.get("stop", {})
    return {
        "id": job.id,
        "sweep_id": job.sweep_id,
        "dataset_id": job.dataset_id,
        "dataset": dataset_name,
        "solver": job.solver,
        "params": spec.get("params", {}),
        "seed": spec.get("seed", 0),
        "loss": job.loss,
        "gamma": spec.get("gamma", 1.0),
        "l1": spec.get("l1", 0.0),
        "l2": spec.get("l2"),
        "normalize": spec.get("normalize", "none"),
        "objective_hash": job.objective_hash,
        "status": job.status,
        "stop_reason": job.stop_reason,
        "n_points": job.n_points,
        "epoch": job.epoch,
        "time_s": job.time_s,
        "primal": job.primal,
        "gap": job.gap,
        "progress": progress(job.epoch, job.time_s, stop),
        "created_at": job.created_at,
    }


def progress(epoch: float | None, time_s: float | None, stop: dict[str, Any]) -> float:
    """Fraction of the epoch or time budget used, whichever is larger (0 to 1)."""
    fractions = [0.0]
    if epoch is not None and stop.get("max_epochs"):
        fractions.append(epoch / stop["max_epochs"])
    if time_s is not None and stop.get("max_seconds"):
        fractions.append(time_s / stop["max_seconds"])
    return min(1.0, max(fractions))


@dataclass(frozen=True)
class JobQuery:
    """Filters of the jobs table; None means any."""

    sweep_id: int | None = None
    dataset_id: int | None = None
    solver: str | None = None
    loss: str | None = None
    status: str | None = None
    job_ids: tuple[int, ...] | None = None


def _filtered(query, where: JobQuery, team_id: int | None):
    query = query.where(owned_by(Job.team_id, team_id))
    for column, value in (
        (Job.sweep_id, where.sweep_id),
        (Job.dataset_id, where.dataset_id),
        (Job.solver, where.solver),
        (Job.loss, where.loss),
        (Job.status, where.status),
    ):
        if value is not None:
            query = query.where(column == value)
    if where.job_ids is not None:
        query = query.where(Job.id.in_(where.job_ids))
    return query


def _jobs(
    session: Session, where: JobQuery, team_id: int | None, limit: int | None
) -> list[dict[str, Any]]:
    query = select(Job, Dataset.name).join(Dataset, Job.dataset_id == Dataset.id)
    query = _filtered(query, where, team_id).order_by(Job.id.desc())
    if limit is not None:
        query = query.limit(limit)
    return [_job_row(job, name) for job, name in session.execute(query)]


def list_jobs(
    url: str, where: JobQuery, limit: int = 1000, *, team_id: int | None
) -> tuple[list[dict[str, Any]], int]:
    """The team's newest ``limit`` jobs matching ``where`` and the number of all of them."""
    with read_session(url) as session:
        rows = _jobs(session, where, team_id, limit)
        if len(rows) < limit:
            return rows, len(rows)
        count = session.scalar(_filtered(select(func.count(Job.id)), where, team_id))
        return rows, int(count or 0)


def filter_options(url: str, *, team_id: int | None) -> dict[str, list]:
    """What the team's jobs table can be filtered by: sweeps and datasets as (id, label),
    and the solvers, losses and statuses present."""
    with read_session(url) as session:
        sweeps = session.execute(
            select(Sweep.id, Sweep.name)
            .where(owned_by(Sweep.team_id, team_id))
            .order_by(Sweep.id.desc())
        ).all()
        datasets = session.execute(
            select(Dataset.id, Dataset.name).where(visible_datasets(team_id)).order_by(Dataset.name)
        ).all()
        distinct = {
            name: sorted(
                session.scalars(select(column).where(owned_by(Job.team_id, team_id)).distinct())
            )
            for name, column in (("solver", Job.solver), ("loss", Job.loss), ("status", Job.status))
        }
    return {
        "sweep": [(i, f"#{i} {name}" if name else f"#{i}") for i, name in sweeps],
        "dataset": [(i, name) for i, name in datasets],
        **distinct,
    }


def _downsampled_traces(
    session: Session, job_ids: Sequence[int], max_points: int | None
) -> dict[int, dict[str, list]]:
    """Trace columns per job: every k-th seq and the last, at most ``max_points`` per job."""
    traces: dict[int, dict[str, list]] = {j: {f: [] for f in TRACE_FIELDS} for j in job_ids}
    if not job_ids:
        return traces
    columns = [TracePoint.job_id] + [getattr(TracePoint, f) for f in TRACE_FIELDS]
    query = select(*columns).where(TracePoint.job_id.in_(job_ids))
    if max_points is not None:
        spans = session.execute(
            select(TracePoint.job_id, func.count(), func.max(TracePoint.seq))
            .where(TracePoint.job_id.in_(job_ids))
            .group_by(TracePoint.job_id)
        ).all()
        wanted = []
        for job_id, count, last in spans:
            if count <= max_points:
                wanted.append(TracePoint.job_id == job_id)
                continue
            stride = math.ceil((last + 1) / (max_points - 1))
            wanted.append(
                and_(
                    TracePoint.job_id == job_id,
                    or_(TracePoint.seq % stride == 0, TracePoint.seq == last),
                )
            )
        if not wanted:
            return traces
        query = select(*columns).where(or_(*wanted))
    for row in session.execute(query.order_by(TracePoint.job_id, TracePoint.seq)):
        trace = traces[row[0]]
        for name, value in zip(TRACE_FIELDS, row[1:], strict=True):
            trace[name].append(value)
    return traces


def references(session: Session, hashes: set[str]) -> dict[str, dict[str, float]]:
    """The stored P* of each objective hash that has one: references are keyed by the
    content of the data (core.objectives), as a job's ``objective_hash`` is once a worker
    has run it."""
    if not hashes:
        return {}
    query = select(Reference.objective_hash, Reference.primal, Reference.gap).where(
        Reference.objective_hash.in_(hashes)
    )
    return {h: {"primal": p, "gap": g} for h, p, g in session.execute(query)}


def job_traces(
    url: str, where: JobQuery, max_points: int | None = MAX_POINTS, *, team_id: int | None
) -> tuple[list[dict[str, Any]], dict[str, dict[str, float]]]:
    """The team's job rows with their (downsampled) ``trace``, and the references P* they
    need."""
    with read_session(url) as session:
        rows = _jobs(session, where, team_id, None)
        traces = _downsampled_traces(session, [r["id"] for r in rows], max_points)
        refs = references(session, {r["objective_hash"] for r in rows})
    for row in rows:
        row["trace"] = traces[row["id"]]
    rows.sort(key=lambda r: r["id"])
    return rows, refs


def sweep_summary(url: str, sweep_id: int, *, team_id: int | None) -> dict[str, Any] | None:
    """A sweep's id, name, spec and job counts by status; None if the team has no such
    sweep."""
    with read_session(url) as session:
        sweep = session.scalars(
            select(Sweep).where(Sweep.id == sweep_id, owned_by(Sweep.team_id, team_id))
        ).one_or_none()
        if sweep is None:
            return None
        counts = dict(
            session.execute(
                select(Job.status, func.count())
                .where(Job.sweep_id == sweep_id)
                .group_by(Job.status)
            ).all()
        )
        return {"id": sweep.id, "name": sweep.name, "spec": sweep.spec, "counts": counts}


def dataset_summary(url: str, dataset_id: int, *, team_id: int | None) -> dict[str, Any] | None:
    """A dataset's fields and the objectives the team's jobs on it minimize; None if the
    team may not see it."""
    with read_session(url) as session:
        dataset = session.scalars(
            select(Dataset).where(Dataset.id == dataset_id, visible_datasets(team_id))
        ).one_or_none()
        if dataset is None:
            return None
        specs = session.scalars(
            select(Job.spec).where(Job.dataset_id == dataset_id, owned_by(Job.team_id, team_id))
        ).all()
        objectives = sorted(
            {
                (
                    s["loss"],
                    s.get("gamma", 1.0),
                    s["l2"],
                    s.get("l1", 0.0),
                    s.get("normalize", "none"),
                )
                for s in specs
            }
        )
        return {
            "id": dataset.id,
            "name": dataset.name,
            "source": dataset.source,
            "n_samples": dataset.n_samples,
            "n_features": dataset.n_features,
            "nnz": dataset.nnz,
            "sha256": dataset.sha256,
            "stats": dataset.stats,
            "objectives": [
                dict(zip(("loss", "gamma", "l2", "l1", "normalize"), o, strict=True))
                for o in objectives
            ],
        }


def active(rows: Sequence[dict[str, Any]]) -> bool:
    """Whether any of the jobs is queued or running (its view should refresh)."""
    return any(r["status"] in ACTIVE for r in rows)
