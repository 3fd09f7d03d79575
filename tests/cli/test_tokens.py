"""``faceoff tokens create|list|revoke`` on the database of FACEOFF_DATABASE_URL: a created
token is shown once and opens the API, a revoked one no longer does."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy import select

from faceoff.api.main import create_app
from faceoff.cli.main import main
from faceoff.core.db import session_scope
from faceoff.core.models import Team
from faceoff.core.settings import get_settings
from tests.api.test_auth import assert_unauthorized, bearer


def test_tokens_command(sqlite_url, settings_for, monkeypatch, capsys):
    monkeypatch.setenv("FACEOFF_DATABASE_URL", sqlite_url)
    get_settings.cache_clear()
    try:
        assert main(["tokens", "create", "--team", "delta", "--name", "laptop"]) == 0
        created = capsys.readouterr()
        secret = created.out.strip()
        assert secret.startswith("fo_") and "shown only this once" in created.err
        assert main(["tokens", "create", "--team", "delta"]) == 0
        capsys.readouterr()
        assert main(["tokens", "list"]) == 0
        listing = capsys.readouterr().out
        assert secret not in listing and listing.count("delta") == 2 and "laptop" in listing
        settings = settings_for(sqlite_url, AUTH_ENABLED=True)
        with TestClient(create_app(settings), client=("10.0.0.5", 1234)) as client:
            assert client.get("/api/v1/jobs", headers=bearer(secret)).status_code == 200
            assert main(["tokens", "revoke", "1"]) == 0
            assert "revoked" in capsys.readouterr().out
            assert_unauthorized(client.get("/api/v1/jobs", headers=bearer(secret)))
        assert main(["tokens", "revoke", "99"]) == 2
        assert "no token 99" in capsys.readouterr().err
        with session_scope(sqlite_url) as session:
            assert session.scalars(select(Team.name)).all() == ["delta"]
    finally:
        get_settings.cache_clear()
