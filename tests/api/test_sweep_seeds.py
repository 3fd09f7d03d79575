"""Deterministic solvers in sweeps, through the REST API on SQLite and PostgreSQL with a real
Redis broker: a sweep over seeds [0, 1, 2] × {dual_cd, lbfgs} has three dual_cd jobs and
one lbfgs job per objective unless timing repeats are asked for, and its response, the
sweep listing, the jobs and GET /solvers say so."""

from __future__ import annotations

from collections import Counter

import pytest
import redis
from fastapi.testclient import TestClient

from faceoff.api.main import create_app
from tests.backends import LOCAL

SWEEP = {
    "datasets": ["a1a"],
    "losses": ["logistic"],
    "l2": [1e-3, 1e-4],
    "solvers": ["dual_cd", "lbfgs"],
    "seeds": [0, 1, 2],
}


@pytest.fixture
def api(database_url, redis_url, settings_for):
    settings = settings_for(database_url, redis_url, MAX_SWEEP_JOBS=20)
    with TestClient(create_app(settings), client=LOCAL) as client:
        yield client, settings


def _runs(client: TestClient, sweep_id: int) -> Counter:
    listed = client.get("/api/v1/jobs", params={"sweep_id": sweep_id, "limit": 100}).json()
    return Counter(
        (j["solver"], j["spec"]["l2"], j["spec"]["seed"], j["spec"]["repeat"])
        for j in listed["data"]
    )


def test_a_deterministic_solver_runs_once_per_objective(api):
    client, settings = api
    created = client.post("/api/v1/sweeps", json=SWEEP)
    assert created.status_code == 201, created.text
    sweep = created.json()
    assert sweep["n_jobs"] == 8
    assert sweep["jobs_per_solver"] == {
        "dual_cd": {"jobs": 6, "seeded": 6, "unseeded": 0, "timing_repeats": 0, "skipped": 0},
        "lbfgs": {"jobs": 2, "seeded": 0, "unseeded": 2, "timing_repeats": 0, "skipped": 0},
    }
    expected = {("dual_cd", l2, seed, 0): 1 for l2 in (1e-3, 1e-4) for seed in (0, 1, 2)}
    expected |= {("lbfgs", l2, None, 0): 1 for l2 in (1e-3, 1e-4)}
    assert _runs(client, sweep["id"]) == expected
    with redis.Redis.from_url(settings.BROKER_URL) as r:
        assert r.llen(settings.QUEUE) == 8  # every job sent, none twice
    listed = client.get("/api/v1/sweeps").json()["data"]
    assert listed[0]["jobs_per_solver"]["lbfgs"]["jobs"] == 2

    # the same lbfgs job with another seed is the sweep's job: no seed, nothing to rerun
    job = {"dataset": "a1a", "loss": "logistic", "l2": 1e-3, "solver": "lbfgs", "seed": 2}
    same = client.post("/api/v1/jobs", json=job)
    assert same.status_code == 200 and same.json()["sweep_id"] == sweep["id"]
    assert same.json()["spec"]["seed"] is None


def test_timing_repeats_are_asked_for_and_labelled(api):
    client, _ = api
    created = client.post("/api/v1/sweeps", json={**SWEEP, "timing_repeats": True})
    assert created.status_code == 201, created.text
    sweep = created.json()
    assert sweep["n_jobs"] == 12 and sweep["spec"]["timing_repeats"] is True
    assert sweep["jobs_per_solver"]["lbfgs"] == {
        "jobs": 6,
        "seeded": 0,
        "unseeded": 2,
        "timing_repeats": 4,
        "skipped": 0,
    }
    runs = _runs(client, sweep["id"])
    assert {k: n for k, n in runs.items() if k[0] == "lbfgs"} == {
        ("lbfgs", l2, None, repeat): 1 for l2 in (1e-3, 1e-4) for repeat in (0, 1, 2)
    }
    assert sum(n for k, n in runs.items() if k[0] == "dual_cd") == 6


def test_solvers_say_whether_they_use_the_seed(api):
    client, _ = api
    solvers = {s["name"]: s for s in client.get("/api/v1/solvers").json()["data"]}
    assert solvers["dual_cd"]["uses_seed"] is True
    assert solvers["lbfgs"]["uses_seed"] is False
    assert solvers["sklearn.liblinear"]["uses_seed"] == {
        "param": "formulation",
        "values": ["dual"],
    }
    bad = client.post("/api/v1/sweeps", json={**SWEEP, "timing_repeats": "often"})
    assert bad.status_code == 422 and bad.json()["detail"][0]["loc"] == ["body", "timing_repeats"]
    repeat = client.post(
        "/api/v1/jobs",
        json={"dataset": "a1a", "loss": "logistic", "l2": 1e-3, "solver": "lbfgs", "repeat": -1},
    )
    assert repeat.status_code == 422 and repeat.json()["detail"][0]["loc"] == ["body", "repeat"]
