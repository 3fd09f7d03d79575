"""machine fairness: what a job ran on, how crowded its host was, and where it is pinned

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-03 09:00:00.000000

``jobs.machine`` (JSON) is the worker's machine record (core.machine: host, CPU model,
physical and logical cores, library versions), written when a worker claims the job;
``concurrency`` and ``concurrency_max`` are the numbers of jobs running on that host at
the claim and at most during the run; ``load_start`` and ``load_end`` the host's 1-minute
load average at the claim and at the end. ``pinned_host`` is the worker host a job was
submitted for (its spec's ``host``), NULL for any host. Jobs run before the upgrade have
no record. Added and dropped with ALTER TABLE, never by batch mode's table copy (see 0003).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = (
    ("machine", sa.JSON()),
    ("concurrency", sa.Integer()),
    ("concurrency_max", sa.Integer()),
    ("load_start", sa.Float()),
    ("load_end", sa.Float()),
    ("pinned_host", sa.String(length=253)),
)


def upgrade() -> None:
    """Upgrade schema."""
    for name, kind in COLUMNS:
        op.add_column("jobs", sa.Column(name, kind, nullable=True))


def downgrade() -> None:
    """Downgrade schema."""
    for name, _ in reversed(COLUMNS):
        op.drop_column("jobs", name)
