"""Synthetic runs written straight into a database with the ORM, for the dashboard's tests.

Traces decrease geometrically in epochs like real linear convergence: P − P* = Δ·ρ^epoch,
with a certified gap a little above P − P*.
"""

from __future__ import annotations

import math
from datetime import timedelta
from types import SimpleNamespace
from typing import Any

import numpy as np
from sqlalchemy import insert

from faceoff.core import summaries
from faceoff.core.db import session_scope
from faceoff.core.models import (
    RUNNING,
    SUCCEEDED,
    Dataset,
    Job,
    Reference,
    Sweep,
    TracePoint,
    utcnow,
)
from faceoff.core.specs import JobSpec, canonical_job, objective_hash, spec_hash

P_STAR = 0.3132616875  # the reference optimum of every synthetic objective
SOURCE = {
    "kind": "synthetic",
    "generator": "classification",
    "n_samples": 300,
    "n_features": 40,
    "density": 0.3,
    "seed": 0,
}
N_SAMPLES = SOURCE["n_samples"]
# (solver, params, contraction per epoch)
SETTINGS = (
    ("dual_cd", {"sampling": "importance"}, 0.55),
    ("dual_cd", {}, 0.62),
    ("primal_cd", {}, 0.75),
    ("spdc", {"batch_size": 8, "sampling": "weighted"}, 0.68),
)

# twenty settings of ours and of the peers: the size of a figure the dashboard must keep legible
TWENTY = (
    ("primal_cd", {}, 0.8),
    ("primal_cd", {"step": "newton"}, 0.7),
    ("dual_cd", {}, 0.62),
    ("dual_cd", {"sampling": "importance"}, 0.55),
    ("dual_cd", {"sampling": "permutation", "shrinking": "on"}, 0.6),
    ("agd", {}, 0.9),
    ("lbfgs", {}, 0.85),
    ("saga", {}, 0.75),
    ("saga", {"step_scale": 0.5}, 0.82),
    ("spdc", {}, 0.7),
    ("spdc", {"batch_size": 8}, 0.66),
    ("spdc", {"batch_size": 8, "sampling": "weighted"}, 0.68),
    ("dgpd", {}, 0.93),
    ("sklearn.liblinear", {}, 0.64),
    ("sklearn.lbfgs", {}, 0.86),
    ("sklearn.saga", {}, 0.88),
    ("cyanure", {}, 0.58),
    ("cyanure", {"solver": "miso"}, 0.72),
    ("lightning.cd", {}, 0.78),
    ("lightning.saga", {}, 0.9),
)


def trace(
    rate: float, n_points: int, seconds_per_epoch: float, start: int = 0, per_decade: float = 30
) -> list[dict]:
    """Points ``start ≤ seq < n_points`` of a trace log-spaced in epochs from 0.01."""
    points = []
    for seq in range(start, n_points):
        epoch = 0.01 * 10 ** (seq / per_decade)
        subopt = 0.4 * rate**epoch + 1e-15
        primal = P_STAR + subopt
        gap = subopt * (1.6 + 0.3 * math.sin(seq))
        points.append(
            {
                "seq": seq,
                "iteration": int(epoch * N_SAMPLES),
                "epoch": epoch,
                "time_s": 0.002 + epoch * seconds_per_epoch,
                "primal": primal,
                "dual": primal - gap,
                "gap": gap,
                "nnz_x": 40,
                "extras": {},
            }
        )
    return points


def add_dataset(url: str, name: str = "synthetic-300x40") -> int:
    with session_scope(url) as session:
        dataset = Dataset(name=name, source=dict(SOURCE), n_samples=300, n_features=40)
        session.add(dataset)
        session.flush()
        return dataset.id


def _spec(dataset: str, solver: str, params: dict, l2: float, seed: int) -> JobSpec:
    spec = JobSpec(dataset=dataset, loss="logistic", l2=l2, solver=solver, params=params, seed=seed)
    return canonical_job(spec)


