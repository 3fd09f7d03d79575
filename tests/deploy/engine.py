"""The Docker engine and the compose command of the deploy tests.

``docker_engine()`` uses a running ``dockerd`` or starts one (root only) and stops it again
afterwards, unless another test run is using it by then. A ``dockerd`` started here runs with
``--iptables=false --ip-forward=false``: it leaves the host's firewall and forwarding alone,
so containers reach each other on their compose network and nothing outside this machine
(the image builds use the host's network, see images.py), and the host reaches them only
through ports published on 127.0.0.1 (docker-proxy, the engine's own process, forwards
them)."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

DOCKER_TIMEOUT = 60.0


def docker_cli() -> str | None:
    return shutil.which("docker")


def run(argv: list[str], timeout: float = 600, **kwargs) -> subprocess.CompletedProcess:
    """``argv`` with its output captured as text; raises with the output when it fails."""
    result = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kwargs)
    if result.returncode != 0:
        raise RuntimeError(
            f"{' '.join(argv)} exited with {result.returncode}:\n"
            f"{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
        )
    return result


def docker(*args: str, timeout: float = 600, **kwargs) -> subprocess.CompletedProcess:
    cli = docker_cli()
    assert cli is not None, "docker CLI not found"
    return run([cli, *args], timeout=timeout, **kwargs)


def _engine_answers() -> bool:
    cli = docker_cli()
    if cli is None:
        return False
    try:
        return subprocess.run([cli, "info"], capture_output=True, timeout=20).returncode == 0
    except subprocess.TimeoutExpired:
        return False


class EngineUnavailable(Exception):
    """No Docker engine answers and none could be started here; the message says why."""


@contextmanager
def docker_engine(log_path: Path, users: Path) -> Iterator[bool]:
    """A Docker engine while the block runs; yields whether it was started here. Every user
    holds a shared lock on the file ``users`` meanwhile: a dockerd started here is stopped at
    the end only if no other test run on this machine is using it then (they leave it
    running otherwise). Raises EngineUnavailable with the reason when there is no engine."""
    if docker_cli() is None:
        raise EngineUnavailable("the docker CLI is not installed (Debian package docker.io)")
    users.parent.mkdir(parents=True, exist_ok=True)
    with users.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_SH)
        if _engine_answers():
            yield False
            return
        with _started_dockerd(log_path) as started:
            try:
                yield True
            finally:
                try:  # the last user: nobody else holds the shared lock
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    started.detach = True


class _Dockerd:
    def __init__(self, process: subprocess.Popen) -> None:
        self.process = process
        self.detach = False


@contextmanager
def _started_dockerd(log_path: Path) -> Iterator[_Dockerd]:
    dockerd = shutil.which("dockerd")
    if dockerd is None:
        raise EngineUnavailable("no engine answers and dockerd is not installed (docker.io)")
    if os.geteuid() != 0:
        raise EngineUnavailable("no engine answers and dockerd can only be started as root")
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("ab") as log:
        process = subprocess.Popen(
            [dockerd, "--iptables=false", "--ip-forward=false"],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    started = _Dockerd(process)
    try:
        deadline = time.monotonic() + DOCKER_TIMEOUT
        while not _engine_answers():
            if process.poll() is not None or time.monotonic() > deadline:
                tail = log_path.read_text(errors="replace")[-3000:]
                raise EngineUnavailable(f"dockerd did not start (log {log_path}):\n{tail}")
            time.sleep(0.5)
        yield started
    finally:
        if process.poll() is None and not started.detach:
            process.terminate()
            try:
                process.wait(60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def compose_command() -> list[str] | None:
    """The compose command: FACEOFF_COMPOSE if set (e.g. ``docker compose``), else Debian's
    ``docker-compose`` (1.29), else the Compose v2 plugin; None when there is none."""
    chosen = os.environ.get("FACEOFF_COMPOSE")
    if chosen:
        return chosen.split()
    legacy = shutil.which("docker-compose")
    if legacy:
        return [legacy]
    cli = docker_cli()
    if cli and subprocess.run([cli, "compose", "version"], capture_output=True).returncode == 0:
        return [cli, "compose"]
    return None
