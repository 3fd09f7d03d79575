"""what a dataset's labels are: ``datasets.labels``

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-04 09:00:00.000000

``datasets.labels`` (JSON) records the labels of a dataset as data.labels.summarize reads
them: ``{"kind": "classes", "n_classes": K, "counts": {label: samples} | null}`` for
integer labels, ``{"kind": "targets", "example": "0.5"}`` for anything else. It is set when
a dataset is registered where that is known without reading the data (an upload's parsed
labels, a generator's, a registry entry's task and class count, a scikit-learn set's), and
when the data is first read otherwise; the API refuses a K-class job whose dataset's labels
cannot make one. Datasets registered before the upgrade have NULL until their data is read
(or, for those whose source says, until their next use). Added and dropped with ALTER TABLE,
never by batch mode's table copy (see 0003).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0008"
down_revision: str | Sequence[str] | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.add_column("datasets", sa.Column("labels", sa.JSON(), nullable=True))


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_column("datasets", "labels")
