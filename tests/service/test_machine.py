"""Machine fairness end to end: a real worker records what each job ran on and how crowded
its host was, and serves the queue of its host, on SQLite and PostgreSQL."""

from __future__ import annotations

import subprocess
import uuid

import numba
import numpy
import pytest
import redis
import scipy
import sklearn
from fastapi.testclient import TestClient

from faceoff.api.main import create_app
from faceoff.cli.main import main
from faceoff.cli.up import crowding_warning, parse_args
from faceoff.core.db import session_scope
from faceoff.core.machine import fairness_warnings, oversubscribed
from faceoff.core.models import Job
from faceoff.core.queue import enqueue, job_queue
from faceoff.worker import store
from faceoff.worker.reaper import Reaper
from tests.client.test_client import server as api_server
from tests.service.workers import running_worker, wait_for
from tests.worker.test_store import make_job

LOCAL = ("127.0.0.1", 50000)  # with auth off the API serves loopback clients only
SOURCE = {
    "kind": "synthetic",
    "generator": "classification",
    "n_samples": 3000,
    "n_features": 300,
    "density": 0.1,
    "seed": 0,
}


def lscpu_facts() -> tuple[str, int]:
    """(CPU model, physical cores) as util-linux's lscpu reads them."""
    model = subprocess.run(
        ["lscpu"], capture_output=True, text=True, check=True, env={"LC_ALL": "C"}
    ).stdout
    name = next(line.split(":", 1)[1] for line in model.splitlines() if "Model name" in line)
    pairs = subprocess.run(
        ["lscpu", "-p=CORE,SOCKET"], capture_output=True, text=True, check=True
    ).stdout
    cores = {line for line in pairs.splitlines() if not line.startswith("#")}
    return " ".join(name.split()), len(cores)


def test_a_pinned_sweep_runs_on_its_host_and_every_job_carries_its_machine(
    database_url, redis_url, settings_for, monkeypatch
):
    model, physical = lscpu_facts()
    host = f"fair-{uuid.uuid4().hex[:8]}"  # this worker's host name, unique to the test
    monkeypatch.setenv("FACEOFF_WORKER_HOST", host)
    settings = settings_for(database_url, redis_url)
    crowd = physical + 1  # one job more than physical cores, all at once
    with (
        TestClient(create_app(settings), client=LOCAL) as client,
        running_worker(settings, concurrency=crowd) as worker,
    ):
        assert client.get("/api/v1/health").json()["worker_hosts"] == [host]
        created = client.post("/api/v1/datasets", json={"name": "fair", "source": SOURCE})
        assert created.status_code == 201, created.text
        bad = client.post("/api/v1/sweeps", json={**sweep(crowd), "host": "no such/host"})
        assert bad.status_code == 422 and bad.json()["detail"][0]["loc"] == ["body", "host"]
        elsewhere = client.post(
            "/api/v1/jobs", json={**job(), "host": "elsewhere", "force": True}
        ).json()
        submitted = client.post("/api/v1/sweeps", json={**sweep(crowd), "host": host})
        assert submitted.status_code == 201, submitted.text
        sweep_id = submitted.json()["id"]

        def finished():
            body = client.get(f"/api/v1/jobs?sweep_id={sweep_id}").json()
            done = all(j["status"] in ("succeeded", "failed") for j in body["data"])
            return body["data"] if done and body["count"] == crowd else None

        jobs = wait_for(finished, 180, "the pinned sweep", worker)
        # the job pinned to a host without a worker waits in its own queue
        assert client.get(f"/api/v1/jobs/{elsewhere['id']}").json()["status"] == "queued"

    assert [j["status"] for j in jobs] == ["succeeded"] * crowd, [j["error"] for j in jobs]
    for done in jobs:
        assert done["pinned_host"] == host and done["spec"]["host"] == host
        assert done["worker_host"].startswith(f"{host}:")
        machine = done["machine"]
        assert (machine["host"], machine["cpu_model"]) == (host, model)
        assert machine["physical_cores"] == physical
        versions = machine["versions"]
        assert versions["numpy"] == numpy.__version__ and versions["scipy"] == scipy.__version__
        assert versions["numba"] == numba.__version__
        assert versions["scikit-learn"] == sklearn.__version__
        assert 1 <= done["concurrency"] <= done["concurrency_max"] <= crowd
        assert done["load_start"] >= 0 and done["load_end"] >= 0
    assert elsewhere["pinned_host"] == "elsewhere" and elsewhere["machine"] is None
    # the jobs ran together: the last one claimed saw all of them, more than physical cores
    assert max(j["concurrency_max"] for j in jobs) == crowd
    assert any(oversubscribed(j) for j in jobs)
    (warning,) = fairness_warnings(jobs)
    assert f"on {physical} cores" in warning


def job() -> dict:
    # tol = 0 and a tiny l2: each job runs its whole max_seconds, so they overlap
    return {
        "dataset": "fair",
        "loss": "logistic",
        "l2": 1e-9,
        "solver": "dual_cd",
        "stop": {"max_seconds": 2.0, "tol": 0.0, "max_epochs": 1e6},
    }


