"""GET /references lists the certified optima, paginated and filtered, on SQLite and
PostgreSQL; GET /references/{objective_hash} reads one. References are written as a worker
writes them (core.references.record_reference on a succeeded job with its data digest)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from faceoff.api.main import create_app
from faceoff.core.db import session_scope
from faceoff.core.models import SUCCEEDED, Job
from faceoff.core.references import record_reference
from tests.api.test_auth import bearer, make_token
from tests.api.test_routes import JOB, LOCAL

# (data digest, job spec changes, P): three objectives of a1a and one of another matrix
OBJECTIVES = [
    ("a" * 64, {"loss": "logistic", "l2": 1e-4}, 0.5),
    ("a" * 64, {"loss": "logistic", "l2": 1e-3}, 0.6),
    ("a" * 64, {"loss": "squared", "l2": 1e-3, "l1": 1e-4}, 0.3),
    ("b" * 64, {"loss": "logistic", "l2": 1e-4, "normalize": "rows"}, 0.4),
]


def certify(client, settings, headers, body: dict, digest: str, primal: float) -> None:
    """Submit a job, then do what a worker does when it succeeds on data ``digest``."""
    created = client.post("/api/v1/jobs", json=body, headers=headers)
    assert created.status_code == 201, created.text
    with session_scope(settings.database_url) as session:
        job = session.get(Job, created.json()["id"])
        job.status, job.primal, job.gap, job.data_hash = SUCCEEDED, primal, 1e-12, digest
        assert record_reference(session, job) is not None


@pytest.fixture
def api(database_url, redis_url, settings_for):
    settings = settings_for(database_url, redis_url)
    with TestClient(create_app(settings), client=LOCAL) as client:
        for digest, changes, primal in OBJECTIVES:
            certify(client, settings, {}, {**JOB, **changes}, digest, primal)
        yield client


def listed(client, headers=None, **query) -> tuple[list[float], int]:
    response = client.get("/api/v1/references", params=query, headers=headers or {})
    assert response.status_code == 200, response.text
    body = response.json()
    return [r["primal"] for r in body["data"]], body["count"]


def test_listing_filters_and_pages(api):
    assert listed(api) == ([0.4, 0.3, 0.6, 0.5], 4)  # newest first
    assert listed(api, loss="logistic") == ([0.4, 0.6, 0.5], 3)
    assert listed(api, penalty="elastic_net") == ([0.3], 1)
    assert listed(api, penalty="l2", l2=1e-4) == ([0.4, 0.5], 2)
    assert listed(api, l1=1e-4, l2=1e-3) == ([0.3], 1)
    assert listed(api, l2=1e-5) == ([], 0)
    assert listed(api, dataset="a1a") == ([0.4, 0.3, 0.6, 0.5], 4)
    assert listed(api, dataset="a9a") == ([], 0)
    assert listed(api, limit=2) == ([0.4, 0.3], 4)
    assert listed(api, limit=2, offset=3) == ([0.5], 4)
    first = api.get("/api/v1/references", params={"limit": 1}).json()["data"][0]
    digest = first["objective_hash"]
    assert listed(api, objective_hash=digest) == ([0.4], 1)
    assert api.get(f"/api/v1/references/{digest}").json() == first
    assert first["objective"]["normalize"] == "rows" and first["objective"]["dataset"] == "a1a"
    missing = api.get(f"/api/v1/references/{'0' * 64}")
    assert missing.status_code == 404 and "no reference optimum" in missing.json()["detail"]


@pytest.mark.parametrize(
    ("query", "name"),
    [
        ("objective_hash=abc", "objective_hash"),
        ("objective_hash=" + "A" * 64, "objective_hash"),
        ("loss=hinge", "loss"),
        ("penalty=l3", "penalty"),
        ("l2=nan", "l2"),
        ("l2=-1", "l2"),
        ("l1=1e400", "l1"),
        ("dataset=%00", "dataset"),
        ("dataset=" + "x" * 300, "dataset"),
        ("dataset=a%2Fb", "dataset"),
        ("limit=0", "limit"),
        ("offset=-1", "offset"),
    ],
)
def test_hostile_queries_are_4xx_naming_the_parameter(api, query, name):
    response = api.get(f"/api/v1/references?{query}")
    assert response.status_code == 422, response.text
    assert [e["loc"] for e in response.json()["detail"]] == [["query", name]]
    assert api.get("/api/v1/references/zz").status_code == 422


def test_dataset_filter_sees_only_the_teams_names(database_url, redis_url, settings_for, tmp_path):
    """Every team reads every reference; ``dataset`` finds a team's upload's optima for that
    team only (through its own jobs), and another team's listing never names the upload."""
    settings = settings_for(database_url, redis_url, AUTH_ENABLED=True)
    alpha = bearer(make_token(database_url, "alpha")[1])
    beta = bearer(make_token(database_url, "beta")[1])
    path = tmp_path / "mine.svm"
    path.write_bytes(b"1 1:1 2:2\n-1 2:1\n1 1:0.5\n")
    with TestClient(create_app(settings), client=("10.0.0.5", 1234)) as client:
        with path.open("rb") as f:
            upload = client.post("/api/v1/datasets/upload", files={"file": f}, headers=alpha)
        assert upload.status_code == 201, upload.text
        certify(client, settings, alpha, {**JOB, "dataset": "mine"}, "c" * 64, 0.25)
        certify(client, settings, beta, JOB, "a" * 64, 0.5)
        for headers in (alpha, beta):
            assert listed(client, headers) == ([0.5, 0.25], 2)
            assert listed(client, headers, dataset="a1a") == ([0.5], 1)
        assert listed(client, alpha, dataset="mine") == ([0.25], 1)
        assert listed(client, beta, dataset="mine") == ([], 0)
        for headers in (alpha, beta):  # the upload's name is never shown
            body = client.get("/api/v1/references", headers=headers).json()
            assert "mine" not in str(body)
