"""Issue 30 item 2: a job's admission compares its working-memory estimate (an upper bound:
tests/solvers/test_memory_bound.py) with what a job of a live worker may take, (memory −
1 GiB) ÷ concurrency, read at the worker's start and shown in GET /health. Round 3 had
sklearn.newton_cholesky on a 10 × 30,000 upload accepted (201) and a worker attempting
6.71 GiB. Here a real worker whose jobs may take 64 MiB (FACEOFF_WORKER_MEMORY_BYTES) and
uvicorn on PostgreSQL: the d × d Hessian's job and L-BFGS's long history are 422s naming
``params`` and the bytes, jobs and sweeps alike; a job that fits runs to the end."""

from __future__ import annotations

import httpx

from tests.reliability.servers import api_env, running_api
from tests.service.workers import running_worker, succeeded_trace

GiB = 1024**3
JOB_BYTES = 64 * 1024**2
WIDE = {
    "kind": "synthetic",
    "generator": "classification",
    "n_samples": 10,
    "n_features": 3000,
    "density": 1.0,
    "seed": 0,
}


def test_a_job_no_worker_can_hold_is_refused_with_the_number(
    postgres_url, redis_url, settings_for, tmp_path, monkeypatch
):
    monkeypatch.setenv("FACEOFF_WORKER_MEMORY_BYTES", str(GiB + JOB_BYTES))
    settings = settings_for(postgres_url, redis_url)
    with (
        running_worker(settings, concurrency=1) as worker,
        running_api(api_env(settings), tmp_path / "api.log") as api,
        httpx.Client(base_url=api.url, timeout=30) as client,
    ):
        health = client.get("/health").json()
        (memory,) = health["worker_memory"]
        assert memory["job_bytes"] == JOB_BYTES and memory["concurrency"] == 1, health
        assert memory["host"] in health["worker_hosts"]
        made = client.post("/datasets", json={"name": "wide", "source": WIDE})
        assert made.status_code == 201, made.text
        job = {"dataset": "wide", "loss": "logistic", "l2": 1e-2}
        # 4 × 8 × 3000² = 288 MB of Hessian work alone
        newton = client.post("/jobs", json={**job, "solver": "sklearn.newton_cholesky"})
        assert newton.status_code == 422, newton.text
        (error,) = newton.json()["detail"]
        assert error["loc"] == ["body", "params"], error
        for words in ("needs up to", f"at most {JOB_BYTES} bytes", "÷ 1 jobs at once"):
            assert words in error["msg"], error["msg"]
        history = client.post("/jobs", json={**job, "solver": "lbfgs", "params": {"memory": 1000}})
        assert history.status_code == 422 and "worker_memory" in history.text, history.text
        sweep = {"datasets": ["wide"], "losses": ["logistic"], "l2": [1e-2]}
        refused = client.post("/sweeps", json={**sweep, "solvers": ["sklearn.newton_cholesky"]})
        assert refused.status_code == 422, refused.text
        assert refused.json()["detail"][0]["loc"] == ["body", "solvers", "params"]
        fits = client.post("/jobs", json={**job, "solver": "dual_cd", "stop": {"max_epochs": 5}})
        assert fits.status_code == 201, fits.text
        succeeded_trace(api.url, fits.json()["id"], worker)
