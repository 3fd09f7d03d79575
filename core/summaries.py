"""Summaries of traces, written once as the points arrive and read by every page: for each ε
of :data:`EPS_GRID` and each criterion of :data:`faceoff.core.analysis.CRITERIA`, the first
point of a job's trace that reaches it (its seq, iteration, epoch and time: ``job_reach``),
and what the summary covers (``job_summaries``: the points summarized and the P* that the
``subopt_rel`` rows were computed against). The final values are the job's own columns
(``n_points``, ``epoch``, ``time_s``, ``primal``, ``gap``).

Written by :func:`record` in the transaction that writes a batch of points (the worker's
``save_batch`` and ``finish_job``), so a summary never runs ahead of its trace; a rerun
starts it afresh (:func:`forget`). When an objective's P* improves
(core.references.record_reference) its jobs' ``subopt_rel`` rows are computed again from
their traces (:func:`rebuild`).

Read by :func:`times_to_eps`, which answers exactly as :func:`faceoff.core.analysis.time_to_eps`
of the whole trace would: a job whose summary does not cover its trace (points written
since, a P* other than the current one: a race with a new optimum) is answered from its
trace instead, as is an ε off the grid. So no answer depends on when summaries were
written, only the cost does.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple, cast

import numpy as np
from sqlalchemy import Table, delete, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from faceoff.core import analysis, jobs
from faceoff.core.models import Job, JobReach, JobSummary, Reference

# ε = 10^-k for k = 1 … 12: the ε the pages offer, each a decade
EPS_GRID: dict[int, float] = {k: float(f"1e-{k}") for k in range(1, 13)}
SUMMARY_FIELDS = ("seq", "iteration", "epoch", "time_s", "primal", "gap")
_INSERTS: dict[str, Callable[[Table], Any]] = {
    "postgresql": postgresql.insert,
    "sqlite": sqlite.insert,
}


def grid_exponent(eps: float) -> int | None:
    """k with ε = 10^-k on :data:`EPS_GRID`; None when ε is off the grid."""
    for k, value in EPS_GRID.items():
        if eps == value:
            return k
    return None


def reaching(
    trace: Mapping[str, Sequence[float]], p_star: float | None, criteria: Iterable[str]
) -> list[dict[str, Any]]:
    """The ``job_reach`` rows of a trace (columns of :data:`SUMMARY_FIELDS`, in seq order):
    for each criterion and each ε of the grid that a point reaches, the first such point.
    ``subopt_rel`` gives none without a P* (None) or with P* = 0, where it is undefined."""
    out = []
    reference = None if p_star is None else {"primal": p_star}
    for criterion in criteria:
        values = analysis.measure(trace, criterion, reference)
        if values is None or not len(values):
            continue
        # the first index at which the running minimum is ≤ ε is the first value ≤ ε;
        # NaN never reaches (fmin skips it)
        best = np.fmin.accumulate(np.where(np.isnan(values), np.inf, values))
        for k, eps in EPS_GRID.items():
            i = int(np.searchsorted(-best, -eps, side="left"))
            if i == len(best):
                break  # a smaller ε is not reached either
            out.append(
                {
                    "criterion": criterion,
                    "k": k,
                    **{f: trace[f][i] for f in ("seq", "iteration", "epoch", "time_s")},
                }
            )
    return out


def _insert(session: Session, model: Any) -> Any:
    """An INSERT of ``model`` in the session's dialect (with ON CONFLICT clauses)."""
    return _INSERTS[session.get_bind().dialect.name](cast(Table, model.__table__))


def _insert_ignore(session: Session, rows: list[dict[str, Any]]) -> None:
    if rows:
        session.execute(_insert(session, JobReach).on_conflict_do_nothing(), rows)


def _set_summaries(session: Session, rows: list[dict[str, Any]]) -> None:
    """Insert or update ``job_summaries`` rows (job_id, n_points, p_star)."""
    if rows:
        insert = _insert(session, JobSummary)
        session.execute(
            insert.on_conflict_do_update(
                index_elements=["job_id"],
                set_={"n_points": insert.excluded.n_points, "p_star": insert.excluded.p_star},
            ),
            rows,
        )


