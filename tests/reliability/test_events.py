"""A job's event stream (``GET /jobs/{id}/events``) ends cleanly when it must: a revoked
token ends it within a few seconds, and a PostgreSQL outage ends it with a final ``error``
event instead of a cut connection and a traceback. A real uvicorn API, real PostgreSQL (behind
a TCP proxy to cut it) and an httpx client."""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator

import httpx
from sqlalchemy import update
from sqlalchemy.engine import make_url

from faceoff.client.faceoff_client import parse_events
from faceoff.core import auth
from faceoff.core.db import session_scope
from faceoff.core.models import Job
from tests.backends import PG_HOST, PG_PORT
from tests.dashboard.factories import add_running_job
from tests.reliability.proxy import tcp_proxy
from tests.reliability.servers import running_api

READ_TIMEOUT = 15.0  # longer than the few seconds a stream may take to notice


def events(response: httpx.Response) -> Iterator[tuple[str, dict]]:
    return parse_events(response.iter_lines())


def test_a_revoked_token_ends_the_stream(postgres_url, tmp_path):
    with session_scope(postgres_url) as session:
        token, secret = auth.create_token(session, "alpha")
        token_id, team_id = token.id, token.team_id
    job_id = add_running_job(postgres_url)
    with session_scope(postgres_url) as session:
        session.execute(update(Job).where(Job.id == job_id).values(team_id=team_id))
    env = {
        "FACEOFF_DATABASE_URL": postgres_url,
        "FACEOFF_AUTH_ENABLED": "true",
        "FACEOFF_SECRET_KEY": secrets.token_urlsafe(32),
    }
    headers = {"Authorization": f"Bearer {secret}"}
    with (
        running_api(env, tmp_path / "faceoff.api.log") as api,
        httpx.Client(base_url=api.base, timeout=READ_TIMEOUT) as client,
        client.stream("GET", f"/api/v1/jobs/{job_id}/events", headers=headers) as response,
    ):
        assert response.status_code == 200
        stream = events(response)
        kinds = []
        for kind, _ in stream:
            kinds.append(kind)
            if kind == "status":  # after the trace so far
                break
        with session_scope(postgres_url) as session:
            auth.revoke_token(session, token_id)
        revoked = time.monotonic()
        rest = list(stream)
        assert time.monotonic() - revoked < 5
    assert kinds.count("point") == 20 and rest
    kind, data = rest[-1]
    assert kind == "error" and "revoked" in data["detail"], rest
    assert "Traceback" not in api.log()


def test_a_database_outage_ends_the_stream_with_an_error_event(postgres_url, tmp_path):
    job_id = add_running_job(postgres_url)
    with tcp_proxy(PG_HOST, PG_PORT) as proxy:
        proxied = make_url(postgres_url).set(host="127.0.0.1", port=proxy.port)
        env = {"FACEOFF_DATABASE_URL": proxied.render_as_string(hide_password=False)}
        with (
            running_api(env, tmp_path / "faceoff.api.log") as api,
            httpx.Client(base_url=api.base, timeout=READ_TIMEOUT) as client,
            client.stream("GET", f"/api/v1/jobs/{job_id}/events") as response,
        ):
            assert response.status_code == 200
            stream = events(response)
            for kind, _ in stream:
                if kind == "status":
                    break
            proxy.down()
            cut = time.monotonic()
            rest = list(stream)  # the stream ends: neither cut nor hanging
            assert time.monotonic() - cut < 10
    assert [kind for kind, _ in rest] == ["error"], rest
    assert rest[0][1]["detail"].startswith("database unavailable: ")
    log = api.log()
    assert "database unavailable" in log
    assert "Traceback" not in log and "Exception in ASGI application" not in log
