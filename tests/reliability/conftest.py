"""Reliability and security tests: real PostgreSQL, Redis and worker processes (fixtures of
tests/service)."""

from tests.service.conftest import (  # noqa: F401
    database_url,
    postgres_url,
    redis_url,
    settings_for,
    sqlite_url,
)
