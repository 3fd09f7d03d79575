"""A sweep racing our solvers against peers through the real service: the API (uvicorn),
PostgreSQL, Redis and a real Celery worker. Every job succeeds with a certified trace, and
each job records how its trace was made (``trace_mode``) and what its run cost (``wall_s``)."""

from __future__ import annotations

import httpx
import pytest

from faceoff.solvers.catalogue import catalogue
from tests.reliability.servers import api_env, running_api
from tests.service.workers import running_worker, wait_for

pytestmark = pytest.mark.slow

DATASET = {
    "kind": "synthetic",
    "generator": "classification",
    "n_samples": 500,
    "n_features": 40,
    "density": 0.3,
    "seed": 0,
}
TOL = 1e-10
SWEEP = {
    "name": "ours and peers",
    "datasets": ["peers-500x40"],
    "losses": ["logistic"],
    "l2": [1e-3],
    "solvers": ["dual_cd", "lbfgs", "sklearn.liblinear", "sklearn.saga", "cyanure"],
    "seeds": [0],
    "stop": {"max_epochs": 1000, "max_seconds": 20, "tol": TOL},
}
TINY = 1e-12  # a certified gap is ≥ 0 up to rounding


def test_a_sweep_of_ours_and_peers_is_certified_and_records_its_trace_modes(
    postgres_url, redis_url, settings_for, tmp_path
):
    settings = settings_for(postgres_url, redis_url)
    with (
        running_api(api_env(settings), tmp_path / "api.log") as api,
        running_worker(settings) as worker,
    ):
        created = httpx.post(
            f"{api.url}/datasets", json={"name": "peers-500x40", "source": DATASET}, timeout=60
        )
        assert created.status_code == 201, created.text
        sweep = httpx.post(f"{api.url}/sweeps", json=SWEEP, timeout=60)
        assert sweep.status_code == 201, sweep.text
        sweep_id, n_jobs = sweep.json()["id"], sweep.json()["n_jobs"]
        assert n_jobs == len(SWEEP["solvers"])

        def finished() -> dict | None:
            body = httpx.get(f"{api.url}/sweeps/{sweep_id}", timeout=30).json()
            done = sum(body["progress"].get(s, 0) for s in ("succeeded", "failed", "cancelled"))
            return body if done == n_jobs else None

        progress = wait_for(finished, 600, "the sweep to finish", worker)["progress"]
        jobs = httpx.get(f"{api.url}/jobs", params={"sweep_id": sweep_id}, timeout=30).json()
        assert progress.get("succeeded") == n_jobs, (jobs, worker.log()[-3000:])
        traces = {
            job["id"]: httpx.get(f"{api.url}/jobs/{job['id']}/trace", timeout=30).json()
            for job in jobs["data"]
        }
        digests = {job["objective_hash"] for job in jobs["data"]}
        assert len(digests) == 1, digests  # one objective (keyed by the data's content)
        reference = httpx.get(f"{api.url}/references/{digests.pop()}", timeout=30)
        assert reference.status_code == 200, reference.text

    p_star = reference.json()["primal"]  # the best certified final point of the sweep
    for job in jobs["data"]:
        solver, trace = job["solver"], traces[job["id"]]
        points = trace["data"]
        assert len(points) == job["n_points"] >= 2, solver
        # every point certified through our Problem: P − D ≥ 0 (rounding aside)
        assert all(p["gap"] >= -TINY * max(1.0, abs(p["primal"])) for p in points), solver
        last = points[-1]
        assert job["stop_reason"] == "converged", (solver, job["stop_reason"])
        assert last["gap"] <= TOL * max(1.0, abs(last["primal"])), (solver, last)
        assert abs(last["primal"] - p_star) <= 1e-8 * abs(p_star), (solver, last, p_star)
        # how the trace was made, on the job, its summary and its trace alike
        expected = catalogue()[solver].trace_mode
        assert job["trace_mode"] == trace["trace_mode"] == expected, solver
        assert job["wall_s"] == trace["wall_s"] and job["time_s"] == last["time_s"]
        if solver.startswith(("sklearn.", "cyanure")):
            assert expected == "refit"
            # each point is a fit from scratch: the run paid for all of them
            assert job["wall_s"] >= sum(p["extras"]["fit_s"] for p in points[1:]) > 0, solver
            assert [p["extras"]["max_iter"] for p in points[:3]] == [0, 1, 2], solver
        else:
            assert expected == "native"
            assert job["wall_s"] >= last["time_s"] > 0, solver
