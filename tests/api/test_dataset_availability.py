"""Registering a registry dataset whose file is nowhere to be had (offline, not mirrored, not
cached) is refused at once with what to do, rather than answering 201 and failing at job
time; one that will be downloaded on first use is accepted and says so."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from faceoff.api.main import create_app
from tests.api.test_routes import LOCAL

W8A = {"name": "w8a", "source": {"kind": "registry", "name": "w8a"}}


@pytest.fixture
def client(sqlite_url, settings_for, monkeypatch, tmp_path):  # noqa: F811
    """The API with an empty mirror and cache (downloads stay off in any case)."""
    monkeypatch.setenv("FACEOFF_DATA_MIRROR", str(tmp_path / "mirror"))
    monkeypatch.setenv("FACEOFF_DATA_CACHE", str(tmp_path / "cache"))
    with TestClient(create_app(settings_for(sqlite_url)), client=LOCAL) as api:
        yield api


def offline(monkeypatch) -> None:
    monkeypatch.setattr(
        "faceoff.data.fetch.reachable", lambda url, timeout=3.0: "URLError: no network"
    )


def test_offline_and_nowhere_here_is_a_422_saying_how_to_provide_it(client, monkeypatch):
    offline(monkeypatch)
    refused = client.post("/api/v1/datasets", json=W8A)
    assert refused.status_code == 422, refused.text
    (error,) = refused.json()["detail"]
    assert error["loc"] == ["body", "source", "name"]
    assert error["msg"].startswith("dataset 'w8a' is not in the mirror folder ")
    assert "cannot be reached from here (URLError: no network" in error["msg"]
    assert "put w8a.bz2 in the mirror folder (FACEOFF_DATA_MIRROR)" in error["msg"]
    assert client.get("/api/v1/datasets").json()["count"] == 0  # nothing registered
    # nor on first use of the public name in a job
    job = {"dataset": "w8a", "loss": "logistic", "l2": 1e-4, "solver": "dual_cd"}
    refused = client.post("/api/v1/jobs", json=job)
    assert refused.status_code == 422 and "'w8a' is not in the mirror" in refused.text
    assert client.get("/api/v1/jobs").json()["count"] == 0


def test_a_reachable_download_is_accepted_and_says_it_comes_on_first_use(
    client, monkeypatch, tmp_path
):
    monkeypatch.setattr("faceoff.data.fetch.reachable", lambda url, timeout=3.0: None)
    created = client.post("/api/v1/datasets", json=W8A)
    assert created.status_code == 201, created.text
    later = "downloaded on first use (not in the mirror or the cache yet)"
    assert created.json()["availability"] == later
    dataset = client.get(f"/api/v1/datasets/{created.json()['id']}").json()
    assert dataset["availability"] == later
    (tmp_path / "mirror").mkdir()
    (tmp_path / "mirror" / "w8a.bz2").write_bytes(b"")  # by name, as the worker looks
    dataset = client.get(f"/api/v1/datasets/{created.json()['id']}").json()
    assert dataset["availability"] == "in the mirror folder"
