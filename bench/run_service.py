"""Service benchmark: per-job overhead of tiny jobs through the API, trace ingestion.

The issue: "500 tiny jobs through the API with 2 workers — jobs/s, and p50/p95 of
(finished − submitted − solver time); trace ingestion into PostgreSQL in points/s.
Targets: overhead p50 ≤ 50 ms per job; ingestion ≥ 50,000 points/s."

On a fresh PostgreSQL database, the docker-compose services run natively
(:mod:`bench.service_stack`: migrate, ``uvicorn faceoff.api.main:app``,
2 × ``python -m faceoff.worker``
with one pool process each) and a tiny synthetic dataset (200 × 20, density 0.5) is
registered. Each job is ``dual_cd`` on the logistic loss for 5 epochs (a few ms of solver
time, about 64 trace points, written with the job's end); distinct seeds keep jobs from being
deduplicated. Phases:

1. **one at a time**: each job is submitted (``POST /jobs``) once the previous one has
   finished — the overhead of a job that waits for nobody;
2. **burst of POSTs**: ``--jobs`` jobs as individual ``POST /jobs``, 16 in flight;
3. **one sweep**: ``--jobs`` jobs in one ``POST /sweeps``.

For every job the database gives ``created_at`` (the API's insert: "submitted"),
``started_at`` (the worker's claim), ``finished_at`` and ``time_s`` (solver time of the last
trace point); overhead = finished − created − time_s, split into queue wait (started −
created) and run overhead (finished − started − time_s). The run overhead is broken down
further by running the same jobs in this process without a database: building the problem
and the wall time of ``solve`` (solver time + trace-point evaluation); the rest is the
worker's database work (claim, finish with the trace points) and Celery.

Ingestion: :func:`faceoff.worker.store.save_batch` (one transaction: the job's summary update and
the points, by COPY into a staging table and ``INSERT … SELECT … ON CONFLICT DO NOTHING``
from 200 points on, a multi-row ``INSERT … ON CONFLICT DO NOTHING`` below) writing
``--points`` realistic points in batches of 50, 1000 (``TRACE_BATCH_POINTS``) and 5000,
against a prototype of the insert in the same transaction: ``INSERT … SELECT FROM
unnest(one array per column)``.

``python -m bench.run_service`` writes ``bench/results/service.md``; ``--quick`` (100 jobs,
20,000 points) checks the harness in about a minute.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx
from sqlalchemy import select, text

from bench.common import Log, md_table
from bench.service_stack import (
    REPO,
    TINY_DATASET,
    TINY_SOURCE,
    Stack,
    environment,
    environment_lines,
    fresh_database,
    percentiles,
    register_tiny_dataset,
    require_services,
    running_stack,
    tiny_job,
    tiny_sweep,
)
from faceoff.solvers.numba_cache import configure_numba_cache

OVERHEAD_TARGET = 0.050  # seconds per job, p50
INGEST_TARGET = 50_000.0  # points per second
WORKERS = 2
SUBMIT_CONCURRENCY = 16  # POSTs in flight in the burst phase
SEQUENTIAL_JOBS = 30
WARMUP_JOBS = 4  # each worker loads the dataset once before the measured phases
BATCH_SIZES = (50, 1000, 5000)  # 1000: the default TRACE_BATCH_POINTS
FINISH_TIMEOUT = 900.0
OUT = REPO / "bench" / "results" / "service.md"
LOGS = REPO / "bench" / "out" / "service"

log = Log()


# ----------------------------------------------------------------------------- jobs


@dataclass
class JobTimes:
    """One job's timestamps (seconds since the epoch) and solver time, from the database."""

    id: int
    status: str
    created: float
    started: float
    finished: float
    solver: float
    n_points: int

    @property
    def overhead(self) -> float:
        return self.finished - self.created - self.solver

    @property
    def queue_wait(self) -> float:
        return self.started - self.created

    @property
    def run(self) -> float:
        return self.finished - self.started

    @property
    def run_overhead(self) -> float:
        return self.finished - self.started - self.solver


@dataclass
class Phase:
    """The jobs of one phase and how long submitting them took on the client."""

    name: str
    jobs: list[JobTimes]
    submit_seconds: float

    @property
    def wall(self) -> float:
        """First submission to last finish, from the database timestamps."""
        return max(j.finished for j in self.jobs) - min(j.created for j in self.jobs)


