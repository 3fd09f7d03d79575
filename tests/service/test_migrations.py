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


def test_upgrade_reaches_head_and_is_idempotent(sqlite_url):
    """The fixture's database is at the newest revision; upgrading again changes nothing."""
    from alembic.script import ScriptDirectory

    from faceoff.core.migrate import alembic_config, upgrade

    head = ScriptDirectory.from_config(alembic_config(sqlite_url)).get_current_head()
    engine = make_engine(sqlite_url)

    def state() -> tuple[str | None, dict[str, list[str]]]:
        with engine.connect() as conn:
            revision = MigrationContext.configure(conn).get_current_revision()
            schema = inspect(conn)
            columns = {
                t: [c["name"] for c in schema.get_columns(t)] for t in schema.get_table_names()
            }
        return revision, columns

    before = state()
    upgrade(sqlite_url)
    assert before[0] == head and state() == before
    engine.dispose()
