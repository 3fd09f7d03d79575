"""A real Celery worker subprocess for the service tests, and helpers to wait on jobs."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from faceoff.core.settings import Settings

REPO = Path(__file__).resolve().parents[2]
# this interpreter's celery: a venv's bin/celery script may carry another venv's shebang
CELERY = [sys.executable, "-m", "celery"]
READY = b" ready."  # celery logs "celery@<name> ready." once it consumes

T = TypeVar("T")


@dataclass
class WorkerProcess:
    """A running worker: its process and its log file."""

    process: subprocess.Popen
    log_path: Path

    def log(self, start: int = 0) -> str:
        """The worker's log from byte ``start`` on."""
        with open(self.log_path, "rb") as log:
            log.seek(start)
            return log.read().decode(errors="replace")

    def log_size(self) -> int:
        return self.log_path.stat().st_size


def stop_process(process: subprocess.Popen, timeout: float = 10.0) -> None:
    """SIGTERM, then SIGKILL if ``process`` has not ended within ``timeout`` seconds."""
    if process.poll() is None:
        process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def worker_env(settings: Settings) -> dict[str, str]:
    """The environment that gives a worker process ``settings``."""
    return {
        **os.environ,
        "FACEOFF_DATABASE_URL": settings.database_url,
        "FACEOFF_BROKER_URL": settings.BROKER_URL,
        "FACEOFF_QUEUE": settings.QUEUE,
        "FACEOFF_HOME": str(settings.HOME),
        "PYTHONUNBUFFERED": "1",
    }


@contextmanager
def running_worker(
    settings: Settings,
    pool: str = "prefork",
    concurrency: int = 1,
    start_timeout: float = 180,
    cwd: Path = REPO,
) -> Iterator[WorkerProcess]:
    """Start ``celery worker`` on ``settings.QUEUE`` in ``cwd`` (which celery puts first on
    sys.path), wait until it is ready, stop it with SIGTERM afterwards (SIGKILL if it has not
    stopped within 30 s). The log is printed if the worker does not become ready."""
    settings.HOME.mkdir(parents=True, exist_ok=True)
    log_path = settings.HOME / f"worker-{settings.QUEUE}.log"
    command = [
        *CELERY,
        "-A",
        "faceoff.worker.celery_app",
        "worker",
        "-Q",
        settings.QUEUE,
        f"--pool={pool}",
        "-c",
        str(concurrency),
        "--loglevel=info",
        "-n",
        f"{settings.QUEUE}@%h",
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
    ]
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            command, cwd=cwd, env=worker_env(settings), stdout=log, stderr=subprocess.STDOUT
        )
    worker = WorkerProcess(process, log_path)
    try:
        deadline = time.monotonic() + start_timeout
        while READY not in log_path.read_bytes():
            if process.poll() is not None or time.monotonic() > deadline:
                print(worker.log())
                raise RuntimeError(f"the worker did not become ready (exit code {process.poll()})")
            time.sleep(0.1)
        yield worker
    finally:
        stop_process(process, timeout=30)


def wait_for(probe: Callable[[], T | None], timeout: float, what: str, worker: WorkerProcess) -> T:
    """Poll ``probe`` every 50 ms until it returns something truthy; on timeout fail with
    ``what`` and the worker's log."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}\n{worker.log()}")


def succeeded_trace(api_url: str, job_id: int, worker: WorkerProcess, timeout: float = 300):
    """Wait (through the API at ``api_url``) for job ``job_id`` to finish; assert it
    succeeded (else fail with its error and the worker's log); return its trace points."""
    import httpx

    def finished():
        body = httpx.get(f"{api_url}/jobs/{job_id}", timeout=30).json()
        return body if body["status"] in ("succeeded", "failed", "cancelled") else None

    done = wait_for(finished, timeout, f"job {job_id} to finish", worker)
    assert done["status"] == "succeeded", (done["error"], worker.log()[-3000:])
    return httpx.get(f"{api_url}/jobs/{job_id}/trace", timeout=30).json()["data"]
