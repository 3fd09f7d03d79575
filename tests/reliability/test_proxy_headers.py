"""One rule for proxy headers, the same for the API and the dashboard: X-Forwarded-For is
believed only from FACEOFF_TRUSTED_PROXIES (core.auth.client_address), and with
authentication off every route of both answers clients on this machine only. Real uvicorn
(started as ``faceoff up`` starts it) and dashboard processes on loopback, where 127.0.0.2
plays a configured proxy; a client on another machine is played in-process (an ASGI scope
and a WSGI environ with its address), so no test traffic leaves loopback."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx
import pytest

from faceoff.cli.up import api_command
from faceoff.core.settings import Settings
from tests.dashboard.conftest import running_dashboard
from tests.reliability.servers import REPO, running_api

API_PATHS = ("/api/v1/jobs", "/api/v1/health", "/metrics", "/api/v1/openapi.json", "/api/v1/docs")
DASHBOARD_PATHS = ("/", "/compare", "/_dash-layout", "/_dash-dependencies", "/assets/style.css")


@contextmanager
def serving(url: str, trusted: str, log_path: Path) -> Iterator[tuple[int, int]]:
    """(API port, dashboard port), both with authentication off and FACEOFF_TRUSTED_PROXIES
    ``trusted``."""
    env = {
        "FACEOFF_DATABASE_URL": url,
        "FACEOFF_AUTH_ENABLED": "false",
        "FACEOFF_TRUSTED_PROXIES": trusted,
    }
    with ExitStack() as stack:
        api = stack.enter_context(running_api(env, log_path)).port
        dashboard = stack.enter_context(running_dashboard(url, extra_env=env))
        yield api, int(dashboard.rsplit(":", 1)[1])


def statuses(source: str, ports: tuple[int, int], forwarded_for: str | None) -> dict[str, int]:
    """The status of every path of the API and the dashboard, asked from the loopback
    address ``source`` with the header ``X-Forwarded-For: forwarded_for``."""
    headers = {"X-Forwarded-For": forwarded_for} if forwarded_for is not None else {}
    found = {}
    transport = httpx.HTTPTransport(local_address=source)
    with httpx.Client(transport=transport, headers=headers, timeout=30) as client:
        for port, paths in zip(ports, (API_PATHS, DASHBOARD_PATHS), strict=True):
            found.update(_statuses(client, port, paths))
    return found


def _statuses(client: httpx.Client, port: int, paths: tuple[str, ...]) -> dict[str, int]:
    found = {}
    for path in paths:
        response = client.get(f"http://127.0.0.1:{port}{path}")
        found[f"{port}{path}"] = response.status_code
        if response.status_code == 403:
            assert "FACEOFF_AUTH_ENABLED=true" in response.text, path
    return found


def assert_served(found: dict[str, int]) -> None:
    refused = {path: status for path, status in found.items() if status == 403}
    assert not refused and all(status < 500 or "health" in p for p, status in found.items())


def assert_refused(found: dict[str, int]) -> None:
    assert set(found.values()) == {403}, found


@pytest.fixture
def url(tmp_path) -> str:
    """A migrated SQLite database."""
    from faceoff.core.migrate import upgrade

    url = f"sqlite:///{tmp_path / 'faceoff.db'}"
    upgrade(url)
    return url


def test_by_default_a_proxy_on_this_machine_is_believed(url, tmp_path):
    """A reverse proxy on this machine that forwards another machine's request makes it
    remote: refused everywhere, health, metrics, docs and dashboard included."""
    with serving(
        url, Settings.model_fields["TRUSTED_PROXIES"].default, tmp_path / "faceoff.api.log"
    ) as ports:
        assert_served(statuses("127.0.0.1", ports, None))
        assert_served(statuses("127.0.0.1", ports, "127.0.0.1"))
        assert_served(statuses("127.0.0.1", ports, "::1, 127.0.0.1"))
        assert_refused(statuses("127.0.0.1", ports, "8.8.8.8"))
        assert_refused(statuses("127.0.0.1", ports, "8.8.8.8, 127.0.0.1"))
        assert_refused(statuses("127.0.0.1", ports, "127.0.0.1, 8.8.8.8"))  # left part forged
        assert_refused(statuses("127.0.0.1", ports, "not-an-address"))


def test_without_trusted_proxies_the_header_is_ignored(url, tmp_path):
    """Nor does uvicorn read it on its own (started with --no-proxy-headers)."""
    with serving(url, "", tmp_path / "faceoff.api.log") as ports:
        assert_served(statuses("127.0.0.1", ports, "8.8.8.8"))


def test_a_configured_proxy_is_believed(url, tmp_path):
    """127.0.0.2 is the proxy: what it forwards is believed, nobody else's header is."""
    with serving(url, "127.0.0.2/32", tmp_path / "faceoff.api.log") as ports:
        assert_served(statuses("127.0.0.2", ports, "127.0.0.1"))
        assert_refused(statuses("127.0.0.2", ports, "10.1.2.3"))
        assert_refused(statuses("127.0.0.2", ports, "127.0.0.1, 10.1.2.3"))
        assert_served(statuses("127.0.0.1", ports, "8.8.8.8"))  # loopback is no proxy now


@pytest.mark.parametrize("trusted", ["127.0.0.1,::1", ""])
def test_a_client_on_another_machine_is_refused_everywhere(url, trusted):
    """Its own X-Forwarded-For claiming this machine changes nothing: it is no proxy."""
    from fastapi.testclient import TestClient

    from faceoff.api.main import create_app
    from faceoff.dashboard.app import create_app as create_dashboard

    settings = Settings(DATABASE_URL=url, AUTH_ENABLED=False, TRUSTED_PROXIES=trusted)
    remote = "203.0.113.5"
    for forwarded in ({}, {"X-Forwarded-For": "127.0.0.1"}):
        with TestClient(create_app(settings), client=(remote, 40000)) as client:
            for path in API_PATHS:
                response = client.get(path, headers=forwarded)
                assert response.status_code == 403, (path, forwarded)
                assert "FACEOFF_AUTH_ENABLED=true" in response.text
        flask = create_dashboard(settings).server.test_client()
        for path in DASHBOARD_PATHS:
            response = flask.get(path, headers=forwarded, environ_base={"REMOTE_ADDR": remote})
            assert response.status_code == 403, (path, forwarded)


def test_a_bad_trusted_proxies_setting_stops_the_start():
    from faceoff.api.main import create_app
    from faceoff.dashboard.app import create_app as create_dashboard

    settings = Settings(DATABASE_URL="sqlite://", TRUSTED_PROXIES="10.0.0.1, nope")
    for create in (create_app, create_dashboard):
        with pytest.raises(ValueError, match="FACEOFF_TRUSTED_PROXIES: 'nope' is not an IP"):
            create(settings)


def test_every_way_of_starting_the_api_leaves_proxy_headers_to_the_api():
    assert "--no-proxy-headers" in api_command("127.0.0.1", 8000)
    for name in ("docker-compose.yml", "Dockerfile"):
        text = (REPO / name).read_text()
        assert '"faceoff.api.main:app", "--no-proxy-headers"' in text, name
