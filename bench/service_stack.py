"""The docker-compose services run natively for the service benchmarks.

:func:`running_stack` does what ``docker compose up`` does, with this virtualenv's Python
and this machine's PostgreSQL and Redis: ``python -m faceoff.core.migrate`` (one-shot), then
``python -m faceoff.worker`` (one process per worker, ``FACEOFF_WORKER_CONCURRENCY`` pool processes
each) and ``uvicorn faceoff.api.main:app`` (``--workers N``) on a free loopback port, and waits
until ``/api/v1/health`` answers with every worker live. Every process is stopped when the
context ends; the logs stay in ``home``.

Also shared by ``bench.run_service`` and ``bench.run_load``: the tiny synthetic dataset and
job specs, percentiles, the environment header and Markdown tables.
"""

from __future__ import annotations

import os
import platform
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import httpx
import numpy as np

from bench.common import REPO, cpu_model
from faceoff.cli.up import free_port

BROKER_URL = "redis://127.0.0.1:6379/15"  # the tests' Redis database; queues are unique
PG_ADMIN = ("127.0.0.1", 5432)
START_SECONDS = 240.0  # a worker compiles every kernel before it consumes (cached: seconds)
STOP_SECONDS = 20.0

TINY_DATASET = "bench-tiny"
TINY_SOURCE = {
    "kind": "synthetic",
    "generator": "classification",
    "n_samples": 200,
    "n_features": 20,
    "density": 0.5,
    "seed": 0,
}
TINY_MAX_EPOCHS = 5.0  # dual_cd: a few ms of solver time, about 64 trace points


def tiny_job(seed: int) -> dict:
    """A tiny job body for ``POST /jobs``; distinct seeds are distinct jobs (no dedup)."""
    return {
        "dataset": TINY_DATASET,
        "loss": "logistic",
        "l2": 1e-2,
        "solver": "dual_cd",
        "seed": seed,
        "stop": {"max_epochs": TINY_MAX_EPOCHS, "max_seconds": 10.0},
    }


def tiny_sweep(seeds: Sequence[int]) -> dict:
    """The sweep of :func:`tiny_job` over ``seeds`` (one job per seed)."""
    job = tiny_job(0)
    return {
        "name": f"bench-tiny-{seeds[0]}-{seeds[-1]}",
        "datasets": [TINY_DATASET],
        "losses": [job["loss"]],
        "l2": [job["l2"]],
        "solvers": [job["solver"]],
        "seeds": list(seeds),
        "stop": job["stop"],
    }


def register_tiny_dataset(api: httpx.Client) -> None:
    response = api.post("/datasets", json={"name": TINY_DATASET, "source": TINY_SOURCE})
    if response.status_code not in (200, 201):
        raise RuntimeError(f"registering {TINY_DATASET} failed: {response.text}")


# ----------------------------------------------------------------------------- processes


@dataclass
class Stack:
    """The running services: where to reach them and where their logs are."""

    database_url: str
    broker_url: str
    queue: str
    api_url: str  # ends in /api/v1
    home: Path
    workers: int
    worker_concurrency: int
    api_workers: int

    def describe(self) -> str:
        return (
            f"API: `uvicorn faceoff.api.main:app --workers {self.api_workers}`; "
            f"{self.workers} × `python -m faceoff.worker` with FACEOFF_WORKER_CONCURRENCY="
            f"{self.worker_concurrency} (prefork); PostgreSQL 127.0.0.1:5432 (fresh database, "
            "`python -m faceoff.core.migrate`); Redis 127.0.0.1:6379 db 15, own queue"
        )


def require_services() -> None:
    """SystemExit naming the service when PostgreSQL or Redis is not reachable."""
    for name, address in (("PostgreSQL", PG_ADMIN), ("Redis", ("127.0.0.1", 6379))):
        try:
            with socket.create_connection(address, timeout=2):
                pass
        except OSError:
            raise SystemExit(f"{name} is not reachable at {address[0]}:{address[1]}") from None


def _log_tails(home: Path) -> str:
    return "\n".join(f"--- {p}\n{p.read_text()[-3000:]}" for p in sorted(home.glob("*.log")))


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        process.wait(STOP_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _spawn(argv: list[str], env: dict[str, str], log: Path, stack: ExitStack) -> None:
    with log.open("wb") as handle:
        process = subprocess.Popen(argv, cwd=REPO, env=env, stdout=handle, stderr=subprocess.STDOUT)
    stack.callback(_stop, process)


def _wait_healthy(api_url: str, workers: int, home: Path) -> None:
    deadline = time.monotonic() + START_SECONDS
    with httpx.Client(base_url=api_url, timeout=10) as client:
        while True:
            try:
                health = client.get("/health")
                if health.status_code == 200 and health.json()["workers"] >= workers:
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"the API at {api_url} did not report {workers} live workers within "
                    f"{START_SECONDS:g} s\n{_log_tails(home)}"
                )
            time.sleep(0.5)


