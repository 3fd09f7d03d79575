"""A K-class sweep through the real service: the API (uvicorn), PostgreSQL, Redis and a
real Celery worker. lbfgs and agd solve one-vs-rest and multinomial objectives of a planted
4-class problem and of random binning features of it (the random_features source); every
trace point is certified, both solvers reach the same P* per objective, and the datasets'
labels are what the API checked the sweep against; the worker records the features'
columns once it has built them."""

from __future__ import annotations

import httpx
import pytest

from tests.reliability.servers import api_env, running_api
from tests.service.workers import running_worker, wait_for

pytestmark = pytest.mark.slow

PLANTED = {
    "kind": "synthetic",
    "generator": "multiclass",
    "n_samples": 400,
    "n_features": 30,
    "density": 0.5,
    "seed": 0,
    "n_classes": 4,
}
FEATURES = {"kind": "random_features", "base": "mc-planted", "map": "binning", "n_grids": 20}
FEATURES |= {"sigma": 5.0, "seed": 1}
TOL = 1e-10
SWEEP = {
    "name": "K-class",
    "datasets": ["mc-planted", "mc-rb"],
    "losses": ["logistic", "smooth_hinge"],
    "multiclass": ["ovr", "multinomial"],
    "l2": [1e-2],
    "solvers": ["lbfgs", "agd"],
    "stop": {"max_epochs": 20_000, "max_seconds": 60, "tol": TOL},
}
TINY = 1e-12  # a certified gap is ≥ 0 up to rounding


def test_a_k_class_sweep_is_certified_end_to_end(postgres_url, redis_url, settings_for, tmp_path):
    settings = settings_for(postgres_url, redis_url)
    with (
        running_api(api_env(settings), tmp_path / "api.log") as api,
        running_worker(settings) as worker,
    ):
        for name, source in (("mc-planted", PLANTED), ("mc-rb", FEATURES)):
            created = httpx.post(
                f"{api.url}/datasets", json={"name": name, "source": source}, timeout=60
            )
            assert created.status_code == 201, created.text
            assert created.json()["labels"]["n_classes"] == 4
        # random binning knows its columns once built: the first worker to build them says
        assert created.json()["n_features"] is None
        sweep = httpx.post(f"{api.url}/sweeps", json=SWEEP, timeout=60)
        assert sweep.status_code == 201, sweep.text
        body = sweep.json()
        # (logistic, smooth_hinge) × (ovr, multinomial) less smooth_hinge multinomial,
        # on two datasets, for two solvers
        assert body["n_jobs"] == 12
        for solver in ("lbfgs", "agd"):
            assert body["jobs_per_solver"][solver]["skipped"] == 2
            assert body["jobs_per_solver"][solver]["jobs"] == 6
        sweep_id = body["id"]

        def finished() -> dict | None:
            body = httpx.get(f"{api.url}/sweeps/{sweep_id}", timeout=30).json()
            done = sum(body["progress"].get(s, 0) for s in ("succeeded", "failed", "cancelled"))
            return body if done == 12 else None

        progress = wait_for(finished, 900, "the sweep to finish", worker)["progress"]
        jobs = httpx.get(f"{api.url}/jobs", params={"sweep_id": sweep_id}, timeout=30).json()
        assert progress.get("succeeded") == 12, (jobs, worker.log()[-3000:])
        traces = {
            job["id"]: httpx.get(f"{api.url}/jobs/{job['id']}/trace", timeout=30).json()["data"]
            for job in jobs["data"]
        }
        references = {
            digest: httpx.get(f"{api.url}/references/{digest}", timeout=30).json()
            for digest in {job["objective_hash"] for job in jobs["data"]}
        }
        features = httpx.get(f"{api.url}/datasets", timeout=30).json()["data"]

    # six objectives (2 datasets × 3 forms), each keyed by its data's content and form
    assert len(references) == 6
    forms = {(j["spec"]["dataset"], j["loss"], j["spec"]["multiclass"]) for j in jobs["data"]}
    assert ("mc-rb", "smooth_hinge", "multinomial") not in forms and len(forms) == 6
    for job in jobs["data"]:
        points = traces[job["id"]]
        what = (job["solver"], job["spec"]["dataset"], job["loss"], job["spec"]["multiclass"])
        assert len(points) == job["n_points"] >= 2, what
        # every point certified through the K-class Problem: P − D ≥ 0 up to rounding
        assert all(p["gap"] >= -TINY * max(1.0, abs(p["primal"])) for p in points), what
        last = points[-1]
        assert job["stop_reason"] == "converged", (what, job["stop_reason"], last)
        assert last["gap"] <= TOL * max(1.0, abs(last["primal"])), (what, last)
        p_star = references[job["objective_hash"]]["primal"]
        assert abs(last["primal"] - p_star) <= 1e-8 * abs(p_star), (what, last, p_star)
        assert references[job["objective_hash"]]["objective"]["multiclass"] == what[3]
    (rb,) = [d for d in features if d["name"] == "mc-rb"]
    assert rb["source"]["base_source"] == {**PLANTED, "layout": "planted"}
    assert rb["nnz"] == 400 * 20 and rb["labels"]["n_classes"] == 4
    assert 20 < rb["n_features"] <= 400 * 20  # the occupied bins, recorded by the worker
