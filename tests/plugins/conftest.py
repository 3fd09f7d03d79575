"""The fixtures the plug-in tests share with the service and dashboard tests."""

from tests.dashboard.conftest import browser, page  # noqa: F401
from tests.service.conftest import redis_url, settings_for, sqlite_url  # noqa: F401