def terminal_count(url: str, ids: Sequence[int]) -> int:
    from faceoff.core.db import engine_for
    from faceoff.core.models import TERMINAL, Job

    query = select(Job.id).where(Job.id.in_(ids), Job.status.in_(TERMINAL))
    with engine_for(url).connect() as conn:
        return len(conn.execute(query).all())


def wait_terminal(url: str, ids: Sequence[int], poll: float, timeout: float = FINISH_TIMEOUT):
    deadline = time.monotonic() + timeout
    while terminal_count(url, ids) < len(ids):
        if time.monotonic() > deadline:
            raise RuntimeError(f"{len(ids)} jobs not all finished after {timeout:g} s")
        time.sleep(poll)


def job_times(url: str, ids: Sequence[int]) -> list[JobTimes]:
    from faceoff.core.db import engine_for
    from faceoff.core.models import Job

    query = select(
        Job.id,
        Job.status,
        Job.created_at,
        Job.started_at,
        Job.finished_at,
        Job.time_s,
        Job.n_points,
    ).where(Job.id.in_(ids))
    with engine_for(url).connect() as conn:
        rows = conn.execute(query).all()
    if len(rows) != len(ids):
        raise RuntimeError(f"{len(ids) - len(rows)} submitted jobs are not in the database")
    failed = [r.id for r in rows if r.status != "succeeded"]
    if failed:
        raise RuntimeError(f"jobs {failed[:10]} did not succeed")
    return [
        JobTimes(
            r.id,
            r.status,
            r.created_at.timestamp(),
            r.started_at.timestamp(),
            r.finished_at.timestamp(),
            r.time_s,
            r.n_points,
        )
        for r in rows
    ]


def submit(api: httpx.Client, seed: int) -> int:
    response = api.post("/jobs", json=tiny_job(seed))
    if response.status_code != 201:
        raise RuntimeError(f"POST /jobs: {response.status_code} {response.text}")
    return response.json()["id"]


def one_at_a_time(stack: Stack, api: httpx.Client, seeds: range) -> Phase:
    """Each job submitted after the previous one finished (database polled every 5 ms)."""
    ids = []
    submitting = 0.0
    for seed in seeds:
        started = time.perf_counter()
        ids.append(submit(api, seed))
        submitting += time.perf_counter() - started
        wait_terminal(stack.database_url, ids[-1:], poll=0.005)
    return Phase("one at a time", job_times(stack.database_url, ids), submitting)


async def _post_all(api_url: str, seeds: range, concurrency: int) -> list[int]:
    limit = asyncio.Semaphore(concurrency)
    limits = httpx.Limits(max_connections=concurrency)
    async with httpx.AsyncClient(base_url=api_url, timeout=60, limits=limits) as client:

        async def post(seed: int) -> int:
            async with limit:
                response = await client.post("/jobs", json=tiny_job(seed))
            if response.status_code != 201:
                raise RuntimeError(f"POST /jobs: {response.status_code} {response.text}")
            return response.json()["id"]

        return list(await asyncio.gather(*(post(seed) for seed in seeds)))


def burst_of_posts(stack: Stack, seeds: range) -> Phase:
    started = time.perf_counter()
    ids = asyncio.run(_post_all(stack.api_url, seeds, SUBMIT_CONCURRENCY))
    submitting = time.perf_counter() - started
    wait_terminal(stack.database_url, ids, poll=0.1)
    name = f"burst of {len(ids)} POSTs ({SUBMIT_CONCURRENCY} in flight)"
    return Phase(name, job_times(stack.database_url, ids), submitting)


def one_sweep(stack: Stack, api: httpx.Client, seeds: range) -> Phase:
    from faceoff.core.db import engine_for
    from faceoff.core.models import Job

    started = time.perf_counter()
    response = api.post("/sweeps", json=tiny_sweep(seeds))
    submitting = time.perf_counter() - started
    if response.status_code != 201:
        raise RuntimeError(f"POST /sweeps: {response.status_code} {response.text}")
    sweep_id = response.json()["id"]
    with engine_for(stack.database_url).connect() as conn:
        ids = list(conn.scalars(select(Job.id).where(Job.sweep_id == sweep_id)))
    if len(ids) != len(seeds):
        raise RuntimeError(f"sweep {sweep_id} has {len(ids)} jobs, expected {len(seeds)}")
    wait_terminal(stack.database_url, ids, poll=0.1)
    return Phase(f"one sweep of {len(ids)} jobs", job_times(stack.database_url, ids), submitting)


