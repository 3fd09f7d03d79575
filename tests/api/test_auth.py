"""Access control of the API: tokens (stored hashed) of teams, each team seeing and
cancelling only its own jobs, sweeps and uploads (another team's id is a 404), shared
public datasets and references, and the loopback-only rule with authentication off (the
``faceoff tokens`` commands: tests/cli/test_tokens.py). Real PostgreSQL/SQLite and Redis."""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import event, select, text

from faceoff.api.main import create_app
from faceoff.core import auth
from faceoff.core.db import session_scope
from faceoff.core.models import ApiToken, Job, Reference, Team
from tests.api.test_routes import GOOD_FILE, JOB, LOCAL

SWEEP = {
    "datasets": ["a1a"],
    "losses": ["logistic"],
    "l2": [1e-3, 1e-4],
    "solvers": ["dual_cd"],
    "stop": {"max_seconds": 10},
}
SYNTHETIC = {
    "name": "shared-synthetic",
    "source": {
        "kind": "synthetic",
        "generator": "classification",
        "n_samples": 100,
        "n_features": 10,
        "density": 0.5,
        "seed": 0,
    },
}


def make_token(url: str, team: str, name: str | None = None) -> tuple[int, str]:
    """(token id, secret) of a new token of ``team``."""
    with session_scope(url) as session:
        token, secret = auth.create_token(session, team, name)
        return token.id, secret


def bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


@pytest.fixture
def secured(database_url, redis_url, settings_for):
    """(client, settings, headers of team alpha, headers of team beta) with auth on; the
    client is on another machine (10.0.0.5), which a token makes no difference to."""
    settings = settings_for(database_url, redis_url, AUTH_ENABLED=True)
    alpha = bearer(make_token(database_url, "alpha")[1])
    beta = bearer(make_token(database_url, "beta")[1])
    with TestClient(create_app(settings), client=("10.0.0.5", 1234)) as client:
        yield client, settings, alpha, beta


def assert_unauthorized(response) -> None:
    assert response.status_code == 401, response.text
    assert response.headers["www-authenticate"] == "Bearer"
    detail = response.json()["detail"]
    assert isinstance(detail, str) and "token" in detail


def test_requests_without_a_valid_token_get_401(secured):
    client, settings, alpha, _ = secured
    for method, path in [
        ("GET", "/api/v1/jobs"),
        ("GET", "/api/v1/jobs/1"),
        ("POST", "/api/v1/jobs/1/cancel"),
        ("GET", "/api/v1/sweeps"),
        ("GET", "/api/v1/datasets"),
        ("GET", "/api/v1/solvers"),
        ("GET", "/api/v1/references"),
        ("GET", "/api/v1/references/" + "0" * 64),
    ]:
        assert_unauthorized(client.request(method, path))
    # refused before the body is even validated
    assert_unauthorized(client.post("/api/v1/jobs", json={"not": "a job"}))
    assert_unauthorized(client.get("/api/v1/jobs", headers=bearer("fo_not-a-real-token")))
    assert_unauthorized(client.get("/api/v1/jobs", headers={"Authorization": "Basic eDp5"}))
    # public: health (for load balancers and compose) and Prometheus metrics
    assert client.get("/api/v1/health").status_code in (200, 503)
    assert client.get("/metrics").status_code == 200
    assert client.get("/api/v1/jobs", headers=alpha).status_code == 200


def test_tokens_are_stored_hashed_and_revocable(secured):
    client, settings, _, _ = secured
    token_id, secret = make_token(settings.database_url, "gamma", "ci")
    assert secret.startswith("fo_") and len(secret) > 40
    assert client.get("/api/v1/jobs", headers=bearer(secret)).status_code == 200
    with session_scope(settings.database_url) as session:
        token = session.get(ApiToken, token_id)
        assert token.token_hash == hashlib.sha256(secret.encode()).hexdigest()
        assert secret not in {token.token_hash, token.name}
        assert token.team.name == "gamma" and token.last_used_at is not None
        assert auth.revoke_token(session, token_id) is token
    assert_unauthorized(client.get("/api/v1/jobs", headers=bearer(secret)))


def test_a_tokens_last_use_is_written_at_most_once_a_minute(secured):
    """Authentication reads the token on every request but writes its ``last_used_at``
    only when it is older than LAST_USED_RESOLUTION (issue 33: a write per request)."""
    client, settings, _, _ = secured
    token_id, secret = make_token(settings.database_url, "gamma")

    def use(requests: int) -> datetime:
        for _ in range(requests):
            assert client.get("/api/v1/references", headers=bearer(secret)).status_code == 200
        with session_scope(settings.database_url) as session:
            return session.get(ApiToken, token_id).last_used_at

    first = use(1)
    assert first is not None and use(4) == first  # not written again within a minute
    with session_scope(settings.database_url) as session:
        earlier = first - auth.LAST_USED_RESOLUTION - timedelta(seconds=1)
        session.get(ApiToken, token_id).last_used_at = earlier
    again = use(1)
    assert again > first and use(3) == again  # older than that: written, once


