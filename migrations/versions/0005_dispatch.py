"""job dispatch: when a queued job's message was last sent to the broker

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-26 09:00:00.000000

Added and dropped with ALTER TABLE, never by batch mode's table copy (see 0003). Jobs queued
before the upgrade have no time (NULL) and count as overdue.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.add_column("jobs", sa.Column("dispatched_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_column("jobs", "dispatched_at")