def _p_star(session: Session, job_id: int) -> float | None:
    """The current P* of the job's objective (None: none)."""
    key = select(Job.objective_hash).where(Job.id == job_id).scalar_subquery()
    return session.scalar(select(Reference.primal).where(Reference.objective_hash == key))


def record(session: Session, job_id: int, points: Sequence[Any]) -> None:
    """Summarize a batch of the job's trace points (objects with the attributes of
    :data:`SUMMARY_FIELDS`, in seq order), written in this transaction. Continues the
    summary when it covers the points before this batch with the current P*; otherwise
    (a first batch after a gap, a new P*) summarizes the whole stored trace again."""
    if not points:
        return
    p_star = _p_star(session, job_id)
    first = points[0].seq
    if first == 0:
        fresh = {"job_id": job_id, "n_points": 0, "p_star": p_star}
        session.execute(_insert(session, JobSummary).values(fresh).on_conflict_do_nothing())
    query = select(JobSummary.n_points, JobSummary.p_star).where(JobSummary.job_id == job_id)
    if session.get_bind().dialect.name == "postgresql":
        query = query.with_for_update()
    summary = session.execute(query).one_or_none()
    if summary is None or summary.n_points != first or summary.p_star != p_star:
        rebuild(session, [job_id])
        return
    trace = {f: [getattr(p, f) for p in points] for f in SUMMARY_FIELDS}
    rows = reaching(trace, p_star, analysis.CRITERIA)
    _insert_ignore(session, [{"job_id": job_id, **row} for row in rows])
    covered = update(JobSummary).where(JobSummary.job_id == job_id)
    session.execute(covered.values(n_points=points[-1].seq + 1))


def forget(session: Session, job_id: int) -> None:
    """Drop the job's summary (its trace is being deleted for a rerun)."""
    session.execute(delete(JobReach).where(JobReach.job_id == job_id))
    session.execute(delete(JobSummary).where(JobSummary.job_id == job_id))


def _read_traces(
    session: Session, job_ids: Sequence[int], fields: Sequence[str] = SUMMARY_FIELDS
) -> dict[int, dict[str, list[Any]]]:
    """{job id: {field: values in seq order}} of the whole traces of ``job_ids``."""
    keys = [JobKey(job_id, "", 0) for job_id in job_ids]
    return jobs.trace_columns(session, keys, fields)


def rebuild(session: Session, job_ids: Sequence[int]) -> None:
    """Summarize the whole stored traces of ``job_ids`` again, against the current P* of
    each one's objective."""
    job_ids = sorted(set(job_ids))
    if not job_ids:
        return
    query = select(Job.id, Job.objective_hash).where(Job.id.in_(job_ids))
    keys: dict[int, str] = {job_id: key for job_id, key in session.execute(query)}
    found = select(Reference.objective_hash, Reference.primal).where(
        Reference.objective_hash.in_(set(keys.values()))
    )
    optima: dict[str, float] = {key: primal for key, primal in session.execute(found)}
    traces = _read_traces(session, job_ids)
    session.execute(delete(JobReach).where(JobReach.job_id.in_(job_ids)))
    rows, summaries = [], []
    for job_id in job_ids:
        p_star = optima.get(keys.get(job_id, ""))
        trace = traces[job_id]
        rows += [{"job_id": job_id, **r} for r in reaching(trace, p_star, analysis.CRITERIA)]
        covered = trace["seq"][-1] + 1 if trace["seq"] else 0
        summaries.append({"job_id": job_id, "n_points": covered, "p_star": p_star})
    _set_summaries(session, summaries)
    _insert_ignore(session, rows)


def on_new_optimum(session: Session, objective_hash: str) -> int:
    """Summarize again the jobs of an objective whose P* has just changed; how many. A job
    whose trace was pruned (core.retention) keeps its summary: its ``subopt_rel`` times
    are then read from what is left of its trace (:func:`times_to_eps`)."""
    pruned = select(JobSummary.job_id).where(JobSummary.pruned.is_not(None))
    job_ids = list(
        session.scalars(
            select(Job.id).where(
                Job.objective_hash == objective_hash, Job.n_points > 0, Job.id.not_in(pruned)
            )
        )
    )
    rebuild(session, job_ids)
    return len(job_ids)


# ---------------------------------------------------------------- reading