def _purge_queue(broker_url: str, queue: str) -> None:
    import redis

    with redis.Redis.from_url(broker_url) as client:
        client.delete(queue)


@contextmanager
def running_stack(
    database_url: str,
    home: Path,
    workers: int = 2,
    worker_concurrency: int = 1,
    api_workers: int = 1,
    broker_url: str = BROKER_URL,
) -> Iterator[Stack]:
    """migrate, ``workers`` × ``python -m faceoff.worker`` and the API on ``database_url`` (an
    existing PostgreSQL database, migrated here), on a queue of its own."""
    home.mkdir(parents=True, exist_ok=True)
    queue = f"bench-{uuid.uuid4().hex[:10]}"
    port = free_port()
    env = {
        **os.environ,
        "FACEOFF_DATABASE_URL": database_url,
        "FACEOFF_BROKER_URL": broker_url,
        "FACEOFF_QUEUE": queue,
        "FACEOFF_HOME": str(home),
        "FACEOFF_WORKER_CONCURRENCY": str(worker_concurrency),
        "PYTHONUNBUFFERED": "1",
    }
    python = sys.executable
    subprocess.run(
        [python, "-m", "faceoff.core.migrate"], cwd=REPO, env=env, check=True, capture_output=True
    )
    api_url = f"http://127.0.0.1:{port}/api/v1"
    with ExitStack() as stack:
        stack.callback(_purge_queue, broker_url, queue)
        for index in range(workers):
            argv = [python, "-m", "faceoff.worker", "-n", f"w{index}-{queue}@%h"]
            _spawn(argv, env, home / f"worker{index}.log", stack)
        api = [python, "-m", "uvicorn", "faceoff.api.main:app", "--host", "127.0.0.1"]
        api += ["--port", str(port), "--workers", str(api_workers)]
        _spawn(api, env, home / "faceoff.api.log", stack)
        _wait_healthy(api_url, workers, home)
        yield Stack(
            database_url,
            broker_url,
            queue,
            api_url,
            home,
            workers,
            worker_concurrency,
            api_workers,
        )


@contextmanager
def fresh_database() -> Iterator[str]:
    """A new PostgreSQL database (dropped afterwards): its SQLAlchemy URL."""
    from tests.backends import create_pg_database, drop_pg_database

    url = create_pg_database()
    try:
        yield url
    finally:
        drop_pg_database(url)


def queue_length(broker_url: str, queue: str) -> int:
    """Messages waiting in the broker's queue."""
    import redis

    with redis.Redis.from_url(broker_url) as client:
        return int(client.llen(queue))


# ----------------------------------------------------------------------------- reporting


def percentiles(values: Sequence[float], qs: Sequence[float]) -> list[float]:
    """The ``qs`` percentiles (0–100) of ``values``; NaN for no values."""
    if not len(values):
        return [float("nan")] * len(qs)
    return [float(v) for v in np.percentile(np.asarray(values, dtype=float), qs)]


def _commit() -> str:
    """HEAD's commit, read from .git (no git command is run)."""
    git = REPO / ".git"
    try:
        head = (git / "HEAD").read_text().strip()
        if not head.startswith("ref: "):
            return head[:7]
        ref = head[5:]
        if (git / ref).is_file():
            return (git / ref).read_text().strip()[:7]
        for line in (git / "packed-refs").read_text().splitlines():
            if line.endswith(" " + ref):
                return line.split()[0][:7]
    except OSError:
        pass
    return "unknown"


def environment(database_url: str, broker_url: str = BROKER_URL) -> dict:
    """Date, commit, CPU, load, versions of the service's packages and servers."""
    import psycopg
    import redis

    from tests.backends import PG_ADMIN_URL

    dsn = PG_ADMIN_URL.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(dsn) as conn:
        postgres = conn.execute("SHOW server_version").fetchone()[0]
    with redis.Redis.from_url(broker_url) as client:
        redis_server = client.info("server")["redis_version"]
    packages = ("fastapi", "uvicorn", "celery", "kombu", "SQLAlchemy", "psycopg", "httpx")
    return {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "commit": _commit(),
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "load_average": os.getloadavg(),
        "python": platform.python_version(),
        "packages": {name: metadata.version(name) for name in packages},
        "postgresql": postgres,
        "redis": redis_server,
        "database": database_url.rsplit("/", 1)[1],
    }


def environment_lines(env: dict) -> list[str]:
    load = ", ".join(f"{v:.2f}" for v in env["load_average"])
    return [
        f"- {env['date']}, commit {env['commit']} (working tree as run)",
        f"- CPU: {env['cpu']}, {env['cores']} cores; load average at start {load}",
        f"- Python {env['python']}; " + ", ".join(f"{k} {v}" for k, v in env["packages"].items()),
        f"- PostgreSQL {env['postgresql']} (database {env['database']}), Redis {env['redis']}, "
        "all on this machine (loopback)",
    ]
