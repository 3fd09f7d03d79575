"""Shared fixtures: one headless Chromium for the session (Debian's /usr/bin/chromium
driven by Playwright), those of tests/backends.py (real PostgreSQL and Redis, fresh
databases, settings), and the real LIBSVM files of tests/datasets.py (mirror, cache or
download; one summary line for those not at hand). Browser tests skip locally when Chromium
or Playwright is missing and fail when ``CI`` is set, so CI can never pass without them.

Numba's cache folder is set when the session starts, before any test module imports a
kernel; the processes the tests start inherit it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from faceoff.solvers.numba_cache import configure_numba_cache

pytest_plugins = (
    "tests.backends",  # PostgreSQL, Redis, fresh databases, settings
    "tests.datasets",  # real LIBSVM files: mirror, cache or download, else one summary line
)

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = Path(os.environ.get("FACEOFF_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def warmup_skip() -> str:
    """The solvers the suite's workers (they inherit this environment) do not warm up at
    their start: the peers. Their imports and first calls took 38 of a worker's 41 s of
    warm-up (skglm compiles its kernels anew in every process: about a minute on 2 busy
    cores), and ~30 workers start in a run of the suite; a test that runs a peer's job pays
    its warm-up in that job, before its clock and within the job's set-up allowance.
    Our own solvers load from Numba's cache in ~2 s: every worker warms them up."""
    from faceoff.solvers.catalogue import catalogue

    return ",".join(name for name, spec in catalogue().items() if spec.requires is not None)


def pytest_configure(config: pytest.Config) -> None:
    configure_numba_cache()
    os.environ.setdefault("FACEOFF_WARMUP_SKIP", warmup_skip())


def _require_browser() -> None:
    problem = None
    if not CHROMIUM.exists():
        problem = f"Chromium not found at {CHROMIUM} (Debian package chromium)"
    else:
        try:  # an optional dependency: only the browser tests need it
            import playwright.sync_api  # noqa: F401
        except ImportError:
            problem = "playwright is not installed (pip install playwright)"
    if problem is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"{problem}; CI is set: the browser tests must run")
    pytest.skip(problem)


@pytest.fixture(scope="session")
def browser():
    """Headless Debian Chromium, shared by the session's tests."""
    _require_browser()
    from playwright.sync_api import sync_playwright  # optional: _require_browser checked it

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    """A fresh 1400×900 page; closed after the test."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    yield page
    context.close()