def test_a_token_is_found_by_its_index(postgres_url):
    """The token of a request is found through the unique index on its hash, not by a
    sequential scan of api_tokens (which PostgreSQL rightly prefers while the table holds
    a few rows: so it is checked with 3,000 tokens)."""
    with session_scope(postgres_url) as session:
        team = auth.get_or_create_team(session, "many")
        session.add_all(
            ApiToken(team=team, token_hash=hashlib.sha256(b"%d" % i).hexdigest())
            for i in range(3000)
        )
    token_id, secret = make_token(postgres_url, "many")
    with session_scope(postgres_url) as session:
        session.execute(text("ANALYZE api_tokens"))
    with session_scope(postgres_url) as session:
        connection, seen = session.connection(), []
        event.listen(connection, "before_cursor_execute", lambda *run: seen.append(run[2:4]))
        assert auth.verify_token(session, secret).id == token_id
        ((statement, parameters),) = [(s, p) for s, p in seen if "FROM api_tokens" in s]
        explained = connection.exec_driver_sql("EXPLAIN " + statement, parameters)
        plan = "\n".join(row[0] for row in explained)
    assert "Index Scan using api_tokens_token_hash_key" in plan and "Seq Scan" not in plan, plan


def test_a_team_sees_and_cancels_only_its_own_jobs(secured):
    client, settings, alpha, beta = secured
    created = client.post("/api/v1/jobs", json=JOB, headers=alpha)
    assert created.status_code == 201, created.text
    job_id = created.json()["id"]
    missing = client.get(f"/api/v1/jobs/{job_id + 1000}", headers=beta)
    for response in (
        client.get(f"/api/v1/jobs/{job_id}", headers=beta),
        client.get(f"/api/v1/jobs/{job_id}/trace", headers=beta),
        client.get(f"/api/v1/jobs/{job_id}/events", headers=beta),
        client.post(f"/api/v1/jobs/{job_id}/cancel", headers=beta),
    ):
        assert response.status_code == 404, response.text
        assert response.json()["detail"] == f"job {job_id} not found"
    assert missing.json()["detail"] == f"job {job_id + 1000} not found"  # the same answer
    assert client.get("/api/v1/jobs", headers=beta).json() == {"data": [], "count": 0}
    assert client.get("/api/v1/jobs", headers=alpha).json()["count"] == 1
    # deduplication is per team: beta's identical job is its own
    again = client.post("/api/v1/jobs", json=JOB, headers=alpha)
    assert again.status_code == 200 and again.json()["id"] == job_id
    theirs = client.post("/api/v1/jobs", json=JOB, headers=beta)
    assert theirs.status_code == 201 and theirs.json()["id"] != job_id
    cancelled = client.post(f"/api/v1/jobs/{job_id}/cancel", headers=alpha)
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    with session_scope(settings.database_url) as session:
        teams = dict(session.execute(select(Team.name, Team.id)).all())
        owners = {j.id: j.team_id for j in session.scalars(select(Job))}
    assert owners == {job_id: teams["alpha"], theirs.json()["id"]: teams["beta"]}
    assert client.get(f"/api/v1/jobs/{theirs.json()['id']}", headers=beta).status_code == 200


def test_a_team_sees_only_its_own_sweeps(secured):
    client, _, alpha, beta = secured
    identical = {**JOB, "l2": 1e-3, "stop": {"max_seconds": 10}}  # = one job of SWEEP
    standalone = client.post("/api/v1/jobs", json=identical, headers=beta).json()
    sweep = client.post("/api/v1/sweeps", json=SWEEP, headers=alpha)
    assert sweep.status_code == 201, sweep.text
    sweep_id = sweep.json()["id"]
    assert client.get(f"/api/v1/sweeps/{sweep_id}", headers=beta).status_code == 404
    assert client.get("/api/v1/sweeps", headers=beta).json()["count"] == 0
    jobs = client.get("/api/v1/jobs", params={"sweep_id": sweep_id}, headers=alpha).json()
    assert jobs["count"] == 2 and standalone["id"] not in {j["id"] for j in jobs["data"]}
    # the same sweep by beta is beta's own, and adopts beta's identical standalone job
    same = client.post("/api/v1/sweeps", json=SWEEP, headers=beta)
    assert same.status_code == 201 and same.json()["id"] != sweep_id
    again = client.post("/api/v1/sweeps", json=SWEEP, headers=alpha)
    assert again.status_code == 200 and again.json()["id"] == sweep_id
    theirs = client.get("/api/v1/jobs", params={"sweep_id": same.json()["id"]}, headers=beta)
    assert standalone["id"] in {j["id"] for j in theirs.json()["data"]}


