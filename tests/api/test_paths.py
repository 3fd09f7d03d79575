"""Path jobs through the API: a job spec with ``path`` is accepted for the solvers that start
from a given point, stored with its grid (and hashed apart from one-λ jobs), and every bad
grid, a fixed l1 beside it or a solver that cannot follow it is a 422 naming the field;
nothing is stored for a refused request. ``GET /jobs/{id}/path`` of a job that is not a path
is a 409 that says where its trace is.

Jobs go to a queue no worker consumes, as in test_routes.py.
"""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from faceoff.api.main import create_app
from faceoff.core.specs import JobSpec, dump_spec, objective_hash, spec_hash
from tests.api.test_multiclass import nothing_stored, refused, upload
from tests.api.test_routes import LOCAL, queued
from tests.api.test_sparse_models import BINARY


@pytest.fixture
def api(database_url, redis_url, settings_for):
    settings = settings_for(database_url, redis_url)
    with TestClient(create_app(settings), client=LOCAL) as client:
        upload(client, "tiny", BINARY)
        yield client, settings


def job(**fields) -> dict:
    return {"dataset": "tiny", "loss": "squared", "l2": 0.0, "solver": "ws_cd", **fields}


def test_a_path_job_is_stored_with_its_grid_defaults_filled_in(api):
    client, settings = api
    response = client.post("/api/v1/jobs", json=job(path={}))
    assert response.status_code == 201, response.text
    stored = response.json()["spec"]
    assert stored["path"] == {"n_lambdas": 50, "ratio": 1e-3, "lambdas": None}
    assert stored["l1"] == 0.0
    given = client.post("/api/v1/jobs", json=job(path={"lambdas": [0.5, 0.1, 0.02]}))
    assert given.status_code == 201, given.text
    assert given.json()["spec"]["path"]["lambdas"] == [0.5, 0.1, 0.02]
    for solver in ("primal_cd", "agd", "lbfgs"):
        response = client.post("/api/v1/jobs", json=job(solver=solver, path={"n_lambdas": 5}))
        assert response.status_code == 201, response.text
    assert queued(settings) == 5
    # an elastic-net path (l2 > 0 fixed) and a logistic one
    for fields in ({"l2": 1e-3}, {"loss": "logistic", "fit_intercept": True, "solver": "agd"}):
        response = client.post("/api/v1/jobs", json=job(path={"ratio": 0.01}, **fields))
        assert response.status_code == 201, response.text


def test_a_path_is_its_own_objective_and_its_own_job():
    one = JobSpec.model_validate(job(l1=0.1))
    path = JobSpec.model_validate(job(path={"lambdas": [0.1]}))
    other = JobSpec.model_validate(job(path={"lambdas": [0.2]}))
    assert len({objective_hash(s) for s in (one, path, other)}) == 3
    assert len({spec_hash(s) for s in (one, path, other)}) == 3
    # a job without a path keeps the hash it had before paths existed: no "path" key
    assert "path" not in dump_spec(one) and dump_spec(path)["path"]["lambdas"] == [0.1]


@pytest.mark.parametrize(
    "fields,loc,words",
    [
        ({"path": {"lambdas": [0.1, 0.0]}}, ["body", "path", "lambdas", 1], ["greater than 0"]),
        ({"path": {"lambdas": [-1.0]}}, ["body", "path", "lambdas", 0], ["greater than 0"]),
        ({"path": {"lambdas": ["NaN"]}}, ["body", "path", "lambdas", 0], ["finite"]),
        ({"path": {"lambdas": []}}, ["body", "path", "lambdas"], ["at least 1"]),
        ({"path": {"lambdas": [0.1] * 1001}}, ["body", "path", "lambdas"], ["at most 1000"]),
        ({"path": {"n_lambdas": 1}}, ["body", "path", "n_lambdas"], ["greater than or equal"]),
        ({"path": {"n_lambdas": 2**31}}, ["body", "path", "n_lambdas"], ["less than or equal"]),
        ({"path": {"n_lambdas": 2.5}}, ["body", "path", "n_lambdas"], []),
        ({"path": {"ratio": 1.0}}, ["body", "path", "ratio"], ["less than 1"]),
        ({"path": {"ratio": 0}}, ["body", "path", "ratio"], ["greater than 0"]),
        ({"path": {"ratio": 0.1, "lambdas": [0.1]}}, ["body", "path"], ["not both"]),
        ({"path": {"step": 2}}, ["body", "path", "step"], ["Extra inputs"]),
        ({"path": [0.1, 0.01]}, ["body", "path"], []),
        ({"path": {}, "l1": 0.01}, ["body", "l1"], ["what a path varies"]),
        ({"path": {}, "solver": "dual_cd", "l2": 1e-3}, ["body", "solver"], ["warm-started"]),
        ({"path": {}, "solver": "saga", "l2": 1e-3}, ["body", "solver"], ["ws_cd"]),
    ],
)
def test_a_bad_path_is_a_422_naming_the_field(api, fields, loc, words):
    client, settings = api
    refused(client.post("/api/v1/jobs", json=job(**fields)), loc, *words)
    nothing_stored(client, settings)


def test_an_overflowing_lambda_is_a_422_too(api):
    client, settings = api
    body = json.dumps(job(path={"lambdas": [0.5, "HUGE"]})).replace('"HUGE"', "1e400")
    headers = {"Content-Type": "application/json"}
    response = client.post("/api/v1/jobs", content=body, headers=headers)
    refused(response, ["body", "path", "lambdas", 1], "finite")
    nothing_stored(client, settings)


def test_the_path_of_a_one_lambda_job_is_a_409_and_of_another_team_a_404(api):
    client, _ = api
    one = client.post("/api/v1/jobs", json=job(l1=0.1)).json()["id"]
    response = client.get(f"/api/v1/jobs/{one}/path")
    assert response.status_code == 409
    assert f"/jobs/{one}/trace" in response.json()["detail"]
    assert client.get("/api/v1/jobs/999999/path").status_code == 404
    path = client.post("/api/v1/jobs", json=job(path={"n_lambdas": 4})).json()["id"]
    queued_path = client.get(f"/api/v1/jobs/{path}/path")
    assert queued_path.status_code == 200, queued_path.text
    body = queued_path.json()
    assert (body["status"], body["n_lambdas"], body["steps"], body["reached"]) == (
        "queued",
        4,
        [],
        False,
    )