# ----------------------------------------------------------------------------- in-process


@dataclass
class LocalRun:
    """The same job run in this process without a database: where the run's time goes."""

    build: float  # worker.tasks.build_problem (the dataset cached as in the worker)
    wall: float  # solve(): solver time + trace-point evaluation
    solver: float  # time_s of the last point
    points: int


def local_runs(seeds: range, home: Path) -> list[LocalRun]:
    from faceoff.core.specs import JobSpec, canonical_job
    from faceoff.solvers.run import solve, warmup
    from faceoff.solvers.trace import StopRules
    from faceoff.worker.tasks import build_problem

    warmup("dual_cd")
    runs = []
    for seed in seeds:
        spec = canonical_job(JobSpec(**tiny_job(seed)))
        started = time.perf_counter()
        problem, _ = build_problem(spec, TINY_SOURCE, home / "uploads")
        built = time.perf_counter()
        stop = StopRules(spec.stop.max_epochs, spec.stop.max_seconds, spec.stop.tol)
        result = solve(
            problem, spec.solver, spec.params, stop, spec.solver_seed, on_point=lambda p: None
        )
        ended = time.perf_counter()
        final = result.final
        runs.append(LocalRun(built - started, ended - built, final.time_s, len(result.trace)))
    return runs[1:]  # the first one loads the dataset, as each worker's first job did


DB_STEPS = (
    "claim",
    "finish, with the 64 trace points",
    "record reference (after finished_at)",
)


def database_steps(url: str, home: Path, count: int) -> list[dict[str, float]]:
    """The worker's database calls for one tiny job, timed one by one in this process on
    ``count`` queued jobs, as ``faceoff.worker.tasks.run_job`` makes them: a job shorter than
    TRACE_BATCH_SECONDS writes its 64 points with its end, in one transaction (the cancel
    check's first read comes one interval after the claim, so a tiny job makes none)."""
    from faceoff.core.db import session_scope
    from faceoff.core.models import SUCCEEDED, Job
    from faceoff.core.references import record_reference
    from faceoff.worker import store

    points = make_points(64)
    steps = []
    for job_id in queued_jobs(url, home, range(2 * 10**6, 2 * 10**6 + count)):
        times = [time.perf_counter()]
        claim = store.claim_job(url, job_id, "bench")
        times.append(time.perf_counter())
        store.finish_job(url, claim, SUCCEEDED, "max_epochs", None, points)
        times.append(time.perf_counter())
        with session_scope(url) as session:
            record_reference(session, session.get(Job, job_id))
        times.append(time.perf_counter())
        steps.append(
            {name: t1 - t0 for name, t0, t1 in zip(DB_STEPS, times[:-1], times[1:], strict=True)}
        )
    return steps


# ----------------------------------------------------------------------------- ingestion


def make_points(n: int) -> list:
    """``n`` trace points as dual_cd records them (extras: coord_epochs, nnz_y)."""
    from faceoff.solvers.trace import TracePoint

    return [
        TracePoint(
            seq=i,
            iteration=200 * i,
            epoch=float(i),
            time_s=1e-3 * i,
            primal=0.5 + 1.0 / (i + 1),
            dual=0.5 - 1.0 / (i + 1),
            gap=2.0 / (i + 1),
            nnz_x=20,
            extras={"coord_epochs": float(i), "nnz_y": 199},
        )
        for i in range(n)
    ]


def queued_jobs(url: str, home: Path, seeds: range) -> list[int]:
    """Queued jobs of ``seeds``, submitted through the API with no worker running (so that
    none is run), to be claimed in this process."""
    with (
        running_stack(url, home, workers=0) as stack,
        httpx.Client(base_url=stack.api_url, timeout=60) as api,
    ):
        return [submit(api, seed) for seed in seeds]


