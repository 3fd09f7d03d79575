"""No input makes the API answer 500: bad types, non-finite numbers, huge values, unknown and
missing fields, NUL bytes, bad ids and pagination all get a 4xx with a JSON message."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from faceoff.api.main import create_app
from tests.api.test_routes import LOCAL

JOB = {"dataset": "a1a", "loss": "logistic", "l2": 1e-4, "solver": "dual_cd"}
BAD_JOBS = [
    {},
    [],
    "text",
    {**JOB, "l2": "NaN"},
    {**JOB, "l2": "inf"},
    {**JOB, "l2": 1e308},
    {**JOB, "l2": -1},
    {**JOB, "l2": "1e-4x"},
    {**JOB, "seed": 10**40},
    {**JOB, "seed": 1.5},
    {**JOB, "unknown": 1},
    {**JOB, "loss": "hinge"},
    {**JOB, "solver": None},
    {**JOB, "dataset": "a\x00b"},
    {**JOB, "dataset": ""},
    {**JOB, "dataset": "x" * 500},
    {**JOB, "params": []},
    {**JOB, "params": {"sampling": {"deep": [1]}}},
    {**JOB, "solver": "lbfgs", "params": {"memory": "NaN"}},
    {**JOB, "solver": "lbfgs", "params": {"memory": 10**400}},
    {**JOB, "solver": "spdc", "params": {"tau": "inf"}},
    {**JOB, "stop": {"max_epochs": 0}},
    {**JOB, "stop": {"tol": "-inf"}},
    {**JOB, "stop": "fast"},
    {**JOB, "positive": ["a"]},
    {k: v for k, v in JOB.items() if k != "loss"},
]
BAD_REQUESTS = [
    ("GET", "/api/v1/jobs/0", None),
    ("GET", "/api/v1/jobs/-3", None),
    ("GET", "/api/v1/jobs/abc", None),
    ("GET", f"/api/v1/jobs/{10**30}", None),
    ("GET", "/api/v1/jobs/99999", None),
    ("GET", "/api/v1/jobs?limit=-1", None),
    ("GET", "/api/v1/jobs?limit=100000", None),
    ("GET", "/api/v1/jobs?offset=-5", None),
    ("GET", f"/api/v1/jobs?offset={10**30}", None),
    ("GET", "/api/v1/jobs?status=done", None),
    ("GET", "/api/v1/jobs?dataset=a%00b", None),
    ("GET", "/api/v1/jobs?sweep_id=x", None),
    ("GET", "/api/v1/jobs/1/trace?max_points=1", None),
    ("GET", "/api/v1/jobs/1/trace?after_seq=nan", None),
    ("GET", "/api/v1/jobs/1/events?after_seq=-9", None),
    ("POST", "/api/v1/jobs/123/cancel", None),
    ("DELETE", "/api/v1/jobs/1", None),
    ("GET", "/api/v1/sweeps/0", None),
    ("GET", "/api/v1/sweeps/55", None),
    (
        "POST",
        "/api/v1/sweeps",
        {"datasets": [], "losses": ["logistic"], "l2": [1], "solvers": ["agd"]},
    ),
    (
        "POST",
        "/api/v1/sweeps",
        {"datasets": ["a1a"], "losses": ["logistic"], "l2": [1e-4, -1], "solvers": ["agd"]},
    ),
    (
        "POST",
        "/api/v1/sweeps",
        {
            "datasets": ["a1a"],
            "losses": ["logistic"],
            "l2": [1e-4],
            "solvers": [{"solver": "spdc", "params": {"batch_size": list(range(10**4))}}],
        },
    ),
    (
        "POST",
        "/api/v1/sweeps",
        {
            "name": "a\x00",
            "datasets": ["a1a"],
            "losses": ["logistic"],
            "l2": [1e-4],
            "solvers": ["agd"],
        },
    ),
    (
        "POST",
        "/api/v1/sweeps",
        {"datasets": ["nope"], "losses": ["logistic"], "l2": [1e-4], "solvers": ["agd"]},
    ),
    ("POST", "/api/v1/datasets", {"name": "x", "source": {"kind": "ftp"}}),
    (
        "POST",
        "/api/v1/datasets",
        {"name": "x y", "source": {"kind": "sklearn", "name": "breast_cancer"}},
    ),
    ("POST", "/api/v1/datasets", {"name": "x", "source": {"kind": "sklearn", "name": "iris"}}),
    (
        "POST",
        "/api/v1/datasets",
        {
            "name": "x",
            "source": {
                "kind": "synthetic",
                "generator": "classification",
                "n_samples": 10**7,
                "n_features": 10**7,
                "density": 1,
            },
        },
    ),
    (
        "POST",
        "/api/v1/datasets",
        {
            "name": "x",
            "source": {
                "kind": "synthetic",
                "generator": "classification",
                "n_samples": 10,
                "n_features": 10,
                "density": "nan",
            },
        },
    ),
    ("POST", "/api/v1/datasets", {"name": "x", "source": {"kind": "registry", "name": "../etc"}}),
    ("POST", "/api/v1/datasets/upload", None),
    ("GET", "/api/v1/datasets/0/stats", None),
    ("GET", "/api/v1/datasets/8/stats", None),
    ("GET", "/api/v1/references?objective_hash=zz", None),
    ("GET", "/api/v1/references?l2=nan", None),
    ("GET", "/api/v1/references/zz", None),
    ("GET", f"/api/v1/references/{'0' * 64}", None),
    (
        "POST",
        "/api/v1/references",
        {"dataset": "a1a", "loss": "logistic", "l2": 1e-4, "max_seconds": "inf"},
    ),
    (
        "POST",
        "/api/v1/references",
        {"dataset": "a1a", "loss": "logistic", "l2": 1e-4, "solver": "x"},
    ),
    ("GET", "/api/v1/nothing", None),
]


@pytest.fixture
def client(database_url, redis_url, settings_for):
    with TestClient(create_app(settings_for(database_url, redis_url)), client=LOCAL) as client:
        yield client


def test_bad_inputs_never_answer_500(client):
    for body in BAD_JOBS:
        response = client.post("/api/v1/jobs", json=body)
        assert response.status_code == 422, (body, response.text)
        assert isinstance(response.json()["detail"], list)
    assert (
        client.post(
            "/api/v1/jobs", content=b"{not json", headers={"content-type": "application/json"}
        ).status_code
        == 422
    )
    assert (
        client.post(
            "/api/v1/jobs", content=b'{"l2": NaN}', headers={"content-type": "application/json"}
        ).status_code
        == 422
    )
    for method, path, body in BAD_REQUESTS:
        response = client.request(method, path, json=body)
        assert 400 <= response.status_code < 500, (
            method,
            path,
            response.status_code,
            response.text,
        )
        assert "detail" in response.json(), (method, path)
    stats = client.get("/api/v1/datasets/1/stats", params={"l2": "inf"})
    assert stats.status_code in (404, 422)


def test_registry_dataset_that_cannot_be_loaded_is_a_422(
    sqlite_url, settings_for, monkeypatch, tmp_path
):
    monkeypatch.setenv("FACEOFF_DATA_MIRROR", str(tmp_path / "empty"))
    monkeypatch.setenv("FACEOFF_DATA_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr("faceoff.data.fetch.download", _offline)
    # its URL answered when it was registered (tests/api/test_dataset_availability.py)
    monkeypatch.setattr("faceoff.data.fetch.reachable", lambda url, timeout=3.0: None)
    with TestClient(create_app(settings_for(sqlite_url)), client=LOCAL) as client:
        made = client.post(
            "/api/v1/datasets", json={"name": "w", "source": {"kind": "registry", "name": "w8a"}}
        )
        response = client.get(f"/api/v1/datasets/{made.json()['id']}/stats")
    assert response.status_code == 422
    assert "cannot be loaded" in response.json()["detail"][0]["msg"]


def _offline(*_args, **_kwargs):
    from faceoff.data.registry import DatasetError

    raise DatasetError("offline: downloads are disabled in this test")


@pytest.mark.parametrize("host", ["", "a b", "x" * 254, "-lead", "dot..dot", "é"])
def test_a_bad_host_is_refused_naming_the_field(sqlite_url, redis_url, settings_for, host):
    settings = settings_for(sqlite_url, redis_url)
    with TestClient(create_app(settings), client=LOCAL) as client:
        response = client.post("/api/v1/jobs", json={**JOB, "host": host})
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "host"]
