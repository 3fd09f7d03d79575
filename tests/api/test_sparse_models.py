"""l2 = 0 through the API: the Lasso and l1-logistic are accepted by the solvers that
converge without strong convexity, refused by name by the others, and a request with no
penalty at all is a 422 naming the field; nothing is stored for a refused request.

Jobs go to a queue no worker consumes, as in test_routes.py.
"""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from faceoff.api.main import create_app
from tests.api.test_multiclass import nothing_stored, refused, upload
from tests.api.test_routes import LOCAL, queued

BINARY = b"1 1:1 3:0.5\n-1 2:1\n1 1:1 2:1\n-1 2:2 3:1\n1 1:2\n-1 3:1\n"


@pytest.fixture
def api(database_url, redis_url, settings_for):
    settings = settings_for(database_url, redis_url, MAX_SWEEP_JOBS=50)
    with TestClient(create_app(settings), client=LOCAL) as client:
        upload(client, "tiny", BINARY)
        yield client, settings


def job(**fields) -> dict:
    return {"dataset": "tiny", "loss": "logistic", "l2": 0.0, "l1": 0.01, **fields}


def test_a_lasso_or_l1_logistic_job_is_accepted_by_the_solvers_that_take_it(api):
    client, settings = api
    for solver in ("primal_cd", "agd", "lbfgs"):
        for loss in ("logistic", "squared"):
            response = client.post("/api/v1/jobs", json=job(solver=solver, loss=loss))
            assert response.status_code == 201, response.text
            assert response.json()["spec"]["l2"] == 0.0
    assert queued(settings) == 6


@pytest.mark.parametrize("solver", ["dual_cd", "spdc", "dgpd", "saga"])
def test_a_solver_that_needs_strong_convexity_refuses_l2_zero_by_name(api, solver):
    client, settings = api
    message = refused(
        client.post("/api/v1/jobs", json=job(solver=solver)),
        ["body", "l2"],
        f"solver '{solver}' needs l2 > 0",
        "strong convexity",
        "primal_cd",
    )
    assert "l2 = 0" in message
    nothing_stored(client, settings)


@pytest.mark.parametrize(
    "fields,loc,words",
    [
        ({"l2": 0.0, "l1": 0.0}, ["body", "l1"], ["l1 and l2 are both 0"]),
        ({"l2": 1e-400, "l1": 0.0}, ["body", "l1"], ["l1 and l2 are both 0"]),
        ({"l2": -1e-3}, ["body", "l2"], ["greater than or equal to 0"]),
        ({"l2": "NaN"}, ["body", "l2"], []),
    ],
)
def test_no_penalty_or_a_negative_weight_is_refused(api, fields, loc, words):
    client, settings = api
    refused(client.post("/api/v1/jobs", json=job(solver="primal_cd", **fields)), loc, *words)
    nothing_stored(client, settings)


def test_a_sweep_over_l2_zero_skips_the_solvers_that_need_l2(api):
    client, settings = api
    sweep = {
        "datasets": ["tiny"],
        "losses": ["logistic"],
        "l2": [0.0, 1e-3],
        "l1": [0.01],
        "solvers": ["dual_cd", "primal_cd"],
    }
    response = client.post("/api/v1/sweeps", json=sweep)
    assert response.status_code == 201, response.text
    body = response.json()
    counts = body["jobs_per_solver"]
    assert counts["primal_cd"]["jobs"] == 2 and counts["primal_cd"]["skipped"] == 0
    assert counts["dual_cd"]["jobs"] == 1 and counts["dual_cd"]["skipped"] == 1
    assert body["n_jobs"] == 3 == queued(settings)


def test_l2_zero_with_l1_left_out_is_a_422_at_l1_not_a_500(api):
    client, settings = api
    body = {"dataset": "tiny", "loss": "squared", "l2": 0.0, "solver": "agd"}
    refused(client.post("/api/v1/jobs", json=body), ["body", "l1"], "both 0")
    sweep = {"datasets": ["tiny"], "losses": ["squared"], "l2": [0.0], "solvers": ["agd"]}
    refused(client.post("/api/v1/sweeps", json=sweep), ["body", "l1"], "both 0")
    nothing_stored(client, settings)


def test_a_sweep_that_pairs_l2_zero_with_l1_zero_is_refused(api):
    client, settings = api
    sweep = {
        "datasets": ["tiny"],
        "losses": ["squared"],
        "l2": [0.0, 1e-3],
        "l1": [0.0, 0.1],
        "solvers": ["primal_cd"],
    }
    refused(client.post("/api/v1/sweeps", json=sweep), ["body", "l1"], "pairs l2 = 0 with l1 = 0")
    nothing_stored(client, settings)


def test_an_intercept_is_fitted_by_the_primal_solvers_and_refused_by_name_elsewhere(api):
    client, settings = api
    for solver in ("primal_cd", "agd", "lbfgs"):
        response = client.post("/api/v1/jobs", json=job(solver=solver, fit_intercept=True))
        assert response.status_code == 201, response.text
        assert response.json()["spec"]["fit_intercept"] is True
    plain = client.post("/api/v1/jobs", json=job(solver="primal_cd"))
    assert plain.status_code == 201 and "fit_intercept" not in plain.json()["spec"]
    assert queued(settings) == 4
    refused(
        client.post("/api/v1/jobs", json=job(solver="dual_cd", l2=1e-3, fit_intercept=True)),
        ["body", "fit_intercept"],
        "solver 'dual_cd' does not fit an intercept",
        "primal_cd",
    )


@pytest.mark.parametrize("value", ["yes", 1, "true", None])
def test_fit_intercept_is_a_json_boolean(api, value):
    client, settings = api
    response = client.post("/api/v1/jobs", json=job(solver="primal_cd", fit_intercept=value))
    assert response.status_code == 422, response.text
    assert response.json()["detail"][0]["loc"] == ["body", "fit_intercept"]
    assert queued(settings) == 0


def test_a_sweep_with_an_intercept_skips_the_solvers_that_fit_none(api):
    client, settings = api
    sweep = {
        "datasets": ["tiny"],
        "losses": ["logistic"],
        "l2": [1e-3],
        "solvers": ["dual_cd", "lbfgs"],
        "fit_intercept": True,
    }
    response = client.post("/api/v1/sweeps", json=sweep)
    assert response.status_code == 201, response.text
    counts = response.json()["jobs_per_solver"]
    assert counts["lbfgs"]["jobs"] == 1 and counts["dual_cd"]["skipped"] == 1
    assert counts["dual_cd"]["jobs"] == 0 and queued(settings) == 1
