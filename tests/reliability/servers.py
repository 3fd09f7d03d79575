"""The API as a real uvicorn process, started the way ``faceoff up`` starts it."""

from __future__ import annotations

import os
import resource
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from faceoff.cli.up import api_command, free_port
from faceoff.core.settings import Settings
from tests.service.workers import REPO, stop_process, worker_env

# a synthetic dataset whose jobs take milliseconds (dual_cd, a few epochs)
TINY = {
    "kind": "synthetic",
    "generator": "classification",
    "n_samples": 200,
    "n_features": 20,
    "density": 0.5,
    "seed": 0,
}


@dataclass
class ApiProcess:
    """A running API: its port, process and log file (stdout and stderr)."""

    port: int
    log_path: Path
    process: subprocess.Popen | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        """The base URL of the API's operations."""
        return f"{self.base}/api/v1"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def peak_rss(self) -> int:
        """The process's peak resident set size so far, in bytes (VmHWM)."""
        return peak_rss(self.process.pid)


def peak_rss(pid: int) -> int:
    """The peak resident set size of process ``pid`` so far, in bytes (VmHWM)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmHWM in /proc/{pid}/status")


def api_env(settings: Settings, **extra: str) -> dict[str, str]:
    """The environment variables that give an API process ``settings`` (and ``extra``)."""
    return {
        **worker_env(settings),
        "FACEOFF_AUTH_ENABLED": str(settings.AUTH_ENABLED).lower(),
        "FACEOFF_SECRET_KEY": settings.SECRET_KEY,
        "FACEOFF_MAX_UPLOAD_BYTES": str(settings.MAX_UPLOAD_BYTES),
        **extra,
    }


def address_space_limit(max_bytes: int | None) -> Callable[[], None] | None:
    """A ``preexec_fn`` that caps the child's address space at ``max_bytes`` (RLIMIT_AS),
    so a process that would grow past it fails (MemoryError) instead of swapping the
    machine; None for no cap."""
    if max_bytes is None:
        return None

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (max_bytes, max_bytes))

    return cap


@contextmanager
def running_api(
    env: dict[str, str],
    log_path: Path,
    host: str = "127.0.0.1",
    timeout: float = 60.0,
    max_address_space: int | None = None,
) -> Iterator[ApiProcess]:
    """uvicorn serving the API on ``host`` and a free port, with ``env`` added to this
    process's environment (less its own ``FACEOFF_MAX_*`` limits, so a test sees the
    defaults unless ``env`` sets them), its address space capped at ``max_address_space``
    bytes if given; stopped with SIGTERM (then SIGKILL) afterwards."""
    api = ApiProcess(free_port(), log_path)
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("FACEOFF_MAX_")}
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        process = subprocess.Popen(
            api_command(host, api.port),
            cwd=REPO,
            env={**inherited, "PYTHONUNBUFFERED": "1", **env},
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=address_space_limit(max_address_space),
        )
    api.process = process
    try:
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the API exited early:\n{api.log()}")
            try:
                httpx.get(f"{api.url}/openapi.json", timeout=2)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the API did not answer:\n{api.log()}") from None
                time.sleep(0.2)
        yield api
    finally:
        stop_process(process)
