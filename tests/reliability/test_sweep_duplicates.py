"""A sweep's axes are sets, on a real uvicorn API with PostgreSQL and Redis: repeated values
(``seeds: [0, 0, 0]``, ``l2: [0.01, 1e-2]``) and solver settings equal once parsed with
their defaults are dropped before the sweep expands, the sweep says how many, and no two of
its jobs share a spec hash. Round 3 found such sweeps creating several jobs with one hash."""

from __future__ import annotations

from collections import Counter

import httpx
import pytest

from tests.reliability.servers import TINY, api_env, running_api

STOP = {"max_epochs": 5, "max_seconds": 10}
REPEATED = {
    "name": "repeats",
    "datasets": ["tiny", "tiny"],
    "losses": ["logistic", "logistic"],
    "l2": [0.01, 1e-2, 0.001],
    "l1": [0.0, 0],
    "solvers": [
        "spdc",
        {"solver": "spdc", "params": {"batch_size": 1}},  # spdc's defaults, spelled out
        {"solver": "spdc", "params": {"batch_size": [4, 4]}},
        {"solver": "dual_cd", "params": {"sampling": ["auto", "permutation", "auto"]}},
        "dual_cd",  # the first setting of the choice above (auto: dual_cd's default)
        "lbfgs",
        "lbfgs",
    ],
    "seeds": [0, 0, 0, 1],
    "stop": STOP,
}
# REPEATED's first three solver choices without their repeats: the same sweep
SPDC_ONLY = {
    **REPEATED,
    "datasets": ["tiny"],
    "losses": ["logistic"],
    "l2": [0.01, 0.001],
    "l1": [0.0],
    "solvers": [
        "spdc",
        {"solver": "spdc", "params": {"batch_size": 1}},
        {"solver": "spdc", "params": {"batch_size": [4]}},
    ],
    "seeds": [0, 1],
}


@pytest.fixture
def client(postgres_url, redis_url, settings_for):
    settings = settings_for(postgres_url, redis_url)
    with (
        running_api(api_env(settings), settings.HOME / "faceoff.api.log") as api,
        httpx.Client(base_url=api.url, timeout=30) as client,
    ):
        made = client.post("/datasets", json={"name": "tiny", "source": TINY})
        assert made.status_code == 201, made.text
        yield client


def test_repeated_values_are_dropped_before_a_sweep_expands(client):
    made = client.post("/sweeps", json=REPEATED)
    assert made.status_code == 201, made.text
    sweep = made.json()
    # spdc and dual_cd: 2 settings × 2 l2 × 2 seeds each; lbfgs (deterministic): 2 l2
    assert sweep["n_jobs"] == 8 + 8 + 2
    assert sweep["duplicates_dropped"] == {
        "datasets": 1,
        "losses": 1,
        "l2": 1,
        "l1": 1,
        "seeds": 2,
        # 10 settings, 5 distinct: spdc's batch_size 1 is its default, 4 twice, auto
        # twice, "dual_cd" is sampling=auto, "lbfgs" twice
        "solvers": 5,
    }
    assert sweep["spec"]["seeds"] == [0, 1] and sweep["spec"]["l2"] == [0.01, 0.001]
    jobs = client.get("/jobs", params={"sweep_id": sweep["id"], "limit": 1000}).json()["data"]
    assert len(jobs) == sweep["n_jobs"]
    repeated = [h for h, n in Counter(j["spec_hash"] for j in jobs).items() if n > 1]
    assert repeated == []
    assert sum(c["jobs"] for c in sweep["jobs_per_solver"].values()) == sweep["n_jobs"]
    read = client.get(f"/sweeps/{sweep['id']}").json()
    assert read["duplicates_dropped"] == sweep["duplicates_dropped"]
    assert read["jobs_per_solver"] == sweep["jobs_per_solver"]


def test_a_sweep_with_repeats_is_the_sweep_without_them(client):
    """The repeats change nothing: the same sweep without them is the same sweep (200), so
    resubmitting either creates no job."""
    first = client.post("/sweeps", json={**REPEATED, "solvers": REPEATED["solvers"][:3]})
    assert first.status_code == 201, first.text
    again = client.post("/sweeps", json=SPDC_ONLY)
    assert again.status_code == 200, again.text
    assert again.json()["id"] == first.json()["id"]
    assert client.get("/jobs").json()["count"] == first.json()["n_jobs"] == 8
