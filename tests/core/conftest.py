"""The service layer against real databases: every backend in turn (tests.service.conftest:
PostgreSQL is skipped locally when unreachable and fails with ``CI`` set)."""

from tests.service.conftest import (  # noqa: F401
    database_url,
    postgres_url,
    settings_for,
    sqlite_url,
)