def _rows(job_id: int, points: list) -> list[dict]:
    from faceoff.worker.store import _plain

    return [
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


def _save_with(insert: Callable) -> Callable:
    """save_batch with its insert replaced by ``insert(session, job_id, points)``: the same
    transaction (summary update conditioned on the run, then the points)."""
    from sqlalchemy import update

    from faceoff.core.db import session_scope
    from faceoff.core.models import Job
    from faceoff.worker.store import _current

    def save(url: str, claim, points: list) -> bool:
        last = points[-1]
        summary = {
            "n_points": last.seq + 1,
            "epoch": last.epoch,
            "time_s": last.time_s,
            "primal": last.primal,
            "gap": last.gap,
        }
        with session_scope(url) as session:
            if not session.execute(update(Job).where(*_current(claim)).values(**summary)).rowcount:
                return False
            insert(session, claim.job_id, points)
        return True

    return save


UNNEST = text(
    "INSERT INTO trace_points "
    "(job_id, seq, iteration, epoch, time_s, primal, dual, gap, nnz_x, extras) "
    "SELECT :job_id, * FROM unnest("
    "CAST(:seq AS integer[]), CAST(:iteration AS bigint[]), CAST(:epoch AS float8[]), "
    "CAST(:time_s AS float8[]), CAST(:primal AS float8[]), CAST(:dual AS float8[]), "
    "CAST(:gap AS float8[]), CAST(:nnz_x AS integer[]), CAST(:extras AS json[])) "
    "ON CONFLICT (job_id, seq) DO NOTHING"
)


def _insert_unnest(session, job_id: int, points: list) -> None:
    """``INSERT … SELECT FROM unnest(one array per column)``: one statement, 10 parameters."""
    rows = _rows(job_id, points)
    columns = ("seq", "iteration", "epoch", "time_s", "primal", "dual", "gap", "nnz_x")
    params = {c: [r[c] for r in rows] for c in columns}
    params["extras"] = [json.dumps(r["extras"]) for r in rows]
    session.execute(UNNEST, {"job_id": job_id, **params})


@dataclass
class Ingestion:
    writer: str
    batch: int
    points: int
    seconds: float

    @property
    def rate(self) -> float:
        return self.points / self.seconds


def ingest(url: str, job_id: int, writer: str, save: Callable, batch: int, n: int) -> Ingestion:
    """Claim the queued job ``job_id`` as a worker does, write ``n`` points in batches of
    ``batch`` with ``save``, then check that every point is stored."""
    from faceoff.core.db import engine_for
    from faceoff.worker.store import claim_job

    claim = claim_job(url, job_id, "bench")
    points = make_points(n)
    batches = [points[i : i + batch] for i in range(0, n, batch)]
    started = time.perf_counter()
    for chunk in batches:
        if not save(url, claim, chunk):
            raise RuntimeError(f"job {claim.job_id}: the run was superseded")
    seconds = time.perf_counter() - started
    count = text("SELECT count(*) FROM trace_points WHERE job_id = :id")
    with engine_for(url).connect() as conn:
        stored = conn.execute(count, {"id": claim.job_id}).scalar_one()
    if stored != n:
        raise RuntimeError(f"{writer}: {stored} of {n} points stored")
    return Ingestion(writer, batch, n, seconds)


def run_ingestion(url: str, home: Path, n: int) -> list[Ingestion]:
    from faceoff.worker.store import save_batch

    writers = {
        "faceoff.worker.store.save_batch (as is)": save_batch,
        "prototype: INSERT … SELECT FROM unnest(arrays)": _save_with(_insert_unnest),
    }
    jobs = iter(
        queued_jobs(url, home, range(3 * 10**6, 3 * 10**6 + len(writers) * len(BATCH_SIZES)))
    )
    results = []
    for name, save in writers.items():
        for batch in BATCH_SIZES:
            result = ingest(url, next(jobs), name, save, batch, n)
            log(f"ingestion {name}, batch {batch}: {result.rate:,.0f} points/s")
            results.append(result)
    return results


# ----------------------------------------------------------------------------- report


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f}" if math.isfinite(seconds) else "—"


def verdict(ok: bool) -> str:
    return "meets" if ok else "misses"


def phase_rows(phases: list[Phase]) -> list[list[str]]:
    rows = []
    for phase in phases:
        jobs = phase.jobs
        n = len(jobs)
        metrics = (
            ("overhead incl. queue (finished − created − solver)", [j.overhead for j in jobs]),
            ("queue wait (started − created)", [j.queue_wait for j in jobs]),
            ("run (finished − started)", [j.run for j in jobs]),
            ("solver time (time_s)", [j.solver for j in jobs]),
            ("overhead excl. queue (finished − started − solver)", [j.run_overhead for j in jobs]),
        )
        for index, (metric, values) in enumerate(metrics):
            p50, p95, high = percentiles(values, (50, 95, 100))
            head = (
                [
                    phase.name,
                    str(n),
                    f"{n / phase.submit_seconds:.0f}",
                    f"{n / phase.wall:.1f}",
                ]
                if index == 0
                else ["", "", "", ""]
            )
            rows.append(head + [metric, ms(p50), ms(p95), ms(high)])
    return rows


