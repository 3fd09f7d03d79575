"""The fixtures the plug-in tests share with the service tests."""

from tests.service.conftest import postgres_url, redis_url, settings_for, sqlite_url  # noqa: F401
