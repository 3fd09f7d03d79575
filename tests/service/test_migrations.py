"""The migrations are the schema: on SQLite and PostgreSQL they build exactly the models."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect

from faceoff.core.db import make_engine
from faceoff.core.models import Base


def test_migrations_match_models(database_url):
    engine = make_engine(database_url)
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
        tables = set(inspect(conn).get_table_names())
    engine.dispose()
    assert diff == []
    assert set(Base.metadata.tables) <= tables


def test_upgrade_is_idempotent(sqlite_url):
    from faceoff.core.migrate import upgrade

    upgrade(sqlite_url)  # already at head: nothing to do, no error