class JobKey(NamedTuple):
    """What :func:`times_to_eps` needs of a job (a Job row has these attributes)."""

    id: int
    objective_hash: str
    n_points: int


def times_to_eps(
    session: Session,
    jobs: Sequence[Any],
    criterion: str,
    eps: float,
    xs: Sequence[str],
    references: Mapping[str, Mapping[str, float]],
) -> dict[int, dict[str, float | None]]:
    """{job id: {x: time to ε}} for ``jobs`` (with ``id``, ``objective_hash`` and
    ``n_points``) and each ``x`` of :data:`analysis.X_FIELDS`: exactly
    :func:`faceoff.core.analysis.time_to_eps` of each job's whole trace (None: not reached,
    NaN: undecidable), read from the summaries where they cover the trace and from the
    trace otherwise. ``references``: {objective hash: {"primal": P*, ...}} of the jobs'
    objectives that have one."""
    if criterion not in analysis.CRITERIA:
        raise ValueError(
            f"unknown criterion {criterion!r}; accepted: {', '.join(analysis.CRITERIA)}"
        )
    unknown = set(xs) - set(analysis.X_FIELDS)
    if unknown:
        raise ValueError(f"unknown x {sorted(unknown)}; accepted: {', '.join(analysis.X_FIELDS)}")
    out: dict[int, dict[str, float | None]] = {}
    pending = []
    for job in jobs:
        reference = references.get(job.objective_hash)
        if criterion == "subopt_rel" and (reference is None or reference["primal"] == 0):
            out[job.id] = dict.fromkeys(xs, math.nan)
        elif job.n_points == 0:
            out[job.id] = dict.fromkeys(xs, None)
        else:
            pending.append(job)
    k = grid_exponent(eps)
    stale = pending
    if k is not None and pending:
        ids = [job.id for job in pending]
        covered: dict[int, tuple[int, float | None]] = {}
        found: dict[int, dict[str, float | None]] = {}
        fields = [getattr(JobReach, analysis.X_FIELDS[x]) for x in xs]
        for start in range(0, len(ids), 5000):
            chunk = ids[start : start + 5000]
            summaries = select(JobSummary.job_id, JobSummary.n_points, JobSummary.p_star).where(
                JobSummary.job_id.in_(chunk)
            )
            covered.update((j, (n, p)) for j, n, p in session.execute(summaries))
            reach = select(JobReach.job_id, *fields).where(
                JobReach.job_id.in_(chunk), JobReach.criterion == criterion, JobReach.k == k
            )
            for job_id, *values in session.execute(reach):
                found[job_id] = {x: float(v) for x, v in zip(xs, values, strict=True)}
        stale = []
        for job in pending:
            n, p_star = covered.get(job.id, (-1, None))
            reference = references.get(job.objective_hash)
            current = None if reference is None else reference["primal"]
            if n != job.n_points or (criterion == "subopt_rel" and p_star != current):
                stale.append(job)
            else:
                out[job.id] = found.get(job.id) or dict.fromkeys(xs, None)
    if stale:
        needed = ("epoch", "time_s", "iteration", "primal", "gap")
        traces = _read_traces(session, [job.id for job in stale], needed)
        for job in stale:
            reference = references.get(job.objective_hash)
            out[job.id] = {
                x: analysis.time_to_eps(traces[job.id], criterion, eps, reference, x) for x in xs
            }
    return out


def times_to_settle(
    session: Session, jobs_: Sequence[Any], name: str, delta: float, xs: Sequence[str]
) -> dict[int, dict[str, Any]]:
    """{job id: {"held_out": whether its trace has held-out measure ``name``, x: its time
    to settle within ``delta``}} for ``jobs_`` (with ``id``) and each ``x`` of
    :data:`analysis.X_FIELDS`: :func:`faceoff.core.analysis.time_to_settle` of each job's
    whole trace (a final value needs every point)."""
    fields = tuple(dict.fromkeys(analysis.X_FIELDS[x] for x in xs))
    traces = jobs.trace_columns(session, jobs_, (*fields, "test"))
    out: dict[int, dict[str, Any]] = {}
    for job_id, trace in traces.items():
        held = analysis.held_out(trace["test"], name) is not None
        times = {x: analysis.time_to_settle(trace, name, delta, x) if held else None for x in xs}
        out[job_id] = {"held_out": held, **times}
    return out
