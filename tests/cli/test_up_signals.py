"""`faceoff up` stops everything it started, with real processes: SIGTERM once it is up,
SIGHUP (a closed terminal) while the worker is still compiling, and even `kill -9` of
`faceoff up` itself (each child is told to follow its parent): afterwards no process of the
run is left (none re-parented to PID 1) and the API, dashboard and broker ports are free."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from faceoff.cli.up import free_port, port_is_free
from tests.conftest import REPO

CHILDREN = ("redis", "faceoff.worker", "uvicorn", "faceoff.dashboard")


def _run_of(home: Path, up: subprocess.Popen | None = None) -> list[psutil.Process]:
    """The processes of the run whose FACEOFF_HOME is ``home``: those that inherited it
    (redis-server rewrites its environment's memory for its process title, so it is found
    as a descendant of ``up``), and ``up``'s descendants."""
    found = {}
    if up is not None:
        found = {p.pid: p for p in psutil.Process(up.pid).children(recursive=True)}
    for proc in psutil.process_iter():
        try:
            if proc.environ().get("FACEOFF_HOME") == str(home):
                found.setdefault(proc.pid, proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return list(found.values())


def _broker_port(run: list[psutil.Process]) -> int:
    """The embedded broker's port, from the worker's FACEOFF_BROKER_URL."""
    worker = next(p for p in run if p.cmdline()[-1:] == ["faceoff.worker"])
    return int(worker.environ()["FACEOFF_BROKER_URL"].rsplit(":", 1)[1].split("/")[0])


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def _wait(condition, what: str, log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what} after {timeout:g} s:\n{log.read_text()}"
        time.sleep(0.3)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("signum", "when"),
    [(signal.SIGTERM, "up"), (signal.SIGHUP, "starting"), (signal.SIGKILL, "up")],
    ids=["SIGTERM-when-up", "SIGHUP-while-starting", "SIGKILL-when-up"],
)
def test_a_signal_leaves_no_process_and_frees_the_ports(signum, when, tmp_path):
    home = tmp_path / "home"
    port, dashboard_port = free_port(), free_port()
    env = {**os.environ, "FACEOFF_HOME": str(home), "PYTHONUNBUFFERED": "1"}
    env.pop("FACEOFF_DATABASE_URL", None)
    env.pop("FACEOFF_BROKER_URL", None)
    log = tmp_path / "up.log"
    command = [sys.executable, "-m", "faceoff.cli.up", "--no-demo", "--workers", "1"]
    command += ["--port", str(port), "--dashboard-port", str(dashboard_port)]
    with log.open("wb") as handle:  # a session of its own, as a terminal's shell gives it
        up = subprocess.Popen(
            command, cwd=REPO, env=env, stdout=handle, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    seen: list[psutil.Process] = []
    try:
        _wait(lambda: _listening(port) and _listening(dashboard_port), "no API", log, 300)
        if when == "up":
            _wait(lambda: "Faceoff is up" in log.read_text(), "not up", log, 400)
        run = [p for p in _run_of(home, up) if p.pid != up.pid]
        seen.extend(run)
        commands = [" ".join(p.cmdline()) for p in run]
        for child in CHILDREN:  # all four are running (and, once up, the worker's pool)
            assert any(child in c for c in commands), (child, commands)
        assert len(run) >= len(CHILDREN) + (1 if when == "up" else 0), commands
        redis_port = _broker_port(run)
        assert _listening(redis_port)
        up.send_signal(signum)
        up.wait(60)
        if signum != signal.SIGKILL:  # it said why it stopped, and stopped cleanly
            assert up.returncode == 0, log.read_text()
            assert f"stopping ({signal.Signals(signum).name})" in log.read_text()
        gone, alive = psutil.wait_procs(run, timeout=30)
        assert not alive, f"still running after {signal.Signals(signum).name}: {alive}"
        assert not _run_of(home), "a process of the run is left"
        for free in (port, dashboard_port, redis_port):
            assert port_is_free(free) and not _listening(free), free
    finally:
        if up.poll() is None:
            up.kill()
            up.wait()
        for proc in [*seen, *_run_of(home)]:  # never leave a failed test's processes behind
            try:
                proc.kill()
            except psutil.NoSuchProcess:
                pass
