"""The interactive API docs work offline: Swagger UI (/api/v1/docs) and ReDoc
(/api/v1/redoc) in headless Chromium with every request to another host blocked, so any
script or style still loaded from a CDN would leave the page blank. (ReDoc's "API docs by
Redocly" footer image is built into its bundle and is the one request that stays blocked.)"""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest

from tests.reliability.servers import api_env, running_api


@pytest.fixture
def api(settings_for, sqlite_url, tmp_path):
    settings = settings_for(sqlite_url)
    with running_api(api_env(settings), tmp_path / "api.log") as process:
        yield process


def offline(page, blocked: list[str]) -> None:
    """Abort every request that leaves 127.0.0.1; note those of anything but images."""

    def route(request_route):
        request = request_route.request
        if urlsplit(request.url).hostname in ("127.0.0.1", None):
            request_route.continue_()
            return
        if request.resource_type != "image":
            blocked.append(f"{request.resource_type} {request.url}")
        request_route.abort()

    page.route("**/*", route)


def test_swagger_ui_renders_every_operation_offline(api, page):
    blocked: list[str] = []
    offline(page, blocked)
    page.goto(f"{api.url}/docs")
    page.wait_for_selector(".opblock", timeout=30_000)
    summaries = page.locator(".opblock-summary-path").all_inner_texts()
    assert "/api/v1/jobs" in [s.replace("\u200b", "") for s in summaries]
    assert page.locator(".opblock").count() >= 15
    assert blocked == []


def test_redoc_renders_offline(api, page):
    blocked: list[str] = []
    offline(page, blocked)
    page.goto(f"{api.url}/redoc")
    page.wait_for_selector("h1:has-text('Faceoff')", timeout=30_000)
    assert page.locator("text=create_job").count() + page.locator("text=Create Job").count()
    assert blocked == []
