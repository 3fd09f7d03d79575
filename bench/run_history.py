"""A team's history at scale (issue 33): fill a fresh PostgreSQL database with realistic jobs
through the worker's own write path, then measure every target of the issue on it.

The database (``faceoff_history_<random>``, dropped afterwards unless ``--keep``) is
migrated to head; teams, datasets, sweeps, jobs and reference optima are inserted directly
(what POST /sweeps and the references' certifying jobs would have left), and every trace is
written by ``--writers`` processes through :mod:`faceoff.worker.store` exactly as a worker
does: ``claim_job``, the worker's own ``TraceWriter`` with its batch settings (the first
point at once, then ``save_batch`` every ``TRACE_BATCH_POINTS`` points or
``TRACE_BATCH_SECONDS``; a batch of ≥ 200 points goes by COPY into a staging table, then
``INSERT ... SELECT ... ON CONFLICT DO NOTHING``; the trace summaries of
:mod:`faceoff.core.summaries` in the same transaction) and ``finish_job``. The writers
write the phase's last ``--ingest-jobs`` jobs, then 16 long runs of 12,500 points (full
batches: the rate a point costs, without the cost a job costs). A monitor samples
``pg_stat_activity`` every 20 ms for backends waiting on a lock.

Jobs: ``--jobs`` over 5 teams, 2,000 sweeps (sweep 1 holds 2,000 jobs, the others share the
rest), 50 datasets × 2 losses × 3 l2 weights, 8 solver settings, seeds; about 500 points a
job (300 to 700, log-spaced in epochs, linear convergence with noise); 92 % succeeded, 4 %
failed, 2 % cancelled, 1 % running (half a trace), 1 % queued (none); three machines.

Then, with each phase's jobs (``--jobs 10000,100000`` fills to 10k, measures, fills on to
100k, measures), every target is timed as server time: the API in process (Starlette's
TestClient, no network), the dashboard's page callbacks in process (Flask's test client),
``--repeats`` requests each, p95. ``EXPLAIN (ANALYZE, BUFFERS)`` of the hot queries names the
index each uses and the rows it touches. Writes ``bench/results/history.md``.

    python -m bench.run_history --jobs 10000,100000 [--writers 8] [--keep]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import secrets
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any

import numpy as np
import psycopg
from sqlalchemy import func, insert, select, update

from bench.common import Log, md_table, write_results
from bench.service_stack import REPO, percentiles

PG = os.environ.get("FACEOFF_BENCH_PG", "127.0.0.1:5432")
ADMIN_DSN = f"postgresql://postgres@{PG}/postgres"
TEAMS = 5
SWEEPS = 2000
BIG_SWEEP = 2000  # jobs of sweep 1: the sweep page's target
DATASETS = 50
LOSSES = ("logistic", "squared")
L2S = (1e-3, 1e-4, 1e-5)
SETTINGS = (
    ("dual_cd", {}),
    ("dual_cd", {"sampling": "importance"}),
    ("primal_cd", {}),
    ("spdc", {"batch_size": 8}),
    ("saga", {}),
    ("agd", {}),
    ("lbfgs", {}),
    ("sklearn.lbfgs", {}),
)
STATUSES = (("succeeded", 0.92), ("failed", 0.04), ("cancelled", 0.02), ("running", 0.01))
MACHINES = (
    {"host": "bench-a", "cpu": "Intel Xeon (Cascadelake)", "physical_cores": 2},
    {"host": "bench-b", "cpu": "AMD EPYC 7B13", "physical_cores": 8},
    {"host": "bench-c", "cpu": "Intel Xeon (Cascadelake)", "physical_cores": 2},
)
POINTS = (300, 700)  # points a job, uniform
LONG_JOBS, LONG_POINTS = 16, 12_500  # the long runs of each phase's ingestion: 200,000 points
BULK_PROCESSES = 2
REPEATS = 20
LOCK_SAMPLE_S = 0.02
TARGETS = {  # seconds, p95 of server time
    "GET /jobs (worst filter/page)": 0.050,
    "GET /jobs/{id}/trace?max_points=500": 0.050,
    "GET /references": 0.050,
    "sweep page, 2,000-job sweep": 1.0,
    "profiles page": 1.0,
    "runs index page": 0.300,
    "sweeps index page": 0.300,
    "compare page, 60 curves": 1.0,
}

log = Log()


# ----------------------------------------------------------------------------- database


def create_database() -> str:
    """A new database ``faceoff_history_<random>``: its SQLAlchemy URL."""
    name = f"faceoff_history_{secrets.token_hex(4)}"
    with psycopg.connect(ADMIN_DSN, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"postgresql+psycopg://postgres@{PG}/{name}"


def drop_database(url: str) -> None:
    name = url.rsplit("/", 1)[1]
    with psycopg.connect(ADMIN_DSN, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def dsn(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://")


# ----------------------------------------------------------------------------- the jobs


@dataclass(frozen=True)
class Plan:
    """A job to write: its id, final status, points and convergence."""

    job_id: int
    status: str
    n_points: int
    rate: float  # contraction of P − P* per epoch
    p_star: float
    sec_per_epoch: float
    seed: int


def sweep_sizes(n_jobs: int) -> list[int]:
    """Jobs of each of the SWEEPS sweeps: sweep 1 BIG_SWEEP (or all), the rest shared."""
    big = min(BIG_SWEEP, n_jobs)
    rest, others = n_jobs - big, SWEEPS - 1
    return [big] + [rest // others + (1 if i < rest % others else 0) for i in range(others)]


def objective_key(dataset: int, loss: str, l2: float) -> str:
    return f"{dataset:02d}-{loss}-{l2:g}".ljust(64, "0")[:64]


def p_star_of(dataset: int, loss: str, l2: float) -> float:
    return 0.2 + 0.01 * dataset + (0.3 if loss == "squared" else 0.0) + 10 * l2


def seed_rows(url: str, n_jobs: int, rng: np.random.Generator) -> None:
    """Teams, datasets, sweeps (empty), reference optima: what every phase shares."""
    from faceoff.core.db import session_scope
    from faceoff.core.models import Dataset, Reference, Sweep, Team

    with session_scope(url) as session:
        session.execute(insert(Team), [{"name": f"team-{t}"} for t in range(TEAMS)])
        session.execute(
            insert(Dataset),
            [
                {
                    "name": f"hist-{d:02d}",
                    "source": {"kind": "synthetic", "generator": "classification", "seed": d},
                    "n_samples": 1000 * (1 + d),
                    "n_features": 100 + 10 * d,
                    "nnz": 50_000 * (1 + d),
                    "labels": {"kind": "classes", "n_classes": 2},
                }
                for d in range(DATASETS)
            ],
        )
        sizes = sweep_sizes(n_jobs)
        session.execute(
            insert(Sweep),
            [
                {
                    "team_id": 1 + s % TEAMS,
                    "name": f"history {s + 1}",
                    "spec": {
                        "datasets": [f"hist-{s % DATASETS:02d}"],
                        "losses": list(LOSSES),
                        "l2": list(L2S),
                        "solvers": [{"solver": n, "params": p} for n, p in SETTINGS],
                    },
                    "n_jobs": sizes[s],
                }
                for s in range(SWEEPS)
            ],
        )
        session.execute(
            insert(Reference),
            [
                {
                    "objective_hash": objective_key(d, loss, l2),
                    "objective": {"dataset": f"hist-{d:02d}", "loss": loss, "l1": 0.0, "l2": l2},
                    "primal": p_star_of(d, loss, l2),
                    "gap": 1e-13,
                }
                for d in range(DATASETS)
                for loss in LOSSES
                for l2 in L2S
            ],
        )


def add_jobs(
    url: str,
    first: int,
    count: int,
    n_total: int,
    rng: np.random.Generator,
    points: tuple[int, int] = POINTS,
) -> list[Plan]:
    """Insert jobs ``first`` … ``first + count − 1`` (1-based, as queued jobs of their sweeps)
    and plan their traces."""
    from faceoff.core.db import session_scope
    from faceoff.core.models import Job, utcnow

    sizes = np.cumsum(sweep_sizes(n_total))
    statuses, weights = zip(*STATUSES, strict=True)
    start = utcnow() - timedelta(days=200)
    rows, plans = [], []
    for job_id in range(first, first + count):
        sweep = int(np.searchsorted(sizes, job_id - 1, side="right"))  # 0-based
        within = int(job_id - 1 - (sizes[sweep - 1] if sweep else 0))
        solver, params = SETTINGS[within % len(SETTINGS)]
        # sweep 1: 5 datasets × 2 losses × 3 l2 (30 objectives), the others one dataset
        combo = within // len(SETTINGS)
        objectives = 30 if sweep == 0 else 6
        objective, seed = combo % objectives, combo // objectives
        loss, l2 = LOSSES[objective % 2], L2S[(objective // 2) % 3]
        dataset = objective // 6 if sweep == 0 else sweep % DATASETS
        draw = rng.random()
        status = "queued"
        for name, p in zip(statuses, np.cumsum(weights), strict=True):
            if draw < p:
                status = name
                break
        key = objective_key(dataset, loss, l2)
        spec = {
            "dataset": f"hist-{dataset:02d}",
            "loss": loss,
            "gamma": 1.0,
            "l1": 0.0,
            "l2": l2,
            "normalize": "none",
            "positive": None,
            "solver": solver,
            "params": params,
            "seed": seed,
            "repeat": 0,
            "stop": {"tol": 1e-10, "max_seconds": 600.0, "max_epochs": 300.0},
        }
        rows.append(
            {
                "id": job_id,
                "sweep_id": sweep + 1,
                "team_id": 1 + sweep % TEAMS,
                "dataset_id": dataset + 1,
                "spec": spec,
                "spec_hash": f"{job_id:064d}",
                "objective_hash": key,
                "solver": solver,
                "loss": loss,
                "status": "queued",
                "created_at": start + timedelta(seconds=150 * job_id),
                "n_points": 0,
            }
        )
        speed = 0.55 + 0.4 * ((within % len(SETTINGS)) / len(SETTINGS))
        plans.append(
            Plan(
                job_id,
                status,
                int(rng.integers(*points)),
                min(0.97, speed * (1 + 0.03 * rng.standard_normal())),
                p_star_of(dataset, loss, l2),
                1e-3 * (1 + dataset) * (1 + 0.1 * rng.random()),
                int(rng.integers(2**31)),
            )
        )
    with session_scope(url) as session:
        for chunk in range(0, len(rows), 5000):
            session.execute(insert(Job), rows[chunk : chunk + 5000])
    return plans


def trace_columns(plan: Plan) -> dict[str, list]:
    """The plan's trace as columns: log-spaced epochs, P − P* = Δ·ρ^epoch with noise."""
    rng = np.random.default_rng(plan.seed)
    n = plan.n_points
    epochs = np.geomspace(0.01, 300.0, n)
    subopt = plan.p_star * 0.5 * plan.rate**epochs * np.exp(0.1 * rng.standard_normal(n))
    subopt = np.maximum(subopt, plan.p_star * 1e-15)
    primal = plan.p_star + subopt
    gap = subopt * (1 + rng.random(n))
    return {
        "seq": list(range(n)),
        "iteration": (epochs * 1000).astype(np.int64).tolist(),
        "epoch": epochs.tolist(),
        "time_s": (epochs * plan.sec_per_epoch).tolist(),
        "primal": primal.tolist(),
        "dual": (primal - gap).tolist(),
        "gap": gap.tolist(),
        "nnz_x": [100] * n,
    }


