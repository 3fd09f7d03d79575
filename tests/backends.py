"""Real PostgreSQL, real Redis, fresh databases: the fixtures of every test that needs them
(registered for the whole suite by ``pytest_plugins`` in tests/conftest.py) and the helpers
behind them.

Locally a test that needs an unreachable PostgreSQL or Redis is skipped; with ``CI`` set it
fails, so CI can never pass without them.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from faceoff.core.migrate import upgrade
from faceoff.core.settings import Settings

PG_HOST = os.environ.get("FACEOFF_TEST_PG_HOST", "127.0.0.1")
PG_PORT = int(os.environ.get("FACEOFF_TEST_PG_PORT", "5432"))
PG_ADMIN_URL = f"postgresql+psycopg://postgres@{PG_HOST}:{PG_PORT}/test"
REDIS_HOST = os.environ.get("FACEOFF_TEST_REDIS_HOST", "127.0.0.1")
REDIS_PORT = int(os.environ.get("FACEOFF_TEST_REDIS_PORT", "6379"))
REDIS_DB = 15  # the tests' own Redis database; queues are unique per test as well
# TestClient's client address: one on this machine, which the API serves with authentication
# off (it answers loopback clients only then)
LOCAL = ("127.0.0.1", 50000)


def _reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=2):
            return True
    except OSError:
        return False


def require(name: str, host: str, port: int) -> None:
    """Skip locally, fail in CI, when a real service is not reachable."""
    if _reachable(host, port):
        return
    message = f"{name} is not reachable at {host}:{port}"
    if os.environ.get("CI"):
        pytest.fail(f"{message} (CI is set: service tests must run)")
    pytest.skip(message)


def create_pg_database() -> str:
    """A new, empty PostgreSQL database; returns its SQLAlchemy URL."""
    import psycopg

    name = f"faceoff_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(
        f"host={PG_HOST} port={PG_PORT} user=postgres dbname=test", autocommit=True
    ) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"postgresql+psycopg://postgres@{PG_HOST}:{PG_PORT}/{name}"


def drop_pg_database(url: str) -> None:
    import psycopg

    from faceoff.core.db import engine_for

    engine_for(url).dispose()
    name = url.rsplit("/", 1)[1]
    with psycopg.connect(
        f"host={PG_HOST} port={PG_PORT} user=postgres dbname=test", autocommit=True
    ) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _migrated_pg_database() -> Iterator[str]:
    require("PostgreSQL", PG_HOST, PG_PORT)
    url = create_pg_database()
    try:
        upgrade(url)
        yield url
    finally:
        drop_pg_database(url)


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A fresh, migrated PostgreSQL database, dropped afterwards."""
    yield from _migrated_pg_database()


@pytest.fixture(scope="module")
def module_postgres_url() -> Iterator[str]:
    """A fresh, migrated PostgreSQL database shared by a module's tests (a service they
    share starts once: a worker's warm-up takes 20–60 s), dropped afterwards."""
    yield from _migrated_pg_database()


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """A fresh, migrated SQLite database file."""
    url = f"sqlite:///{tmp_path / 'faceoff.db'}"
    upgrade(url)
    return url


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request) -> str:
    """Each database backend in turn."""
    return request.getfixturevalue(f"{request.param}_url")


@pytest.fixture(scope="session")
def redis_url() -> str:
    require("Redis", REDIS_HOST, REDIS_PORT)
    return f"redis://{REDIS_HOST}:{REDIS_PORT}/{REDIS_DB}"


def _settings_maker(home: Path):
    def make(database_url: str, broker_url: str = "redis://127.0.0.1:6379/15", **extra):
        return Settings(
            HOME=home,
            DATABASE_URL=database_url,
            BROKER_URL=broker_url,
            QUEUE=f"faceoff-test-{uuid.uuid4().hex[:8]}",
            **extra,
        )

    return make


@pytest.fixture
def settings_for(tmp_path: Path):
    """``settings_for(database_url, broker_url)`` → Settings with a unique queue and home."""
    return _settings_maker(tmp_path / "home")


@pytest.fixture(scope="module")
def module_settings_for(tmp_path_factory: pytest.TempPathFactory):
    """:func:`settings_for` for a module's shared service."""
    return _settings_maker(tmp_path_factory.mktemp("module") / "home")
