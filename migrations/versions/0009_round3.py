"""dataset names per team; duplicates dropped from a sweep; jobs waiting for a host

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-10 09:00:00.000000

``datasets.name`` was unique over every team, so registering a name answered 409 for another
team's private upload, telling that it exists. A name is now unique among the shared
datasets (``team_id`` NULL: partial unique index ``uq_datasets_shared_name``) and among each
team's uploads (``uq_datasets_team_name`` on (team_id, name) where team_id is set).

``jobs.waiting_for_host`` is the pinned host no live worker served when the job was
submitted with ``wait_for_host`` (NULL otherwise, and for jobs from before).
``sweeps.duplicates_dropped`` (JSON) records how many repeated values a sweep's axes had
(core.specs.dedupe_sweep); NULL for sweeps from before.

On PostgreSQL the old constraint is dropped. SQLite cannot drop a table's UNIQUE
constraint, so the table is rebuilt inside the migration's transaction: its rows are copied
aside, the table dropped and created again, and the rows copied back, with the foreign keys
of ``jobs`` deferred (``PRAGMA defer_foreign_keys``, in a SAVEPOINT) until the rows are
back. The table is never renamed: renaming a parent table rewrites its children's
REFERENCES clauses.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0009"
down_revision: str | Sequence[str] | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = "id, name, source, n_samples, n_features, nnz, sha256, stats, created_at, team_id, labels"
SHARED = sa.text("team_id IS NULL")
PRIVATE = sa.text("team_id IS NOT NULL")


def _datasets_table(name_unique: bool) -> None:
    """CREATE TABLE datasets as the models have it (0001, 0003 and 0008), with or without the
    UNIQUE constraint on the name."""
    op.create_table(
        "datasets",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("source", sa.JSON(), nullable=False),
        sa.Column("n_samples", sa.Integer(), nullable=True),
        sa.Column("n_features", sa.Integer(), nullable=True),
        sa.Column("nnz", sa.BigInteger(), nullable=True),
        sa.Column("sha256", sa.String(length=64), nullable=True),
        sa.Column("stats", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("team_id", sa.Integer(), sa.ForeignKey("teams.id"), nullable=True),
        sa.Column("labels", sa.JSON(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        *([sa.UniqueConstraint("name")] if name_unique else []),
    )
    op.create_index("ix_datasets_team_id", "datasets", ["team_id"])


def _rebuild_sqlite(name_unique: bool) -> None:
    # one transaction (a SAVEPOINT begins one where none is open, and nests in one that is),
    # within which the foreign keys of jobs are checked only once the rows are back
    op.execute("SAVEPOINT rebuild_datasets")
    op.execute("PRAGMA defer_foreign_keys = ON")
    op.execute(f"CREATE TABLE _datasets_0009 AS SELECT {COLUMNS} FROM datasets")
    op.drop_index("ix_datasets_team_id", table_name="datasets")
    op.drop_table("datasets")
    _datasets_table(name_unique)
    op.execute(f"INSERT INTO datasets ({COLUMNS}) SELECT {COLUMNS} FROM _datasets_0009")
    op.execute("DROP TABLE _datasets_0009")
    op.execute("RELEASE rebuild_datasets")


def upgrade() -> None:
    """Upgrade schema."""
    op.add_column("sweeps", sa.Column("duplicates_dropped", sa.JSON(), nullable=True))
    op.add_column("jobs", sa.Column("waiting_for_host", sa.String(length=253), nullable=True))
    if op.get_bind().dialect.name == "sqlite":
        _rebuild_sqlite(name_unique=False)
    else:
        op.drop_constraint("datasets_name_key", "datasets", type_="unique")
    op.create_index(
        "uq_datasets_shared_name",
        "datasets",
        ["name"],
        unique=True,
        sqlite_where=SHARED,
        postgresql_where=SHARED,
    )
    op.create_index(
        "uq_datasets_team_name",
        "datasets",
        ["team_id", "name"],
        unique=True,
        sqlite_where=PRIVATE,
        postgresql_where=PRIVATE,
    )


def downgrade() -> None:
    """Downgrade schema (fails if two teams have since registered the same name)."""
    op.drop_index("uq_datasets_team_name", table_name="datasets")
    op.drop_index("uq_datasets_shared_name", table_name="datasets")
    if op.get_bind().dialect.name == "sqlite":
        _rebuild_sqlite(name_unique=True)
    else:
        op.create_unique_constraint("datasets_name_key", "datasets", ["name"])
    op.drop_column("jobs", "waiting_for_host")
    op.drop_column("sweeps", "duplicates_dropped")
