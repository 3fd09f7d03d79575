"""One rule for proxy headers, the same for the API and the dashboard: X-Forwarded-For is
believed only from FACEOFF_TRUSTED_PROXIES (core.auth.client_address), and with
authentication off every route of both answers clients on this machine only. Real uvicorn
(started as ``faceoff up`` starts it) and dashboard processes; a client on another address
is this machine's non-loopback address."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx
import pytest

from cli.up import api_command
from core.settings import Settings
from tests.dashboard.conftest import running_dashboard
from tests.reliability.servers import REPO, running_api

API_PATHS = ("/api/v1/jobs", "/api/v1/health", "/metrics", "/api/v1/openapi.json", "/api/v1/docs")
DASHBOARD_PATHS = ("/", "/compare", "/_dash-layout", "/_dash-dependencies", "/assets/style.css")


def other_address() -> str | None:
    """A non-loopback IPv4 address of this machine (no packet is sent), None if none."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.255.255.255", 1))
        except OSError:
            return None
        address = probe.getsockname()[0]
    return None if address.startswith("127.") else address


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
        api = stack.enter_context(running_api(env, log_path, host="0.0.0.0")).port
        dashboard = stack.enter_context(
            running_dashboard(url, extra_env={**env, "FACEOFF_DASHBOARD_HOST": "0.0.0.0"})
        )
        yield api, int(dashboard.rsplit(":", 1)[1])


def statuses(host: str, ports: tuple[int, int], forwarded_for: str | None) -> dict[str, int]:
    """The status of every path of the API and the dashboard, asked from ``host`` with the
    header ``X-Forwarded-For: forwarded_for``."""
    headers = {"X-Forwarded-For": forwarded_for} if forwarded_for is not None else {}
    found = {}
    for port, paths in zip(ports, (API_PATHS, DASHBOARD_PATHS), strict=True):
        for path in paths:
            response = httpx.get(f"http://{host}:{port}{path}", headers=headers, timeout=30)
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
    from core.migrate import upgrade

    url = f"sqlite:///{tmp_path / 'faceoff.db'}"
    upgrade(url)
    return url


def test_by_default_a_proxy_on_this_machine_is_believed(url, tmp_path):
    """A reverse proxy on this machine that forwards another machine's request makes it
    remote: refused everywhere, health, metrics, docs and dashboard included."""
    with serving(
        url, Settings.model_fields["TRUSTED_PROXIES"].default, tmp_path / "api.log"
    ) as ports:
        assert_served(statuses("127.0.0.1", ports, None))
        assert_served(statuses("127.0.0.1", ports, "127.0.0.1"))
        assert_served(statuses("127.0.0.1", ports, "::1, 127.0.0.1"))
        assert_refused(statuses("127.0.0.1", ports, "8.8.8.8"))
        assert_refused(statuses("127.0.0.1", ports, "8.8.8.8, 127.0.0.1"))
        assert_refused(statuses("127.0.0.1", ports, "127.0.0.1, 8.8.8.8"))  # left part forged
        assert_refused(statuses("127.0.0.1", ports, "not-an-address"))
        address = other_address()
        if address is not None:  # another machine cannot claim to be this one
            assert_refused(statuses(address, ports, None))
            assert_refused(statuses(address, ports, "127.0.0.1"))


def test_without_trusted_proxies_the_header_is_ignored(url, tmp_path):
    """Nor does uvicorn read it on its own (started with --no-proxy-headers)."""
    with serving(url, "", tmp_path / "api.log") as ports:
        assert_served(statuses("127.0.0.1", ports, "8.8.8.8"))
        address = other_address()
        if address is not None:
            assert_refused(statuses(address, ports, "127.0.0.1"))


def test_a_configured_proxy_is_believed(url, tmp_path):
    address = other_address()
    if address is None:
        pytest.skip("this machine has no non-loopback address to play the proxy")
    with serving(url, f"{address}/32", tmp_path / "api.log") as ports:
        assert_served(statuses(address, ports, "127.0.0.1"))
        assert_refused(statuses(address, ports, "10.1.2.3"))
        assert_refused(statuses(address, ports, None))  # the proxy's own requests are remote
        assert_served(statuses("127.0.0.1", ports, "8.8.8.8"))  # loopback is no proxy now


def test_a_bad_trusted_proxies_setting_stops_the_start():
    from api.main import create_app
    from dashboard.app import create_app as create_dashboard

    settings = Settings(DATABASE_URL="sqlite://", TRUSTED_PROXIES="10.0.0.1, nope")
    for create in (create_app, create_dashboard):
        with pytest.raises(ValueError, match="FACEOFF_TRUSTED_PROXIES: 'nope' is not an IP"):
            create(settings)


def test_every_way_of_starting_the_api_leaves_proxy_headers_to_the_api():
    assert "--no-proxy-headers" in api_command("127.0.0.1", 8000)
    for name in ("docker-compose.yml", "Dockerfile"):
        text = (REPO / name).read_text()
        assert '"api.main:app", "--no-proxy-headers"' in text, name
