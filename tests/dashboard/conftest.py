"""Fixtures of the dashboard tests: a Dash app per session and the dashboard as a
subprocess (the headless Chromium ``page`` is in tests/conftest.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from faceoff.cli.up import free_port
from tests.service.workers import stop_process

REPO = Path(__file__).resolve().parents[2]


@contextmanager
def running_dashboard(
    url: str, timeout: float = 60.0, extra_env: dict[str, str] | None = None
) -> Iterator[str]:
    """``python -m faceoff.dashboard`` on a free port for the database ``url`` (and ``extra_env``);
    yields its base URL."""
    port = free_port()
    env = {
        **os.environ,
        "FACEOFF_DATABASE_URL": url,
        "FACEOFF_DASHBOARD_HOST": "127.0.0.1",
        "FACEOFF_DASHBOARD_PORT": str(port),
        **(extra_env or {}),
    }
    log = tempfile.TemporaryFile()  # a pipe nobody reads would block the dashboard when full
    process = subprocess.Popen(
        [sys.executable, "-m", "faceoff.dashboard"], cwd=REPO, env=env, stdout=log, stderr=log
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                log.seek(0)
                output = log.read().decode(errors="replace")
                raise RuntimeError(f"the dashboard exited early:\n{output}")
            try:
                with urllib.request.urlopen(f"{base}/_dash-layout", timeout=2):
                    break
            except urllib.error.HTTPError:  # answering (401 before a login)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the dashboard did not answer at {base}") from None
                time.sleep(0.2)
        yield base
    finally:
        stop_process(process)
        log.close()


def point_count_js(graph_id: str, trace: int = 0) -> str:
    """JavaScript: the number of points of a trace of a dcc.Graph, 0 before it is drawn.
    (``gd.data`` keeps Plotly's typed-array encoding {dtype, bdata}; ``_fullData`` is decoded.)
    """
    plot = f"document.querySelector('#{graph_id} .js-plotly-plot')"
    return (
        f"(() => {{ const gd = {plot}; const t = gd && gd._fullData && gd._fullData[{trace}];"
        " return t ? t.x.length : 0; })()"
    )


@pytest.fixture(scope="session")
def dash_app():
    """One Dash app for the session (Dash keeps page callbacks process-wide); tests point
    it at their database with ``use_database``."""
    from faceoff.core.settings import Settings
    from faceoff.dashboard.app import create_app

    return create_app(Settings(DATABASE_URL="sqlite://"))


@pytest.fixture
def client(dash_app, tmp_path):
    """A Flask test client of the dashboard; ``faceoff.client.use(url)`` selects the database."""
    from faceoff.dashboard.components import DATABASE_URL_KEY, UPLOAD_DIR_KEY

    test_client = dash_app.server.test_client()
    dash_app.server.config[UPLOAD_DIR_KEY] = str(tmp_path / "uploads")

    def use(url: str) -> None:
        dash_app.server.config[DATABASE_URL_KEY] = url

    test_client.use = use
    return test_client