def test_uploads_are_private_and_public_datasets_shared(secured):
    client, _, alpha, beta = secured
    upload = client.post(
        "/api/v1/datasets/upload",
        files={"file": ("tiny.svm", GOOD_FILE)},
        data={"name": "alpha-tiny"},
        headers=alpha,
    )
    assert upload.status_code == 201, upload.text
    tiny = upload.json()
    shared = client.post("/api/v1/datasets", json=SYNTHETIC, headers=beta)
    assert shared.status_code == 201, shared.text

    def names(headers) -> set[str]:
        return {d["name"] for d in client.get("/api/v1/datasets", headers=headers).json()["data"]}

    assert names(alpha) == {"alpha-tiny", "shared-synthetic"}
    assert names(beta) == {"shared-synthetic"}
    assert client.get(f"/api/v1/datasets/{tiny['id']}", headers=beta).status_code == 404
    assert client.get(f"/api/v1/datasets/{tiny['id']}/stats", headers=beta).status_code == 404
    assert client.get(f"/api/v1/datasets/{tiny['id']}/stats", headers=alpha).status_code == 200
    refused = client.post("/api/v1/jobs", json={**JOB, "dataset": "alpha-tiny"}, headers=beta)
    assert refused.status_code == 422
    used = client.post("/api/v1/jobs", json={**JOB, "dataset": "alpha-tiny"}, headers=alpha)
    assert used.status_code == 201
    shared_job = {**JOB, "dataset": "shared-synthetic"}
    assert client.post("/api/v1/jobs", json=shared_job, headers=alpha).status_code == 201
    # beta learns nothing about alpha's dataset: a name is per team, so beta's own upload of
    # that name is beta's (a 409 would tell that alpha has one), and each team sees its own
    own = client.post(
        "/api/v1/datasets/upload",
        files={"file": ("tiny.svm", GOOD_FILE + b"-1 1:2\n")},
        data={"name": "alpha-tiny"},
        headers=beta,
    )
    assert own.status_code == 201, own.text
    assert own.json()["id"] != tiny["id"]
    assert names(beta) == {"alpha-tiny", "shared-synthetic"}
    for headers, dataset_id in ((alpha, tiny["id"]), (beta, own.json()["id"])):
        job = client.post("/api/v1/jobs", json={**JOB, "dataset": "alpha-tiny"}, headers=headers)
        assert job.json()["dataset_id"] == dataset_id
    # a name the caller sees (its own, or a shared one) is a 409 that describes it
    again = client.post(
        "/api/v1/datasets/upload",
        files={"file": ("tiny.svm", GOOD_FILE + b"-1 2:2\n")},
        data={"name": "alpha-tiny"},
        headers=beta,
    )
    assert again.status_code == 409 and f"id {own.json()['id']}" in again.json()["detail"]
    synthetic = {**SYNTHETIC, "name": "alpha-tiny"}
    assert client.post("/api/v1/datasets", json=synthetic, headers=beta).status_code == 409
    # nor can an upload take a public registry name from everyone
    public = client.post(
        "/api/v1/datasets/upload",
        files={"file": ("a1a.svm", GOOD_FILE)},
        headers=alpha,
    )
    assert public.status_code == 409 and "public" in public.json()["detail"]


def test_references_are_shared(secured):
    client, settings, alpha, beta = secured
    job_id = client.post("/api/v1/jobs", json=JOB, headers=alpha).json()["id"]
    with session_scope(settings.database_url) as session:
        digest = session.get(Job, job_id).objective_hash
        session.add(
            Reference(objective_hash=digest, objective={}, primal=0.5, gap=1e-12, job_id=job_id)
        )
    for headers in (alpha, beta):
        found = client.get(f"/api/v1/references/{digest}", headers=headers)
        assert found.status_code == 200 and found.json()["primal"] == 0.5


@pytest.mark.parametrize("host", ["10.0.0.5", "192.168.1.20", "2001:db8::1", "testclient"])
def test_without_auth_only_loopback_clients_are_served(sqlite_url, settings_for, host):
    app = create_app(settings_for(sqlite_url))
    with TestClient(app, client=(host, 1234)) as remote:
        refused = remote.get("/api/v1/jobs")
        assert refused.status_code == 403
        detail = refused.json()["detail"]
        assert "authentication is disabled" in detail and "FACEOFF_AUTH_ENABLED=true" in detail
        assert remote.get("/metrics").status_code == 403  # every route, api.access
    for loopback in (LOCAL, ("::1", 1234), ("127.0.0.2", 1234)):
        with TestClient(app, client=loopback) as local:
            assert local.get("/api/v1/jobs").json() == {"data": [], "count": 0}
