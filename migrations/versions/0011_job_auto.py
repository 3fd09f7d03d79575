"""what a job's ``auto`` parameters chose: ``jobs.auto``

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-28 01:00:00.000000

``jobs.auto`` (JSON, NULL: nothing chosen, or not run yet) is {parameter: the value the
solver chose} for the parameters it ran at ``auto`` (issue 34; solvers.spec.AUTO), which
the first trace point's extras hold under ``"auto"``; the worker copies it onto the job
with that point, so that listings and legends name the choice without reading a trace
(tests/bench/test_history.py). The upgrade back-fills it from the first point of each
stored trace, in chunks of jobs; the extras key is copied here, as Alembic advises, so
this revision does not change when the code does. Added and dropped with ALTER TABLE,
never by batch mode's table copy (see 0003).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0011"
down_revision: str | Sequence[str] | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

AUTO_EXTRA = "auto"  # solvers.spec.AUTO_EXTRA as of this revision
CHUNK = 1000  # first points read a query


def _backfill() -> None:
    bind = op.get_bind()
    points = sa.table(
        "trace_points",
        sa.column("job_id", sa.Integer),
        sa.column("seq", sa.Integer),
        sa.column("extras", sa.JSON),
    )
    jobs = sa.table("jobs", sa.column("id", sa.Integer), sa.column("auto", sa.JSON))
    last = 0
    while True:
        first_points = bind.execute(
            sa.select(points.c.job_id, points.c.extras)
            .where(points.c.seq == 0, points.c.job_id > last)
            .order_by(points.c.job_id)
            .limit(CHUNK)
        ).all()
        if not first_points:
            return
        last = first_points[-1][0]
        for job_id, extras in first_points:
            chosen = (extras or {}).get(AUTO_EXTRA)
            if chosen:
                bind.execute(jobs.update().where(jobs.c.id == job_id).values(auto=chosen))


def upgrade() -> None:
    """Upgrade schema."""
    op.add_column("jobs", sa.Column("auto", sa.JSON(none_as_null=True), nullable=True))
    _backfill()


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_column("jobs", "auto")
