"""Machine fairness end to end: a real worker records what each job ran on and how crowded
its host was, and serves the queue of its host, on SQLite and PostgreSQL. (Its parts, one
package each: a bad host refused in tests/api/test_errors.py, the machine and the warnings
shown in tests/cli/test_service_cli.py, `faceoff up`'s workers in tests/cli/test_up.py, the
reaper's dispatch of pinned jobs in tests/worker/test_reaper.py.)"""

from __future__ import annotations

import subprocess
import uuid

import numba
import numpy
import scipy
import sklearn
from fastapi.testclient import TestClient

from faceoff.api.main import create_app
from faceoff.core.machine import fairness_warnings, oversubscribed
from tests.backends import LOCAL
from tests.service.workers import running_worker, wait_for

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
        refused = client.post("/api/v1/jobs", json={**job(), "host": "elsewhere"})
        assert refused.status_code == 422 and f"live hosts: {host} " in refused.text
        elsewhere = client.post(
            "/api/v1/jobs",
            json={**job(), "host": "elsewhere", "force": True, "wait_for_host": True},
        ).json()
        assert elsewhere["waiting"] == "waiting for host elsewhere"
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
    # the crowding warning; a busy machine (CI) adds the load-average one
    warnings = fairness_warnings(jobs)
    (crowded,) = [w for w in warnings if "more concurrent jobs than physical cores" in w]
    assert f"on {physical} cores" in crowded
    assert all("load average" in w for w in warnings if w != crowded), warnings


def job() -> dict:
    # tol = 0 and a tiny l2: each job runs its whole max_seconds, so they overlap (dual_cd's
    # plain uniform passes: its auto defaults, Catalyst here, reach gap 0 within a second)
    return {
        "dataset": "fair",
        "loss": "logistic",
        "l2": 1e-9,
        "solver": "dual_cd",
        "params": {"sampling": "uniform", "accelerate": "none", "shrinking": "off"},
        "stop": {"max_seconds": 2.0, "tol": 0.0, "max_epochs": 1e6},
    }


def sweep(size: int) -> dict:
    spec = job()
    return {
        "datasets": ["fair"],
        "losses": ["logistic"],
        "l2": [1e-9],
        "solvers": [{"solver": "dual_cd", "params": spec["params"]}],
        "seeds": list(range(size)),
        "stop": spec["stop"],
    }
