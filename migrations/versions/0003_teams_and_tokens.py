"""teams and API tokens; jobs, sweeps and datasets owned by a team

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-27 10:00:00.000000

A NULL ``team_id`` is a shared dataset, or a job or sweep submitted with authentication off.
The columns are added and dropped with ALTER TABLE, never by batch mode's table copy: on
SQLite, dropping the old ``jobs`` table would cascade-delete its trace points.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OWNED = ("datasets", "sweeps", "jobs")


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table(
        "teams",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
    )
    op.create_table(
        "api_tokens",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("team_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=True),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["team_id"], ["teams.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("token_hash"),
    )
    op.create_index("ix_api_tokens_team_id", "api_tokens", ["team_id"])
    sqlite = op.get_bind().dialect.name == "sqlite"
    for table in OWNED:
        if sqlite:  # SQLite cannot add a constraint to a table, only a column with one
            op.execute(f"ALTER TABLE {table} ADD COLUMN team_id INTEGER REFERENCES teams (id)")
        else:
            op.add_column(table, sa.Column("team_id", sa.Integer(), nullable=True))
            op.create_foreign_key(None, table, "teams", ["team_id"], ["id"])
        op.create_index(f"ix_{table}_team_id", table, ["team_id"])


def downgrade() -> None:
    """Downgrade schema."""
    for table in reversed(OWNED):
        op.drop_index(f"ix_{table}_team_id", table_name=table)
        op.drop_column(table, "team_id")
    op.drop_index("ix_api_tokens_team_id", table_name="api_tokens")
    op.drop_table("api_tokens")
    op.drop_table("teams")