def add_job(
    session,
    dataset_id: int,
    dataset: str,
    solver: str,
    params: dict[str, Any],
    *,
    l2: float = 1e-3,
    seed: int = 0,
    sweep_id: int | None = None,
    status: str = SUCCEEDED,
    points: list[dict] = (),
) -> Job:
    spec = _spec(dataset, solver, params, l2, seed)
    job = Job(
        sweep_id=sweep_id,
        dataset_id=dataset_id,
        spec=spec.model_dump(mode="json"),
        spec_hash=spec_hash(spec),
        objective_hash=objective_hash(spec.objective()),
        solver=solver,
        loss=spec.loss,
        status=status,
        stop_reason="tol" if status == SUCCEEDED else None,
        started_at=utcnow() - timedelta(seconds=5),
        finished_at=utcnow() if status == SUCCEEDED else None,
    )
    session.add(job)
    session.flush()
    _write_points(session, job, points)
    return job


def _write_points(session, job: Job, points: list[dict]) -> None:
    if points:
        session.execute(insert(TracePoint), [{"job_id": job.id, **p} for p in points])
        summaries.record(session, job.id, [SimpleNamespace(**p) for p in points])
        last = points[-1]
        job.n_points = last["seq"] + 1
        job.epoch, job.time_s = last["epoch"], last["time_s"]
        job.primal, job.gap = last["primal"], last["gap"]


def add_reference(session, objective: str, job_id: int | None = None) -> None:
    session.add(
        Reference(
            objective_hash=objective,
            objective={"synthetic": True},
            primal=P_STAR,
            gap=1e-13,
            job_id=job_id,
        )
    )


def add_sweep(
    url: str,
    settings=SETTINGS,
    l2s: tuple[float, ...] = (1e-3,),
    seeds: tuple[int, ...] = (0,),
    n_points: int = 240,
    reference: bool = True,
    dataset_name: str = "synthetic-300x40",
) -> tuple[int, list[int]]:
    """A finished sweep (settings × l2 × seeds) with traces and, optionally, the reference
    P* of each objective; returns the sweep id and its job ids."""
    dataset_id = add_dataset(url, dataset_name)
    rng = np.random.default_rng(0)
    with session_scope(url) as session:
        spec = {  # what POST /sweeps would have stored for these jobs
            "name": "synthetic faceoff",
            "datasets": [dataset_name],
            "losses": ["logistic"],
            "l2": list(l2s),
            "solvers": [{"solver": solver, "params": params} for solver, params, _ in settings],
            "seeds": list(seeds),
        }
        sweep = Sweep(name="synthetic faceoff", spec=spec)
        session.add(sweep)
        session.flush()
        jobs = []
        for solver, params, rate in settings:
            for l2 in l2s:
                for seed in seeds:
                    jitter = rate * (1 + 0.03 * rng.standard_normal()) * (l2 / l2s[0]) ** 0.02
                    points = trace(
                        min(jitter, 0.97),
                        n_points,
                        0.004 + 0.002 * seed,
                        per_decade=max(30, n_points / 4),
                    )
                    jobs.append(
                        add_job(
                            session,
                            dataset_id,
                            dataset_name,
                            solver,
                            params,
                            l2=l2,
                            seed=seed,
                            sweep_id=sweep.id,
                            points=points,
                        )
                    )
        sweep.n_jobs = len(jobs)
        if reference:
            for digest in sorted({j.objective_hash for j in jobs}):
                add_reference(session, digest)
            session.flush()
            summaries.rebuild(session, [j.id for j in jobs])  # against the new P*
        return sweep.id, [j.id for j in jobs]


def add_running_job(url: str, n_points: int = 20) -> int:
    """A running dual_cd job with the first ``n_points`` points of its trace."""
    dataset_id = add_dataset(url, "synthetic-running")
    with session_scope(url) as session:
        job = add_job(
            session,
            dataset_id,
            "synthetic-running",
            "dual_cd",
            {},
            status=RUNNING,
            points=trace(0.6, n_points, 0.01),
        )
        add_reference(session, job.objective_hash)
        session.flush()
        summaries.rebuild(session, [job.id])
        return job.id


def append_points(url: str, job_id: int, count: int) -> int:
    """Record ``count`` more trace points of a running job, as a worker would; returns the
    new number of points."""
    with session_scope(url) as session:
        job = session.get(Job, job_id)
        points = trace(0.6, job.n_points + count, 0.01, start=job.n_points)
        _write_points(session, job, points)
        return job.n_points
