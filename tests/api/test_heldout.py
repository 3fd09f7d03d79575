"""Held-out metrics through the API: ``test`` is stored with the job when given (and absent
when not), a registry split of a dataset without one is a 422 at ``test`` naming the
dataset, and an invalid split a 422 at its field; nothing is stored for a refused request.

Jobs go to a queue no worker consumes, as in test_routes.py.
"""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from faceoff.api.main import create_app
from tests.api.test_multiclass import nothing_stored, refused, upload
from tests.api.test_routes import LOCAL, queued
from tests.datasets import dataset_files

BINARY = b"1 1:1 3:0.5\n-1 2:1\n1 1:1 2:1\n-1 2:2 3:1\n1 1:2\n-1 3:1\n"
RANDOM = {"split": "random", "fraction": 0.25, "seed": 7}


@pytest.fixture
def api(database_url, redis_url, settings_for):
    settings = settings_for(database_url, redis_url)
    with TestClient(create_app(settings), client=LOCAL) as client:
        upload(client, "tiny", BINARY)
        yield client, settings


def job(dataset: str = "tiny", **fields) -> dict:
    return {"dataset": dataset, "loss": "logistic", "l2": 1e-3, "solver": "lbfgs", **fields}


def test_a_random_hold_out_is_stored_with_the_job_and_no_test_is_not(api):
    client, settings = api
    held = client.post("/api/v1/jobs", json=job(test=RANDOM))
    assert held.status_code == 201, held.text
    assert held.json()["spec"]["test"] == RANDOM
    plain = client.post("/api/v1/jobs", json=job())
    assert plain.status_code == 201, plain.text
    assert "test" not in plain.json()["spec"]
    assert held.json()["id"] != plain.json()["id"] and queued(settings) == 2
    again = client.post("/api/v1/jobs", json=job(test=RANDOM))  # the same job
    assert again.status_code == 200 and again.json()["id"] == held.json()["id"]


def test_a_registry_split_of_a_dataset_without_one_is_refused_naming_it(api):
    client, settings = api
    refused(
        client.post("/api/v1/jobs", json=job(test={"split": "registry"})),
        ["body", "test"],
        "dataset 'tiny' has no test split in the registry",
        '"kind": "upload"',
        '{"split": "random"',
        "a9a",
    )
    nothing_stored(client, settings)


@pytest.mark.parametrize(
    ("test", "loc", "words"),
    [
        ({**RANDOM, "fraction": 0.91}, ["body", "test", "random", "fraction"], "0.9"),
        ({**RANDOM, "seed": 2.0}, ["body", "test", "random", "seed"], "valid integer"),
        ({**RANDOM, "shuffle": True}, ["body", "test", "random", "shuffle"], "Extra inputs"),
    ],
)
def test_an_invalid_split_is_a_422_at_its_field(api, test, loc, words):
    client, settings = api
    refused(client.post("/api/v1/jobs", json=job(test=test)), loc, words)
    nothing_stored(client, settings)


def test_the_registry_split_of_a_dataset_that_has_one_is_accepted(api):
    dataset_files("a1a", "a1a.t")
    client, settings = api
    response = client.post("/api/v1/jobs", json=job("a1a", test={"split": "registry"}))
    assert response.status_code == 201, response.text
    assert response.json()["spec"]["test"] == {"split": "registry"}
    assert queued(settings) == 1


def sweep(dataset: str = "tiny", **fields) -> dict:
    return {"datasets": [dataset], "losses": ["logistic"], "l2": [1e-3], "solvers": ["lbfgs"]} | (
        fields
    )


def test_a_sweep_s_jobs_are_stored_with_its_test(api):
    client, settings = api
    created = client.post("/api/v1/sweeps", json=sweep(test=RANDOM))
    assert created.status_code == 201, created.text
    assert created.json()["spec"]["test"] == RANDOM
    jobs = client.get("/api/v1/jobs", params={"sweep_id": created.json()["id"]}).json()["data"]
    assert [j["spec"]["test"] for j in jobs] == [RANDOM] and queued(settings) == 1
    plain = client.post("/api/v1/sweeps", json=sweep())
    assert plain.status_code == 201, plain.text
    assert "test" not in plain.json()["spec"] and plain.json()["id"] != created.json()["id"]


@pytest.mark.parametrize(
    ("fields", "loc", "words"),
    [
        ({"test": {"split": "registry"}}, ["body", "test"], "dataset 'tiny' has no test split"),
        ({"test": {**RANDOM, "fraction": 0.91}}, ["body", "test", "random", "fraction"], "0.9"),
        ({"test": RANDOM, "multiclass": ["ovr"]}, ["body", "test"], "not multiclass"),
    ],
)
def test_a_sweep_s_invalid_test_is_a_422_at_its_field(api, fields, loc, words):
    client, settings = api
    refused(client.post("/api/v1/sweeps", json=sweep(**fields)), loc, words)
    nothing_stored(client, settings)


NARROW = b"1 1:1\n-1 2:1\n1 1:2 2:1\n"  # 2 features: the third reads as 0
WIDE = b"1 1:1 5:2\n-1 2:1\n1 4:1\n"  # 5 features: 2 the model has no coefficient for


def test_another_dataset_as_the_test_set(api):
    client, settings = api
    upload(client, "narrow", NARROW)
    upload(client, "wide", WIDE)
    other = {"split": "dataset", "dataset": "narrow"}
    response = client.post("/api/v1/jobs", json=job(test=other))
    assert response.status_code == 201, response.text
    assert response.json()["spec"]["test"] == other and queued(settings) == 1
    refused(
        client.post("/api/v1/jobs", json=job(test={"split": "dataset", "dataset": "wide"})),
        ["body", "test", "dataset"],
        "test dataset 'wide' has 5 features, more than the 3 of 'tiny'",
        "at most 3 features",
    )
    refused(
        client.post("/api/v1/jobs", json=job(test={"split": "dataset", "dataset": "nope"})),
        ["body", "test", "dataset"],
        "nope",
    )
    refused(
        client.post("/api/v1/sweeps", json=sweep(test={"split": "dataset", "dataset": "wide"})),
        ["body", "test", "dataset"],
        "more than the 3 of 'tiny'",
    )
    assert queued(settings) == 1
