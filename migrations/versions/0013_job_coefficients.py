"""the final iterate x of each job: ``job_coefficients``

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-05 08:00:00.000000

``GET /jobs/{id}/coefficients`` returns the final iterate x of a finished job. The worker
receives it from the run with its end and writes it in the transaction that ends the job:
one row per job, x as float64 bytes (d·K·8 of them) with its shape, dtype and, for a
K-class job, its class values. Jobs that ended before this revision have none.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0013"
down_revision: str | Sequence[str] | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table(
        "job_coefficients",
        sa.Column(
            "job_id",
            sa.Integer(),
            sa.ForeignKey("jobs.id", ondelete="CASCADE"),
            primary_key=True,
            nullable=False,
        ),
        sa.Column("shape", sa.JSON(), nullable=False),
        sa.Column("dtype", sa.String(length=16), nullable=False),
        sa.Column("classes", sa.JSON(), nullable=True),
        sa.Column("data", sa.LargeBinary(), nullable=False),
    )


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_table("job_coefficients")