def report(command: str, env: dict, stack_text: str, results: dict) -> str:
    phases: list[Phase] = results["phases"]
    local: list[LocalRun] = results["local"]
    ingestion: list[Ingestion] = results["ingestion"]
    burst = phases[1]
    alone = phases[0]
    incl = percentiles([j.overhead for j in burst.jobs], (50,))[0]
    excl = percentiles([j.run_overhead for j in burst.jobs], (50,))[0]
    alone_incl = percentiles([j.overhead for j in alone.jobs], (50,))[0]
    as_is = [r for r in ingestion if r.writer.startswith("faceoff.worker.store")]
    best = max(ingestion, key=lambda r: r.rate)
    from faceoff.core.settings import get_settings

    default = next(r for r in as_is if r.batch == get_settings().TRACE_BATCH_POINTS)
    lines = [
        "# Service benchmark: per-job overhead and trace ingestion",
        "",
        f"Command: `{command}`",
        "",
        *environment_lines(env),
        f"- load average at the end {', '.join(f'{v:.2f}' for v in results['load_end'])}",
        f"- {stack_text}",
        f"- jobs: `dual_cd`, logistic, l2 = 1e-2, max_epochs = 5, distinct seeds, on "
        f"`{TINY_DATASET}` (synthetic classification 200 × 20, density 0.5); "
        f"{WARMUP_JOBS} warm-up jobs first (each worker loads the dataset once)",
        "",
        "## Targets",
        "",
    ]
    lines += md_table(
        ["", "measured", "target", ""],
        [
            [
                f"overhead p50, excl. queue wait ({burst.name})",
                f"{ms(excl)} ms",
                "≤ 50 ms",
                verdict(excl <= OVERHEAD_TARGET),
            ],
            [
                "overhead p50, incl. queue wait, one job at a time",
                f"{ms(alone_incl)} ms",
                "≤ 50 ms",
                verdict(alone_incl <= OVERHEAD_TARGET),
            ],
            [
                f"overhead p50, incl. queue wait ({burst.name})",
                f"{ms(incl)} ms",
                "≤ 50 ms",
                verdict(incl <= OVERHEAD_TARGET),
            ],
            [
                f"ingestion, save_batch with the default batch ({default.batch}, "
                "FACEOFF_TRACE_BATCH_POINTS)",
                f"{default.rate:,.0f} points/s",
                "≥ 50,000",
                verdict(default.rate >= INGEST_TARGET),
            ],
            [
                f"ingestion, best variant ({best.writer}, batch {best.batch})",
                f"{best.rate:,.0f} points/s",
                "≥ 50,000",
                verdict(best.rate >= INGEST_TARGET),
            ],
        ],
    )
    lines += [
        "",
        "## Jobs through the API",
        "",
        "Submit/s: jobs ÷ client time spent submitting. Jobs/s: jobs ÷ (last finished_at − "
        "first created_at). Times per job in ms, from the database timestamps "
        "(created_at: the API's insert; started_at: the worker's claim).",
        "",
    ]
    lines += md_table(
        ["phase", "jobs", "submit/s", "jobs/s", "per job", "p50 ms", "p95 ms", "max ms"],
        phase_rows(phases),
    )
    build = percentiles([r.build for r in local], (50,))[0]
    wall = percentiles([r.wall for r in local], (50,))[0]
    solver = percentiles([r.solver for r in local], (50,))[0]
    points = percentiles([r.points for r in local], (50,))[0]
    run = percentiles([j.run for j in burst.jobs], (50,))[0]
    lines += [
        "",
        f"Where a run's time goes (medians): the same jobs solved in this process without a "
        f"database ({len(local)} runs), and the worker's database calls for such a job "
        f"(worker.store, core.references.record_reference) timed one by one in this process on "
        f"{len(results['steps'])} queued jobs of the same database:",
        "",
    ]
    step_medians = {
        name: percentiles([step[name] for step in results["steps"]], (50,))[0] for name in DB_STEPS
    }
    database = sum(v for k, v in step_medians.items() if not k.startswith("record"))
    rows = [
        ["build the problem (dataset cached in memory)", ms(build)],
        ["solver time", ms(solver)],
        [f"trace evaluation ({points:.0f} points: primal, dual, gap)", ms(wall - solver)],
    ]
    rows += [[f"database: {name}", ms(value)] for name, value in step_medians.items()]
    rows += [
        [
            "rest: Celery and the worker process, CPU contention (= run p50 of the burst − "
            "the parts before finished_at)",
            ms(run - build - wall - database),
        ],
        [f"run p50 of the burst ({burst.name})", ms(run)],
    ]
    lines += md_table(["part", "ms"], rows)
    lines += [
        "",
        "## Trace ingestion into PostgreSQL",
        "",
        "One job, points written in batches, each batch one transaction (the job's summary "
        "update conditioned on the run, then the insert with ON CONFLICT DO NOTHING), as "
        "`faceoff.worker.store.save_batch` does (batches of 200 points or more go by COPY "
        "through a "
        "staging table); every point checked stored afterwards.",
        "",
    ]
    lines += md_table(
        ["writer", "batch", "points", "seconds", "points/s", "ms / batch"],
        [
            [
                r.writer,
                str(r.batch),
                f"{r.points:,}",
                f"{r.seconds:.2f}",
                f"{r.rate:,.0f}",
                f"{r.seconds / math.ceil(r.points / r.batch) * 1e3:.2f}",
            ]
            for r in ingestion
        ],
    )
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.run_service",
        description="Per-job overhead of tiny jobs through the API and 2 workers; trace "
        "ingestion into PostgreSQL.",
    )
    parser.add_argument("--quick", action="store_true", help="100 jobs, 20,000 points")
    parser.add_argument("--jobs", type=int, help="jobs per burst phase (default 500)")
    parser.add_argument("--points", type=int, help="points per ingestion run (default 200000)")
    parser.add_argument("--out", type=Path, default=OUT, help=f"default {OUT.relative_to(REPO)}")
    parser.add_argument(
        "--out-logs",
        type=Path,
        default=LOGS,
        help=f"the services' logs (default {LOGS.relative_to(REPO)}, emptied first)",
    )
    args = parser.parse_args(argv)
    args.jobs = args.jobs or (100 if args.quick else 500)
    args.points = args.points or (20_000 if args.quick else 200_000)
    if args.jobs < 1 or args.points < max(BATCH_SIZES):
        parser.error(f"--jobs must be ≥ 1 and --points ≥ {max(BATCH_SIZES)}")
    return args


