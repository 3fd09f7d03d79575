"""Trace summaries (core.summaries) answer time to ε exactly as the whole traces do: random
traces written through the worker's write path in random batches, on both backends, with
no P*, a P*, a better P*, and a P* the summaries have not caught up with."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sqlalchemy import select, update

from faceoff.core import analysis, summaries
from faceoff.core.db import read_session, session_scope
from faceoff.core.jobs import trace_columns
from faceoff.core.models import QUEUED, Dataset, Job, JobReach, Reference
from faceoff.solvers.trace import TracePoint
from faceoff.worker import store

XS = tuple(analysis.X_FIELDS)


def random_trace(rng: np.random.Generator, n: int, p_star: float) -> list[TracePoint]:
    """A noisy, mostly decreasing trace above ``p_star``, with rises back to its start
    (the worker stores no point with a non-finite value)."""
    decay = rng.uniform(0.3, 0.95)
    subopt = abs(p_star) * rng.uniform(0.1, 3) * decay ** np.arange(n)
    subopt *= np.exp(rng.normal(0, 0.5, n))  # not monotone
    subopt[rng.random(n) < 0.1] = subopt[0]  # rises back
    gap = subopt * rng.uniform(1, 5, n)
    epochs = np.cumsum(rng.uniform(0.1, 2, n))
    return [
        TracePoint(i, 10 * i, float(epochs[i]), 0.01 * (i + 1), p_star + subopt[i], 0.0, gap[i], 1)
        for i in range(n)
    ]


def add_jobs(url: str, count: int) -> list[int]:
    with session_scope(url) as session:
        dataset = Dataset(name="random", source={"kind": "synthetic"})
        session.add(dataset)
        session.flush()
        jobs = [
            Job(
                dataset_id=dataset.id,
                spec={"stop": {"max_seconds": 10}},
                spec_hash=f"h{i}",
                objective_hash=f"objective-{i % 3}",
                solver="dual_cd",
                loss="logistic",
                status=QUEUED,
            )
            for i in range(count)
        ]
        session.add_all(jobs)
        session.flush()
        return [job.id for job in jobs]


def run(url: str, job_id: int, points: list[TracePoint], rng: np.random.Generator) -> None:
    """Write ``points`` as a worker does: claim, batches of random sizes, the last ones at
    the job's end."""
    claim = store.claim_job(url, job_id, "host:1")
    assert claim is not None
    start = 0
    while start < len(points):
        stop = start + int(rng.integers(1, 60))
        if stop >= len(points):
            break
        assert store.save_batch(url, claim, points[start:stop])
        start = stop
    assert store.finish_job(url, claim, store.Event.SUCCEED, "tol", None, points[start:])


def check(url: str, job_ids: list[int]) -> int:
    """Assert summaries and traces agree for every ε of the grid (and one off it), each
    criterion and x; the number of answers compared."""
    compared = 0
    with read_session(url) as session:
        jobs = list(session.scalars(select(Job).where(Job.id.in_(job_ids))))
        refs = {
            r.objective_hash: {"primal": r.primal, "gap": r.gap}
            for r in session.scalars(select(Reference))
        }
        traces = trace_columns(session, jobs)
        for criterion in analysis.CRITERIA:
            for eps in (*summaries.EPS_GRID.values(), 3e-5):
                got = summaries.times_to_eps(session, jobs, criterion, eps, XS, refs)
                for job in jobs:
                    reference = refs.get(job.objective_hash)
                    for x in XS:
                        want = analysis.time_to_eps(traces[job.id], criterion, eps, reference, x)
                        have = got[job.id][x]
                        if want is not None and math.isnan(want):
                            assert have is not None and math.isnan(have)
                        else:
                            assert have == want, (job.id, criterion, eps, x)
                        compared += 1
    return compared


@pytest.fixture
def written(database_url):
    rng = np.random.default_rng(33)
    job_ids = add_jobs(database_url, 9)
    for job_id in job_ids:
        run(database_url, job_id, random_trace(rng, int(rng.integers(1, 300)), 0.25), rng)
    return database_url, job_ids


def test_summaries_answer_as_the_traces_do_as_p_star_changes(written):
    url, job_ids = written
    assert check(url, job_ids) > 0  # no P*: subopt_rel undecidable, gap_rel from summaries
    with session_scope(url) as session:
        assert session.scalar(select(JobReach.job_id).limit(1)) is not None
        for key in ("objective-0", "objective-1", "objective-2"):
            primal = 0.0 if key == "objective-2" else 0.25  # P* = 0: undefined
            session.add(Reference(objective_hash=key, objective={}, primal=primal, gap=1e-12))
            session.flush()
            summaries.on_new_optimum(session, key)
    check(url, job_ids)
    with session_scope(url) as session:  # a better P*, with its summaries
        session.execute(
            update(Reference).where(Reference.objective_hash == "objective-0").values(primal=0.2)
        )
        summaries.on_new_optimum(session, "objective-0")
    check(url, job_ids)
    with session_scope(url) as session:  # a better P* the summaries have not caught up with
        session.execute(
            update(Reference).where(Reference.objective_hash == "objective-1").values(primal=0.24)
        )
    check(url, job_ids)


def test_a_rerun_starts_its_summary_afresh(written):
    """A job requeued and run again (its earlier trace deleted) is summarized anew."""
    url, job_ids = written
    rng = np.random.default_rng(5)
    with session_scope(url) as session:
        session.execute(update(Job).where(Job.id == job_ids[0]).values(status=QUEUED))
    run(url, job_ids[0], random_trace(rng, 40, 0.25), rng)
    check(url, job_ids[:1])


def test_the_summaries_are_read_not_the_traces(written, monkeypatch):
    """Up-to-date summaries answer alone: not one trace point is read."""
    url, job_ids = written

    def no_trace(*args, **kwargs):
        raise AssertionError("a trace was read")

    monkeypatch.setattr(summaries, "_read_traces", no_trace)
    with read_session(url) as session:
        jobs = list(session.scalars(select(Job).where(Job.id.in_(job_ids))))
        found = summaries.times_to_eps(session, jobs, "gap_rel", 1e-4, XS, {})
    assert len(found) == len(job_ids)
