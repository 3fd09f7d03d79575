"""A real API server process for the reliability tests: ``uvicorn api.main:app`` with the
settings of a test, on a free loopback port."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from cli.up import free_port
from core.settings import Settings
from tests.service.workers import REPO, worker_env

START_SECONDS = 60.0


@dataclass
class ApiProcess:
    """A running API: its base URL (ending in ``/api/v1``), process and log file."""

    url: str
    process: subprocess.Popen
    log_path: Path

    @property
    def root(self) -> str:
        return self.url.removesuffix("/api/v1")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


def api_env(settings: Settings, **extra: str) -> dict[str, str]:
    """The environment that gives an API process ``settings`` (and ``extra`` variables)."""
    env = worker_env(settings)
    env.update(
        FACEOFF_AUTH_ENABLED=str(settings.AUTH_ENABLED).lower(),
        FACEOFF_SECRET_KEY=settings.SECRET_KEY,
        FACEOFF_MAX_UPLOAD_BYTES=str(settings.MAX_UPLOAD_BYTES),
        **extra,
    )
    return env


@contextmanager
def running_api(settings: Settings, **extra_env: str) -> Iterator[ApiProcess]:
    """Start ``uvicorn api.main:app`` for ``settings`` and wait until it answers; SIGTERM
    (then SIGKILL) afterwards."""
    settings.HOME.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log_path = settings.HOME / f"api-{port}.log"
    command = [sys.executable, "-m", "uvicorn", "api.main:app", "--host", "127.0.0.1"]
    command += ["--port", str(port), "--log-level", "warning"]
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            command,
            cwd=REPO,
            env=api_env(settings, **extra_env),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    api = ApiProcess(f"http://127.0.0.1:{port}/api/v1", process, log_path)
    try:
        deadline = time.monotonic() + START_SECONDS
        while True:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the API did not start:\n{api.log()}")
            try:
                httpx.get(f"{api.root}/metrics", timeout=1.0)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        yield api
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
