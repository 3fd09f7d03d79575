"""Bring a database schema to the latest Alembic revision (the only way a schema is made)."""

from __future__ import annotations

import time
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import text

import faceoff.migrations
from faceoff.core.db import make_engine
from faceoff.core.settings import get_settings

MIGRATIONS = Path(faceoff.migrations.__file__).resolve().parent


def alembic_config(database_url: str) -> Config:
    """Alembic's configuration for the migrations shipped in the package (no alembic.ini:
    an installed wheel has none; `alembic` on the command line in the repository reads it)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["database_url"] = database_url
    config.attributes["configure_logger"] = False
    return config


def upgrade(database_url: str, revision: str = "head") -> None:
    """``alembic upgrade head`` on ``database_url``."""
    command.upgrade(alembic_config(database_url), revision)


def wait_for_database(database_url: str, timeout: float = 60.0) -> None:
    """Block until the database accepts connections (a fresh PostgreSQL container needs a
    few seconds); RuntimeError naming the URL after ``timeout`` seconds."""
    engine = make_engine(database_url)
    deadline = time.monotonic() + timeout
    try:
        while True:
            try:
                with engine.connect() as conn:
                    conn.execute(text("SELECT 1"))
                return
            except Exception as err:  # noqa: BLE001 — any connection error means "not yet"
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"database {engine.url.render_as_string(hide_password=True)} is not "
                        f"reachable after {timeout:g} s: {err}"
                    ) from None
                time.sleep(1.0)
    finally:
        engine.dispose()


def main() -> None:
    """``python -m faceoff.core.migrate``: wait for the database, then upgrade it to head."""
    url = get_settings().database_url
    wait_for_database(url)
    upgrade(url)
    print("database schema is up to date")


if __name__ == "__main__":
    main()
