"""`faceoff up`'s options. Ports: a port whose last server left connections in TIME_WAIT is
free (as it is for uvicorn, which sets SO_REUSEADDR), a live listener is not, and is named;
the ports can come from FACEOFF_PORT / FACEOFF_DASHBOARD_PORT, so `make up` can move them.
Workers: one job per physical core by default, a warning when more are asked for."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

from faceoff.cli import InputError
from faceoff.cli.up import _default_port, crowding_warning, parse_args, port_holder, port_is_free
from tests.conftest import REPO


def time_wait_port() -> int:
    """A port whose server closed a connection first (so it sits in TIME_WAIT) and stopped."""
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    client = socket.create_connection(("127.0.0.1", port))
    connection, _ = server.accept()
    connection.close()  # the server side closes first: its end goes to TIME_WAIT
    client.recv(1)
    client.close()
    server.close()
    return port


def test_a_port_in_time_wait_is_free_a_listening_one_is_not():
    port = time_wait_port()
    with socket.socket() as plain, pytest.raises(OSError):
        plain.bind(("127.0.0.1", port))  # the check before the fix: "in use"
    assert port_is_free(port)
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        assert not port_is_free(listener.getsockname()[1])
        holder = port_holder(listener.getsockname()[1])
        assert holder is not None and holder.startswith(f"PID {os.getpid()} (")
    assert port_holder(port) is None  # in TIME_WAIT: nobody listens


def test_ports_from_the_environment(monkeypatch):
    monkeypatch.delenv("FACEOFF_PORT", raising=False)
    assert _default_port("--port") == 8000
    monkeypatch.setenv("FACEOFF_PORT", "8123")
    monkeypatch.setenv("FACEOFF_DASHBOARD_PORT", "9123")
    assert (_default_port("--port"), _default_port("--dashboard-port")) == (8123, 9123)
    for bad in ("80a", "0", "70000", ""):
        monkeypatch.setenv("FACEOFF_PORT", bad)
        with pytest.raises(InputError, match="FACEOFF_PORT: .* is not a port number"):
            _default_port("--port")


@pytest.mark.parametrize("how", ["option", "environment"])
def test_up_refuses_a_port_in_use_naming_both_ways_to_move_it(how, tmp_path):
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = str(listener.getsockname()[1])
        env = {"FACEOFF_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
        args = ["up", "--no-demo"]
        if how == "option":
            args += ["--port", port]
        else:
            env["FACEOFF_PORT"] = port
        ran = subprocess.run(
            [sys.executable, "-m", "faceoff.cli.main", *args],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert ran.returncode != 0
    # the listener is named (this test's process), with both ways to move
    assert f"port {port} is in use by PID {os.getpid()} (" in ran.stderr, ran.stderr
    assert f"stop it (kill {os.getpid()}) or choose another with --port or FACEOFF_PORT" in (
        ran.stderr
    )
    assert not list(tmp_path.glob("logs/*")), "nothing was started"


def test_up_rejects_a_malformed_port_option():
    ran = subprocess.run(
        [sys.executable, "-m", "faceoff.cli.main", "up", "--port", "99999"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode == 2 and "'99999' is not a port number (1-65535)" in ran.stderr


@pytest.mark.parametrize("workers", ["0", "-1", "two", "1e400", "nan"])
def test_up_rejects_a_number_of_workers_below_one(workers):
    ran = subprocess.run(
        [sys.executable, "-m", "faceoff.cli.main", "up", "--workers", workers],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode == 2, ran.stderr
    assert f"argument --workers: expected an integer >= 1, got '{workers}'" in ran.stderr


def test_faceoff_up_runs_one_job_per_physical_core_by_default():
    assert parse_args([]).workers is None  # run() takes cpu_facts()'s physical cores
    assert parse_args(["--workers", "3"]).workers == 3
    with pytest.raises(SystemExit):
        parse_args(["--workers", "0"])
    assert crowding_warning(2, 2) is None
    warning = crowding_warning(3, 2)
    assert warning is not None and "3 jobs at once on 2 physical cores" in warning
    assert "--workers 2" in warning
