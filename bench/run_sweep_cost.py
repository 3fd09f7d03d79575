"""What a whole comparison costs beside its solvers: one sweep through the embedded service.

The issue (#14, target 4): "a sweep of our solvers has a wall time from submission to the
last trace point ≤ 1.2× the sum of its jobs' solver time, with every curve keeping ≥ 30
points (peers traced by refits pay for their refits; report their cost separately)".

The service runs as ``faceoff up`` runs it (:mod:`faceoff.cli.up`): a Redis broker, a
SQLite database in a fresh ``FACEOFF_HOME``, one worker with one pool process and the API
(no dashboard). Once the worker is live (its kernels compiled), the dataset — a dense
synthetic classification problem, 50,000 × 400 by default — is registered and two sweeps
are submitted, one after the other, logistic loss, l2 = 1e-5, default stop rules:

1. **ours**: ``dual_cd``, ``lbfgs``, ``saga``;
2. **refit peer**: ``sklearn.lbfgs`` (its trace is made of fits from scratch).

For each sweep: wall = the last job's ``finished_at`` (its last trace points are written
with its end) − the time ``POST /sweeps`` was sent; Σ solver = the sum of the jobs' last
trace point ``time_s``; the ratio; points per curve. Each job's time is split into queue
wait (claimed − created), evaluation (the run's ``wall_s`` − solver time: trace points and
the clock stopped) and the rest (claim, dataset and problem, database writes).

``python -m bench.run_sweep_cost`` prints a Markdown report (``--out`` to write it too);
``--n-samples 5000`` checks the harness in a minute.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from bench.common import environment, md_table

DATASET = "bench-dense"
OURS = ["dual_cd", "lbfgs", "saga"]
REFIT_PEERS = ["sklearn.lbfgs"]
RATIO_TARGET = 1.2
MIN_POINTS = 30


def dataset_source(n_samples: int, n_features: int) -> dict:
    return {
        "kind": "synthetic",
        "generator": "classification",
        "n_samples": n_samples,
        "n_features": n_features,
        "density": 1.0,
        "seed": 0,
    }


def sweep_body(name: str, solvers: list[str], l2: float) -> dict:
    return {
        "name": name,
        "datasets": [DATASET],
        "losses": ["logistic"],
        "l2": [l2],
        "solvers": solvers,
        "seeds": [0],
    }


def _epoch(moment: datetime) -> float:
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def sweep_jobs(url: str, sweep_id: int) -> list[dict]:
    """Each job of the sweep: times from the database and its number of trace points."""
    from faceoff.core.db import engine_for
    from faceoff.core.models import Job, TracePoint

    counts = (
        select(TracePoint.job_id, func.count().label("n")).group_by(TracePoint.job_id).subquery()
    )
    query = (
        select(Job, counts.c.n)
        .outerjoin(counts, counts.c.job_id == Job.id)
        .where(Job.sweep_id == sweep_id)
        .order_by(Job.id)
    )
    with Session(engine_for(url)) as session:
        rows = session.execute(query).all()
        return [
            {
                "solver": job.solver,
                "status": job.status,
                "stop_reason": job.stop_reason,
                "created": _epoch(job.created_at),
                "started": _epoch(job.started_at) if job.started_at else None,
                "finished": _epoch(job.finished_at) if job.finished_at else None,
                "solver_s": job.time_s or 0.0,
                "wall_s": job.wall_s or 0.0,
                "points": n or 0,
                "gap": job.gap,
            }
            for job, n in rows
        ]


def run_sweep(client, url: str, body: dict, timeout: float) -> dict:
    """Submit ``body`` and wait until every job is terminal; returns the measurements."""
    sent = time.time()
    sweep_id = client.submit_sweep(body)["id"]
    deadline = time.monotonic() + timeout
    while True:
        jobs = sweep_jobs(url, sweep_id)
        if jobs and all(j["finished"] is not None for j in jobs):
            break
        if time.monotonic() > deadline:
            raise RuntimeError(f"sweep {sweep_id} not finished after {timeout:g} s")
        time.sleep(0.1)
    wall = max(j["finished"] for j in jobs) - sent
    solver = sum(j["solver_s"] for j in jobs)
    return {"name": body["name"], "wall": wall, "solver": solver, "sent": sent, "jobs": jobs}


def start_service(home: Path):
    """Redis, migrated SQLite, one worker, the API (as ``faceoff up``); returns
    (supervisor, client, database url)."""
    from faceoff.cli.up import (
        Supervisor,
        _api_ready,
        _redis_up,
        api_command,
        free_port,
        redis_server,
        wait_until,
    )
    from faceoff.client import Client
    from faceoff.core.migrate import upgrade

    logs = home / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    url = f"sqlite:///{home / 'faceoff.db'}"
    redis_port, api_port = free_port(), free_port()
    env = {
        **os.environ,
        "FACEOFF_HOME": str(home),
        "FACEOFF_DATABASE_URL": url,
        "FACEOFF_BROKER_URL": f"redis://127.0.0.1:{redis_port}/0",
        "FACEOFF_WORKER_CONCURRENCY": "1",
    }
    supervisor = Supervisor(logs)
    supervisor.start(
        "redis",
        [redis_server(), "--port", str(redis_port), "--bind", "127.0.0.1", "--save", ""],
        env,
    )
    wait_until(lambda: _redis_up(redis_port), "redis", supervisor, 30)
    upgrade(url)
    supervisor.start("worker", [sys.executable, "-m", "faceoff.worker"], env)
    supervisor.start("api", api_command("127.0.0.1", api_port), env)
    client = Client(f"http://127.0.0.1:{api_port}")
    wait_until(lambda: _api_ready(client), "the API with a live worker", supervisor, 600)
    return supervisor, client, url


def job_rows(result: dict) -> list[list[str]]:
    rows = []
    for j in result["jobs"]:
        evaluation = j["wall_s"] - j["solver_s"]
        rest = (j["finished"] - j["started"]) - j["wall_s"]
        rows.append(
            [
                j["solver"],
                j["stop_reason"] or j["status"],
                str(j["points"]),
                f"{j['solver_s']:.2f}",
                f"{evaluation:.2f}",
                f"{rest:.2f}",
                f"{j['started'] - j['created']:.2f}",
                f"{j['gap']:.1e}" if j["gap"] is not None else "",
            ]
        )
    return rows


def report(results: list[dict], args: argparse.Namespace, env: dict) -> str:
    lines = [
        f"# Sweep cost: {args.n_samples:,} × {args.n_features} dense, logistic, l2 = {args.l2:g}",
        "",
        f"- {env['date']}, commit {env['commit']}{' (dirty)' if env['dirty'] else ''}",
        f"- CPU: {env['cpu']}, {env['cores']} cores; Python {env['python']}, numba {env['numba']}",
        f"- uptime before: {env['uptime']}",
        f"- uptime after: {env['uptime after']}",
        "- embedded service (as `faceoff up`): Redis, SQLite, one worker with one process, API",
        "",
    ]
    summary = []
    for r in results:
        points = [j["points"] for j in r["jobs"]]
        ratio = r["wall"] / r["solver"] if r["solver"] > 0 else float("inf")
        summary.append(
            [
                r["name"],
                f"{r['wall']:.2f}",
                f"{r['solver']:.2f}",
                f"{ratio:.2f}×",
                ", ".join(map(str, points)),
            ]
        )
    lines += md_table(["sweep", "wall s", "Σ solver s", "wall / solver", "points"], summary)
    for r in results:
        lines += ["", f"## {r['name']}", ""]
        lines += md_table(
            ["solver", "stop", "points", "solver s", "eval s", "other s", "queue s", "gap"],
            job_rows(r),
        )
    lines += [
        "",
        "eval = the run's wall time − its solver time (trace points; clock stopped); other = "
        "claimed → finished − the run's wall time (dataset, problem, database writes); queue "
        "= created → claimed. A refit peer's solver time is the sum of its fits.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n-samples", type=int, default=50_000)
    parser.add_argument("--n-features", type=int, default=400)
    parser.add_argument("--l2", type=float, default=1e-5)
    parser.add_argument("--repeats", type=int, default=1, help="times the sweep of ours runs")
    parser.add_argument("--no-peers", action="store_true", help="skip the refit peer sweep")
    parser.add_argument("--out", type=Path, help="also write the report here")
    parser.add_argument("--timeout", type=float, default=900.0)
    args = parser.parse_args(argv)
    env = environment()
    env["uptime"] = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="faceoff-sweep-cost-") as tmp:
        supervisor, client, url = start_service(Path(tmp))
        try:
            client.register_dataset(DATASET, dataset_source(args.n_samples, args.n_features))
            results = []
            for k in range(args.repeats):
                body = sweep_body(f"ours #{k + 1}", OURS, args.l2)
                results.append(run_sweep(client, url, body, args.timeout))
                print(f"{results[-1]['name']}: {results[-1]['wall']:.2f} s", flush=True)
            if not args.no_peers:
                body = sweep_body("refit peer", REFIT_PEERS, args.l2)
                results.append(run_sweep(client, url, body, args.timeout))
        finally:
            supervisor.stop()
    env["uptime after"] = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    text = report(results, args, env)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