def sweep(size: int) -> dict:
    spec = job()
    return {
        "datasets": ["fair"],
        "losses": ["logistic"],
        "l2": [1e-9],
        "solvers": ["dual_cd"],
        "seeds": list(range(size)),
        "stop": spec["stop"],
    }


@pytest.mark.parametrize("host", ["", "a b", "x" * 254, "-lead", "dot..dot", "é"])
def test_a_bad_host_is_refused_naming_the_field(sqlite_url, redis_url, settings_for, host):
    settings = settings_for(sqlite_url, redis_url)
    with TestClient(create_app(settings), client=LOCAL) as client:
        response = client.post("/api/v1/jobs", json={**job(), "host": host})
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "host"]


server = api_server  # the fixture: the API served by uvicorn in a thread


def test_cli_shows_the_machine_and_warns_of_unfair_timings(server, capsys, monkeypatch):
    url, settings = server
    argv = ["submit", "--url", url, "--dataset", "a1a", "--loss", "logistic", "--l2", "1e-4"]
    assert main([*argv, "--solver", "agd", "--host", "bad host"]) == 2
    assert "host" in capsys.readouterr().err
    for solver in ("agd", "dual_cd"):
        assert main([*argv, "--solver", solver, "--host", "vm-a"]) == 0
    capsys.readouterr()
    with session_scope(settings.database_url) as session:
        first, second = session.get(Job, 1), session.get(Job, 2)
        assert first.pinned_host == second.pinned_host == "vm-a"
        first.machine = {"host": "vm-a", "cpu_model": "AMD EPYC", "physical_cores": 2}
        first.machine["versions"] = {"numpy": "2.4.6", "cyanure": None}
        first.concurrency, first.concurrency_max, first.load_start = 1, 3, 0.5
        second.machine = {"host": "vm-b", "cpu_model": "Intel Xeon", "physical_cores": 8}
        second.concurrency = second.concurrency_max = 1
    monkeypatch.setenv("COLUMNS", "300")  # one line per message
    assert main(["status", "--url", url]) == 0
    out = capsys.readouterr().out
    assert "warning: measured on 2 different CPU models: AMD EPYC; Intel Xeon" in out
    assert "warning: 1 job(s) ran with more concurrent jobs than physical cores" in out
    assert main(["status", "--url", url, "1"]) == 0
    out = capsys.readouterr().out
    assert "ran on vm-a (AMD EPYC, 2 physical cores): 1 jobs running at start, at most 3" in out
    assert "load 0.5; numpy 2.4.6" in out and "cyanure" not in out
    assert main(["status", "--url", url, "2"]) == 0
    assert "warning" not in capsys.readouterr().out


def test_faceoff_up_runs_one_job_per_physical_core_by_default():
    assert parse_args([]).workers is None  # run() takes cpu_facts()'s physical cores
    assert parse_args(["--workers", "3"]).workers == 3
    with pytest.raises(SystemExit):
        parse_args(["--workers", "0"])
    assert crowding_warning(2, 2) is None
    warning = crowding_warning(3, 2)
    assert warning is not None and "3 jobs at once on 2 physical cores" in warning
    assert "--workers 2" in warning


def pinned_job(url: str, host: str | None) -> int:
    """A queued job pinned to ``host`` (None: any), never sent."""
    job_id = make_job(url)
    with session_scope(url) as session:
        job = session.get(Job, job_id)
        job.spec, job.pinned_host = {**job.spec, "host": host}, host
        job.dispatched_at = None
    return job_id


def waiting(settings, host: str | None) -> int:
    with redis.Redis.from_url(settings.BROKER_URL) as client:
        return client.llen(job_queue(settings, host))


def test_the_reaper_sends_each_pinned_job_to_its_hosts_queue_once(
    database_url, redis_url, settings_for
):
    settings = settings_for(database_url, redis_url, DISPATCH_TIMEOUT_SECONDS=1.0)
    free, busy = pinned_job(database_url, None), pinned_job(database_url, "busy")
    idle = pinned_job(database_url, "idle")
    assert store.pinned_hosts(database_url) == ["busy", "idle"]
    assert store.take_overdue(database_url, 1.0, []) == []
    enqueue(busy, settings, 10.0, "busy")  # its message waits: no worker on "busy"
    Reaper(settings).dispatch_overdue()
    # the job queue and "idle"'s were empty: their jobs are sent there; "busy"'s is not
    # sent twice while its message waits
    assert (waiting(settings, None), waiting(settings, "idle"), waiting(settings, "busy")) == (
        1,
        1,
        1,
    )
    assert [s.job_id for s in store.take_overdue(database_url, 0.0, ["busy"])] == [busy]
    assert {s.job_id: s.host for s in store.queued_jobs(database_url)} == {
        free: None,
        busy: "busy",
        idle: "idle",
    }