def trace_of(plan: Plan) -> list:
    """The plan's trace points (:func:`trace_columns`) as a solver reports them."""
    from faceoff.solvers.trace import TracePoint

    return [TracePoint(*row) for row in zip(*trace_columns(plan).values(), strict=True)]


def write_job(url: str, plan: Plan) -> int:
    """Write one job's trace as a worker does: ``claim_job``, the worker's own
    :class:`~faceoff.worker.tasks.TraceWriter` with its batch settings (the first point at
    once, then a batch each ``TRACE_BATCH_POINTS`` points or ``TRACE_BATCH_SECONDS``), and
    ``finish_job`` with what is still buffered; the points written."""
    from faceoff.core.lifecycle import Event
    from faceoff.core.settings import get_settings
    from faceoff.worker import store
    from faceoff.worker.tasks import TraceWriter

    if plan.status == "queued":
        return 0
    settings = get_settings()
    machine = MACHINES[plan.job_id % len(MACHINES)]
    claim = store.claim_job(url, plan.job_id, f"{machine['host']}:1", machine)
    assert claim is not None, plan
    points = trace_of(plan)
    if plan.status in ("failed", "cancelled", "running"):
        points = points[: len(points) // 2]
    writer = TraceWriter(url, claim, settings.TRACE_BATCH_POINTS, settings.TRACE_BATCH_SECONDS)
    for point in points:
        writer(point)
    if plan.status == "running":
        writer.flush()
    else:
        event = {"succeeded": Event.SUCCEED, "failed": Event.FAIL, "cancelled": Event.HALT}
        error = "diverged" if plan.status == "failed" else None
        reason = {"succeeded": "tol", "failed": "diverged", "cancelled": "cancelled"}
        store.finish_job(url, claim, event[plan.status], reason[plan.status], error, writer.buffer)
    return len(points)


def bulk_write(url: str, plans: Sequence[Plan]) -> int:
    """Write the plans' traces many jobs a transaction: their points by the worker's COPY
    (``store._copy_rows``: staging table, ``INSERT ... SELECT ... ON CONFLICT DO NOTHING``),
    their summaries by core.summaries.reaching, their end as ``finish_job`` leaves it. What
    a worker writes, in fewer transactions (one a job costs ~20 round trips)."""
    from faceoff.core import analysis, summaries
    from faceoff.core.db import session_scope
    from faceoff.core.models import Job, JobReach, JobSummary, utcnow
    from faceoff.solvers.trace import TracePoint
    from faceoff.worker import store

    points_written = 0
    finished = utcnow()
    for start in range(0, len(plans), 40):
        chunk = [p for p in plans[start : start + 40] if p.status != "queued"]
        rows, reach, covered, ends = [], [], [], []
        for plan in chunk:
            columns = trace_columns(plan)
            n = plan.n_points if plan.status == "succeeded" else plan.n_points // 2
            columns = {f: values[:n] for f, values in columns.items()}
            rows += zip([plan.job_id] * n, *columns.values(), [{}] * n, strict=True)
            trace = {f: columns[f] for f in summaries.SUMMARY_FIELDS}
            found = summaries.reaching(trace, plan.p_star, analysis.CRITERIA)
            reach += [{"job_id": plan.job_id, **r} for r in found]
            covered.append({"job_id": plan.job_id, "n_points": n, "p_star": plan.p_star})
            last = TracePoint(*(values[-1] for values in columns.values()))
            machine = MACHINES[plan.job_id % len(MACHINES)]
            ends.append(
                {
                    "id": plan.job_id,
                    "status": plan.status,
                    "attempts": 1,
                    "worker_host": f"{machine['host']}:1",
                    "machine": machine,
                    "concurrency": 1,
                    "concurrency_max": 2,
                    "started_at": finished - timedelta(seconds=last.time_s + 1),
                    "heartbeat_at": finished,
                    "finished_at": None if plan.status == "running" else finished,
                    "stop_reason": {"succeeded": "tol", "failed": "diverged"}.get(
                        plan.status, None if plan.status == "running" else "cancelled"
                    ),
                    "n_points": n,
                    "epoch": last.epoch,
                    "time_s": last.time_s,
                    "primal": last.primal,
                    "gap": last.gap,
                    "trace_mode": "native",
                }
            )
        with session_scope(url) as session:
            store._copy_rows(session, rows)
            session.execute(update(Job), ends)
            session.execute(insert(JobSummary), covered)
            if reach:
                session.execute(insert(JobReach), reach)
        points_written += len(rows)
    return points_written


def generate(
    url: str, n_jobs: int, points: tuple[int, int] = POINTS, worker_jobs: int = 0
) -> list[Plan]:
    """Fill a migrated database with ``n_jobs`` jobs in this process: the last
    ``worker_jobs`` through the worker's path, the others by :func:`bulk_write`."""
    rng = np.random.default_rng(33)
    seed_rows(url, n_jobs, rng)
    plans = add_jobs(url, 1, n_jobs, n_jobs, rng, points)
    split = len(plans) - worker_jobs
    bulk_write(url, plans[:split])
    for plan in plans[split:]:
        write_job(url, plan)
    return plans


def _bulk(args: tuple[str, list[Plan]]) -> int:
    return bulk_write(*args)


def _writer(args: tuple[str, list[Plan]]) -> tuple[int, float, float]:
    """(points, start, end): a writer process's share, timed once its imports are done."""
    import faceoff.worker.store  # noqa: F401 — imported before the clock starts

    url, plans = args
    started = time.time()
    points = sum(write_job(url, plan) for plan in plans)
    return points, started, time.time()


class LockMonitor:
    """The longest lock wait seen in the database, sampled from pg_stat_activity."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.longest = 0.0
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        name = self.url.rsplit("/", 1)[1]
        query = (
            "SELECT coalesce(max(extract(epoch FROM now() - state_change)), 0) "
            "FROM pg_stat_activity WHERE datname = %s AND wait_event_type = 'Lock'"
        )
        with psycopg.connect(dsn(self.url), autocommit=True) as conn:
            while not self._stop.is_set():
                waited = conn.execute(query, (name,)).fetchone()[0]
                self.longest = max(self.longest, float(waited))
                self.samples += 1
                time.sleep(LOCK_SAMPLE_S)

    def __enter__(self) -> LockMonitor:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


@dataclass
class Ingest:
    jobs: int
    points: int
    seconds: float
    longest_lock_wait: float
    lock_samples: int
    bulk: tuple[int, float] = (0, 0.0)  # points and seconds of the bulk fill
    long: Ingest | None = None  # the same writers on long runs (full batches)

    @property
    def rate(self) -> float:
        return self.points / self.seconds if self.seconds else 0.0


def ingest(url: str, plans: Sequence[Plan], writers: int) -> Ingest:
    """Write the plans' traces with ``writers`` processes (a job each at a time, interleaved)."""
    shares = [(url, list(plans[w::writers])) for w in range(writers)]
    context = multiprocessing.get_context("spawn")
    with LockMonitor(url) as monitor, context.Pool(writers) as pool:
        done = pool.map(_writer, shares)
    seconds = max(end for _, _, end in done) - min(start for _, start, _ in done)
    return Ingest(len(plans), sum(p for p, _, _ in done), seconds, monitor.longest, monitor.samples)


# ----------------------------------------------------------------------------- measuring


def p95(call: Callable[[], Any], repeats: int) -> tuple[float, float]:
    """(p95, median) of ``repeats`` timed calls after one warm-up."""
    call()
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    q95, q50 = percentiles(times, [95, 50])
    return q95, q50


def dash_call(client, outputs, inputs) -> Any:
    """Run the Dash callback with output ``outputs[0]`` as the browser does (POST
    /_dash-update-component), asking for all of its outputs."""
    first = f"{outputs[0][0]}.{outputs[0][1]}"
    (key,) = [k for k in _DASH.callback_map if first in k.strip(".").split("...")]
    key = key.strip(".")
    outputs = [tuple(o.rsplit(".", 1)) for o in key.split("...")]
    body = {
        "output": f"..{key}.." if len(outputs) > 1 else key,
        "outputs": [{"id": o, "property": p} for o, p in outputs]
        if len(outputs) > 1
        else {"id": outputs[0][0], "property": outputs[0][1]},
        "inputs": [{"id": i, "property": p, "value": v} for i, p, v in inputs],
        "state": [],
        "changedPropIds": [f"{i}.{p}" for i, p, _ in inputs[:1]],
    }
    response = client.post("/_dash-update-component", json=body)
    if response.status_code != 200:
        raise RuntimeError(f"{outputs[0][0]}: {response.status_code} {response.data[:500]!r}")
    return response.get_json()["response"]


_DASH: Any = None


def dashboard_client(url: str, settings: Any):
    """A Flask test client of the dashboard (one Dash app a process), reading ``url``."""
    global _DASH
    from faceoff.dashboard.app import create_app
    from faceoff.dashboard.components import DATABASE_URL_KEY

    if _DASH is None:
        _DASH = create_app(settings)
    _DASH.server.config[DATABASE_URL_KEY] = url
    return _DASH.server.test_client()


def sweeps_for(url: str, wanted: int) -> tuple[list[int], int]:
    """Team 1's sweeps holding about ``wanted`` finished jobs, and their count."""
    with psycopg.connect(dsn(url)) as conn:
        counts = conn.execute(
            "SELECT sweep_id, count(*) FROM jobs WHERE team_id = 1 AND status IN "
            "('succeeded', 'failed') GROUP BY sweep_id ORDER BY sweep_id"
        ).fetchall()
    chosen, total = [], 0
    for sweep_id, n in counts:
        if total >= wanted:
            break
        chosen.append(sweep_id)
        total += n
    return chosen, total


LISTINGS = {
    "newest 50": "/jobs?limit=50",
    "status=failed": "/jobs?status=failed&limit=50",
    "sweep 1": "/jobs?sweep_id=1&limit=50",
    "solver=spdc": "/jobs?solver=spdc&limit=50",
    "dataset=hist-07": "/jobs?dataset=hist-07&limit=50",
    "loss=squared, offset 5000": "/jobs?loss=squared&limit=50&offset=5000",
    "solver+status+dataset": "/jobs?solver=saga&status=succeeded&dataset=hist-03&limit=50",
}


@contextmanager
def clients(url: str) -> Iterator[tuple[Callable[[str], Any], Any]]:
    """(GET on the API, the dashboard's test client), both as team 0's token (the team of
    sweep 1), authentication on."""
    from starlette.testclient import TestClient

    from faceoff.api.main import create_app
    from faceoff.core.auth import create_token
    from faceoff.core.db import session_scope
    from faceoff.core.settings import Settings

    with session_scope(url) as session:
        _, secret = create_token(session, "team-0", "bench")
    settings = Settings(DATABASE_URL=url, AUTH_ENABLED=True, SECRET_KEY=secrets.token_hex(32))
    headers = {"Authorization": f"Bearer {secret}"}
    with TestClient(create_app(settings), client=("127.0.0.1", 1234)) as api:

        def get(path: str) -> Any:
            response = api.get("/api/v1" + path, headers=headers)
            if response.status_code != 200:
                raise RuntimeError(f"{path}: {response.status_code} {response.text[:300]}")
            return response.json()

        dashboard = dashboard_client(url, settings)
        login = dashboard.post("/login", data={"token": secret})
        if login.status_code >= 400:
            raise RuntimeError(f"dashboard login: {login.status_code}")
        yield get, dashboard


def calls(url: str, get: Callable[[str], Any], dashboard: Any, n_jobs: int) -> dict[str, Any]:
    """{target or listing: (a call making the request, what it reads)}."""
    with psycopg.connect(dsn(url)) as conn:
        mid = conn.execute(
            "SELECT max(id) FROM jobs WHERE team_id = 1 AND status = 'succeeded' AND id <= %s",
            (max(n_jobs // 2, BIG_SWEEP),),
        ).fetchone()[0]
        drawn = [
            r[0]
            for r in conn.execute(
                "SELECT id FROM jobs WHERE sweep_id = 1 AND n_points > 0 ORDER BY id DESC LIMIT 60"
            )
        ]
    sweeps, covered = sweeps_for(url, 20_000)
    out: dict[str, Any] = {
        f"GET /jobs: {name}": (lambda path=path: get(path), path) for name, path in LISTINGS.items()
    }
    out["GET /jobs: a deep page (offset jobs/10)"] = (
        lambda: get(f"/jobs?limit=50&offset={n_jobs // 10}"),
        "the team's jobs, a deep page",
    )
    out["GET /jobs/{id}/trace?max_points=500"] = (
        lambda: get(f"/jobs/{mid}/trace?max_points=500"),
        f"job {mid}",
    )
    out["GET /references"] = (lambda: get("/references?limit=100"), "newest 100")
    sweep = [
        ("sweep-id", "data", 1),
        ("sweep-eps", "value", "1e-6"),
        ("sweep-criterion", "value", "subopt_rel"),
        ("sweep-x", "value", "time"),
        ("sweep-chart", "value", "dots"),
        ("sweep-scale", "value", "auto"),
        ("sweep-interval", "n_intervals", 0),
        ("sweep-settle", "value", "test_loss"),
        ("sweep-delta", "value", "1e-2"),
    ]
    out["sweep page, 2,000-job sweep"] = (
        lambda: dash_call(dashboard, [("sweep-title", "children")], sweep),
        f"{min(BIG_SWEEP, n_jobs)} jobs",
    )
    profiles = [
        ("profiles-sweep", "value", sweeps),
        ("profiles-dataset", "value", None),
        ("profiles-loss", "value", None),
        ("profiles-eps", "value", "1e-6"),
        ("profiles-criterion", "value", "subopt_rel"),
        ("profiles-measure", "value", "time"),
    ]
    out["profiles page"] = (
        lambda: dash_call(dashboard, [("profiles-status", "children")], profiles),
        f"{covered} finished jobs of {len(sweeps)} sweeps",
    )
    runs = [(f"runs-{name}", "value", None) for name in ("sweep", "dataset", "solver")]
    runs += [("runs-loss", "value", None), ("runs-status", "value", None)]
    runs.append(("runs-interval", "n_intervals", 0))
    out["runs index page"] = (
        lambda: dash_call(dashboard, [("runs-summary", "children")], runs),
        "the newest 1000 jobs",
    )
    out["sweeps index page"] = (
        lambda: dash_call(
            dashboard, [("sweeps-summary", "children")], [("sweeps-interval", "n_intervals", 0)]
        ),
        "the newest 500 sweeps",
    )
    compare = [
        ("compare-jobs", "value", ",".join(map(str, drawn))),
        ("compare-sweep", "value", None),
        ("compare-x", "value", "time"),
        ("compare-y", "value", "subopt_rel"),
        ("compare-logx", "value", "auto"),
        ("compare-logy", "value", "log"),
        ("compare-seeds", "value", "all"),
        ("compare-interval", "n_intervals", 0),
    ]
    out["compare page, 60 curves"] = (
        lambda: dash_call(dashboard, [("compare-status", "children")], compare),
        f"{len(drawn)} jobs, ≤ 500 points each",
    )
    return out


def measure(url: str, repeats: int, n_jobs: int) -> dict[str, Any]:
    """{target: (p95, median, what it read, rows touched)}, the worst GET /jobs listing
    standing for that target; ``jobs listings``: each listing's."""
    with clients(url) as (get, dashboard):
        found = calls(url, get, dashboard, n_jobs)
        timed = {}
        for name, (call, what) in found.items():
            q95, q50 = p95(call, repeats)
            timed[name] = (q95, q50, what, touched(url, call))
    listings = {k[len("GET /jobs: ") :]: v for k, v in timed.items() if k.startswith("GET /jobs: ")}
    worst = max(listings, key=lambda name: listings[name][0])
    out = {k: v for k, v in timed.items() if not k.startswith("GET /jobs: ")}
    out["GET /jobs (worst filter/page)"] = (
        *listings[worst][:2],
        f"worst: {worst}",
        listings[worst][3],
    )
    out["jobs listings"] = listings
    return out


# ----------------------------------------------------------------------------- EXPLAIN


@dataclass
class Touched:
    """What the queries of a call read, from EXPLAIN ANALYZE of each SELECT it made: rows
    touched per table (rows returned by its scans plus rows their filters removed), and
    the sequential scans."""

    queries: int = 0
    rows: dict[str, int] = field(default_factory=dict)
    seq_scans: list[str] = field(default_factory=list)


@contextmanager
def statements(url: str) -> Iterator[list[tuple[str, Any]]]:
    """The SELECT statements (with parameters) run on ``url``'s engine meanwhile."""
    from sqlalchemy import event

    from faceoff.core.db import engine_for

    engine = engine_for(url)
    seen: list[tuple[str, Any]] = []

    def record(conn, cursor, statement, parameters, context, executemany) -> None:
        if statement.lstrip().upper().startswith("SELECT") and not executemany:
            seen.append((statement, parameters))

    event.listen(engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", record)


def touched(url: str, call: Callable[[], Any]) -> Touched:
    """Run ``call`` and EXPLAIN ANALYZE every SELECT it made on ``url``'s engine."""
    from faceoff.core.db import engine_for

    with statements(url) as seen:
        call()
    out = Touched(queries=len(seen))
    with engine_for(url).connect() as conn:
        cursor = conn.connection.driver_connection.cursor()
        for statement, parameters in seen:
            cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {statement}", parameters)
            root = cursor.fetchone()[0][0]["Plan"]
            for node in _walk(root):
                if "Scan" not in node["Node Type"] or "Relation Name" not in node:
                    continue
                table = node["Relation Name"]
                rows = int(node.get("Actual Rows", 0) * node.get("Actual Loops", 1)) + int(
                    node.get("Rows Removed by Filter", 0)
                    + node.get("Rows Removed by Index Recheck", 0)
                )
                out.rows[table] = out.rows.get(table, 0) + rows
                if node["Node Type"] == "Seq Scan":
                    out.seq_scans.append(table)
        conn.rollback()
    return out


def hot_queries(url: str) -> dict[str, str]:
    """The SQL of the hot reads, as core issues them (compiled with their literals)."""
    from faceoff.core.models import Job, JobReach, TracePoint

    def sql(statement) -> str:
        from sqlalchemy.dialects import postgresql

        return str(
            statement.compile(dialect=postgresql.dialect(), compile_kwargs={"literal_binds": True})
        )

    sweep_jobs = select(Job.id).where(Job.sweep_id == 1)
    return {
        "GET /jobs?solver=…&limit=50": sql(
            select(Job).where(Job.solver == "spdc").order_by(Job.id.desc()).limit(50)
        ),
        "GET /jobs count, solver filter": sql(
            select(func.count()).select_from(select(Job.id).where(Job.solver == "spdc").subquery())
        ),
        "GET /jobs?sweep_id=1": sql(
            select(Job).where(Job.sweep_id == 1).order_by(Job.id.desc()).limit(50)
        ),
        "trace of one job": sql(
            select(TracePoint)
            .where(TracePoint.job_id == 5001, TracePoint.seq > -1)
            .order_by(TracePoint.seq)
        ),
        "compare: traces of 60 jobs": sql(
            select(TracePoint.job_id, TracePoint.epoch, TracePoint.primal)
            .where(TracePoint.job_id.in_(list(range(1, 61))))
            .order_by(TracePoint.job_id, TracePoint.seq)
        ),
        "sweep page: summaries of a sweep": sql(
            select(JobReach.job_id, JobReach.time_s).where(
                JobReach.job_id.in_(sweep_jobs), JobReach.criterion == "subopt_rel", JobReach.k == 6
            )
        ),
        "references listing": 'SELECT * FROM "references" ORDER BY id DESC LIMIT 100',
    }


def explain(url: str) -> list[tuple[str, str, str, str]]:
    """(query, scans and indexes, rows touched, time) of each hot query."""
    out = []
    with psycopg.connect(dsn(url)) as conn:
        conn.execute("ANALYZE")
        for name, query in hot_queries(url).items():
            plan = conn.execute(f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {query}").fetchone()[0]
            root = plan[0]["Plan"]
            scans = sorted({s for s in _scans(root)})
            out.append(
                (
                    name,
                    "; ".join(scans),
                    str(_rows(root)),
                    f"{plan[0]['Execution Time']:.1f} ms",
                )
            )
    return out


def _walk(node: dict) -> Iterator[dict]:
    yield node
    for child in node.get("Plans", []):
        yield from _walk(child)


def _scans(node: dict) -> Iterator[str]:
    for n in _walk(node):
        if "Scan" in n["Node Type"]:
            index = n.get("Index Name")
            yield f"{n['Node Type']} {n.get('Relation Name', '')}" + (
                f" ({index})" if index else ""
            )


def _rows(node: dict) -> int:
    """Rows read by the plan's scans (actual rows × loops, plus rows removed by filters)."""
    return sum(
        int(n.get("Actual Rows", 0) * n.get("Actual Loops", 1))
        + int(n.get("Rows Removed by Filter", 0) + n.get("Rows Removed by Index Recheck", 0))
        for n in _walk(node)
        if "Scan" in n["Node Type"]
    )


# ----------------------------------------------------------------------------- the run


@dataclass
class Phase:
    jobs: int
    points: int
    ingest: Ingest
    size: dict[str, int]
    targets: dict[str, Any]
    explain: list[tuple[str, str, str, str]]
    load: tuple[float, float, float]
    notes: list[str] = field(default_factory=list)


def sizes(url: str) -> dict[str, int]:
    with psycopg.connect(dsn(url)) as conn:
        row = conn.execute(
            "SELECT pg_database_size(current_database()), "
            "pg_total_relation_size('trace_points'), pg_relation_size('trace_points'), "
            "pg_total_relation_size('job_reach') + pg_total_relation_size('job_summaries'), "
            "(SELECT count(*) FROM trace_points)"
        ).fetchone()
    return dict(zip(("database", "traces", "traces_heap", "summaries", "points"), row, strict=True))


def run(
    counts: Sequence[int],
    writers: int,
    repeats: int,
    keep: bool,
    ingest_jobs: int = 400,
) -> tuple[str, list[Phase]]:
    """Fill to each count in turn and measure; ``ingest_jobs`` of each phase's jobs go
    through the worker's own path (claim, save_batch, finish_job) with ``writers``
    processes, the others by :func:`bulk_write`."""
    from faceoff.core.migrate import upgrade

    url = create_database()
    log(f"database {url.rsplit('/', 1)[1]}")
    phases = []
    try:
        upgrade(url)
        rng = np.random.default_rng(33)
        total = max(counts)
        seed_rows(url, total, rng)
        done = 0
        for count in sorted(counts):
            plans = add_jobs(url, done + 1, count - done, total, rng)
            bulk, sample = (
                plans[: -ingest_jobs or None],
                plans[-ingest_jobs:] if ingest_jobs else [],
            )
            # the last LONG_JOBS of the sample run long: LONG_POINTS points each, succeeded
            sample, long = (
                sample[:-LONG_JOBS],
                [replace(p, status="succeeded", n_points=LONG_POINTS) for p in sample[-LONG_JOBS:]],
            )
            started = time.perf_counter()
            context = multiprocessing.get_context("spawn")
            with context.Pool(BULK_PROCESSES) as pool:
                shares = [(url, bulk[i::BULK_PROCESSES]) for i in range(BULK_PROCESSES)]
                bulk_points = sum(pool.map(_bulk, shares))
            bulk_seconds = time.perf_counter() - started
            log(
                f"{len(bulk)} jobs bulk-written: {bulk_points:,} points in {bulk_seconds:.0f} s; "
                f"the last {len(sample)} through the worker's path with {writers} writers"
            )
            written = ingest(url, sample, writers)
            written.bulk = (bulk_points, bulk_seconds)
            written.long = ingest(url, long, writers)
            done = count
            log(
                f"{written.points} points in {written.seconds:.1f} s: "
                f"{written.rate:,.0f} points/s; longest lock wait "
                f"{written.longest_lock_wait * 1000:.0f} ms; long runs "
                f"{written.long.rate:,.0f} points/s"
            )
            with psycopg.connect(dsn(url), autocommit=True) as conn:
                conn.execute("VACUUM ANALYZE")
            size = sizes(url)
            load = os.getloadavg()
            targets = measure(url, repeats, count)
            plans_explained = explain(url)
            phases.append(
                Phase(count, size["points"], written, size, targets, plans_explained, load)
            )
            log(
                f"{count} jobs measured: "
                + json.dumps({k: v[0] for k, v in targets.items() if k in TARGETS})
            )
    finally:
        if not keep:
            drop_database(url)
    return url, phases


def head() -> str:
    """HEAD's short commit (a worktree's .git is a file, which service_stack's reader misses)."""
    import subprocess

    done = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
    )
    return done.stdout.strip() or "unknown"


def report(phases: Sequence[Phase], writers: int, repeats: int, note: str) -> list[str]:
    load_now = ", ".join(f"{v:.2f}" for v in os.getloadavg())
    lines = [
        "# A team's history at scale (issue 33)",
        "",
        "`python -m bench.run_history` (`make bench-history`): a fresh PostgreSQL database filled "
        "by the worker's COPY with the trace summaries (`bulk_write`: many jobs a transaction), "
        "the last jobs of each phase through the worker's own path (`worker.store`: claim, "
        "`save_batch`, `finish_job`) by concurrent writers, timed; then every target timed in "
        "process (server time: the "
        f"API through Starlette's TestClient, the dashboard's callbacks through Flask's), p95 of "
        f"{repeats} requests after a warm-up. {note}",
        "",
        f"- commit {head()}, {os.cpu_count()} cores; load average at the end {load_now}",
        "",
        "## Targets",
        "",
    ]
    header = ["target", "limit"]
    for p in phases:
        header += [f"{p.jobs:,} jobs: p95 (median)", "met"]
    body = []
    for name, limit in TARGETS.items():
        row = [name, f"≤ {limit * 1000:.0f} ms"]
        for p in phases:
            q95, q50, *_ = p.targets[name]
            row += [f"{q95 * 1000:.1f} ({q50 * 1000:.1f}) ms", "yes" if q95 <= limit else "**no**"]
        body.append(row)
    for what, of in (
        ("the history's jobs (~500 points)", lambda i: i),
        (f"long runs ({LONG_POINTS:,} points)", lambda i: i.long),
    ):
        row = [f"ingestion, {writers} writers through worker.store, {what}", "≥ 100,000 points/s"]
        for p in phases:
            rate = of(p.ingest).rate
            row += [f"{rate:,.0f} points/s", "yes" if rate >= 100_000 else "**no**"]
        body.append(row)
    row = ["longest lock wait while ingesting", "≤ 100 ms"]
    for p in phases:
        waits = [p.ingest, p.ingest.long]
        longest = max(i.longest_lock_wait for i in waits)
        row += [
            f"{longest * 1000:.0f} ms ({sum(i.lock_samples for i in waits)} samples)",
            "yes" if longest <= 0.1 else "**no**",
        ]
    body.append(row)
    lines += md_table(header, body)
    lines += ["", "Load average (1, 5, 15 min) when each phase was measured: "]
    lines += [f"- {p.jobs:,} jobs: {', '.join(f'{v:.2f}' for v in p.load)}" for p in phases]
    lines += ["", "## The database", ""]
    body = []
    for p in phases:
        s = p.size
        body.append(
            [
                f"{p.jobs:,}",
                f"{s['points']:,}",
                f"bulk {p.ingest.bulk[0]:,} in {p.ingest.bulk[1]:.0f} s "
                f"({p.ingest.bulk[0] / max(p.ingest.bulk[1], 1e-9):,.0f}/s); worker path "
                f"{p.ingest.points:,} in {p.ingest.seconds:.0f} s ({p.ingest.rate:,.0f}/s), "
                f"long runs {p.ingest.long.points:,} in {p.ingest.long.seconds:.1f} s "
                f"({p.ingest.long.rate:,.0f}/s)",
                f"{s['database'] / 2**20:,.0f} MiB",
                f"{s['traces'] / max(1, s['points']):.1f} "
                f"({s['traces_heap'] / max(1, s['points']):.1f} heap)",
                f"{s['summaries'] / 2**20:,.1f} MiB",
            ]
        )
    lines += md_table(
        [
            "jobs",
            "trace points",
            "written this phase",
            "database size",
            "bytes a trace point (with its index)",
            "summaries",
        ],
        body,
    )
    lines += ["", "## GET /jobs, each filter and page (p95, median)", ""]
    names = list(dict.fromkeys(n for p in phases for n in p.targets["jobs listings"]))
    lines += md_table(
        ["listing", *(f"{p.jobs:,} jobs" for p in phases)],
        [
            [
                name,
                *(
                    f"{p.targets['jobs listings'][name][0] * 1000:.1f} "
                    f"({p.targets['jobs listings'][name][1] * 1000:.1f}) ms"
                    if name in p.targets["jobs listings"]
                    else "-"
                    for p in phases
                ),
            ]
            for name in names
        ],
    )
    lines += ["", "## EXPLAIN (ANALYZE, BUFFERS) of the hot queries", ""]
    for p in phases:
        lines += [f"{p.jobs:,} jobs:", ""]
        lines += md_table(
            ["query", "scans (index)", "rows touched", "time"], [list(e) for e in p.explain]
        )
        lines.append("")
    lines += ["## Rows touched by each request (EXPLAIN ANALYZE of every SELECT it made)", ""]
    body = []
    for name in TARGETS:
        row = [name]
        for p in phases:
            t = p.targets[name][3]
            row += [
                f"{t.queries} queries, {sum(t.rows.values()):,} rows, "
                f"{t.rows.get('trace_points', 0):,} trace points"
                + (f"; seq scans: {', '.join(sorted(set(t.seq_scans)))}" if t.seq_scans else "")
            ]
        body.append(row)
    lines += md_table(["request", *(f"{p.jobs:,} jobs" for p in phases)], body)
    lines += ["", "What each target read:", ""]
    for name in TARGETS:
        lines.append(
            f"- {name}: " + "; ".join(f"{p.jobs:,} jobs: {p.targets[name][2]}" for p in phases)
        )
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--jobs", default="10000,100000", help="job counts measured, e.g. 10000,100000"
    )
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=REPEATS)
    parser.add_argument("--keep", action="store_true", help="keep the database")
    parser.add_argument(
        "--ingest-jobs",
        type=int,
        default=400,
        help="jobs of each phase written through the worker's path (claim, save_batch, "
        "finish_job) by --writers processes: the ingestion measured",
    )
    parser.add_argument("--note", default="", help="a sentence added to the report")
    parser.add_argument("--out", default="history.md", help="file name in bench/results")
    args = parser.parse_args(argv)
    counts = sorted(int(c) for c in args.jobs.split(","))
    url, phases = run(counts, args.writers, args.repeats, args.keep, args.ingest_jobs)
    raw = REPO / "bench" / "out" / "history.json"
    raw.parent.mkdir(parents=True, exist_ok=True)
    raw.write_text(json.dumps([repr(p) for p in phases]))
    lines = report(phases, args.writers, args.repeats, args.note)
    if args.keep:
        lines += ["", f"The database was kept: {url.rsplit('/', 1)[1]}."]
    write_results(args.out, lines)


if __name__ == "__main__":
    main()
