"""a team's job listings by each filter: ``(team_id, <filter>, id)`` indexes on ``jobs``

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-28 08:00:00.000000

``GET /jobs`` (and the dashboard's runs page) lists a team's jobs newest first, filtered by
status, solver, loss, dataset or sweep, a page at an offset, and counts the matches. With
only ``(team_id, id)`` PostgreSQL read every job row of the team to test the filter: at
100,000 jobs (21,000 a team) a ``loss`` filter at offset 5,000 read 3,400 heap pages of wide
rows, 45 ms (bench/results/history.md). One index per filter, ``(team_id, <filter>, id)``,
answers the page and the count from the index alone.
"""

from collections.abc import Sequence

from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0012"
down_revision: str | Sequence[str] | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FILTERS = ("status", "solver", "loss", "dataset_id", "sweep_id")


def upgrade() -> None:
    """Upgrade schema."""
    for column in FILTERS:
        op.create_index(f"ix_jobs_team_id_{column}_id", "jobs", ["team_id", column, "id"])


def downgrade() -> None:
    """Downgrade schema."""
    for column in FILTERS:
        op.drop_index(f"ix_jobs_team_id_{column}_id", table_name="jobs")