def main(argv: list[str] | None = None) -> int:
    configure_numba_cache()  # before any kernel is imported
    args = parse_args(argv)
    command = " ".join(["python -m bench.run_service", *(sys.argv[1:] if argv is None else argv)])
    require_services()
    home = args.out_logs
    shutil.rmtree(home, ignore_errors=True)
    with fresh_database() as url:
        env = environment(url)
        log(f"{env['cpu']} · {env['cores']} cores · load {env['load_average'][0]:.2f}")
        with running_stack(url, home, workers=WORKERS) as stack:
            log(f"services up: {stack.api_url}, queue {stack.queue}")
            stack_text = stack.describe()
            with httpx.Client(base_url=stack.api_url, timeout=120) as api:
                register_tiny_dataset(api)
                warm = [submit(api, seed) for seed in range(WARMUP_JOBS)]
                wait_terminal(url, warm, poll=0.05)
                phases = [one_at_a_time(stack, api, range(100, 100 + SEQUENTIAL_JOBS))]
                log(f"{phases[-1].name}: done")
                phases.append(burst_of_posts(stack, range(1000, 1000 + args.jobs)))
                log(f"{phases[-1].name}: {len(phases[-1].jobs) / phases[-1].wall:.1f} jobs/s")
                phases.append(one_sweep(stack, api, range(10**5, 10**5 + args.jobs)))
                log(f"{phases[-1].name}: {len(phases[-1].jobs) / phases[-1].wall:.1f} jobs/s")
        local = local_runs(range(100, 100 + SEQUENTIAL_JOBS + 1), home)
        steps = database_steps(url, home / "steps", SEQUENTIAL_JOBS)
        ingestion = run_ingestion(url, home / "ingestion", args.points)
        results = {
            "phases": phases,
            "local": local,
            "steps": steps,
            "ingestion": ingestion,
            "load_end": os.getloadavg(),
        }
        text_md = report(command, env, stack_text, results)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text_md)
    print()
    print(text_md)
    log(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
