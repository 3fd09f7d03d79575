"""reference optima keyed by the content of the data; public dataset names reserved

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-28 10:00:00.000000

``jobs.data_hash`` is the digest of the data a job solves on, set by the worker. The
references recorded before were keyed by the dataset's *name*, so one may have been
certified on another matrix registered under that name: they are deleted, and the next job
that succeeds on each objective records its P* again, keyed by content. A shared dataset
registered under a public dataset's name with another source is renamed ``NAME.taken-ID``,
so that the name means the public data again (its jobs keep it: they refer to its id).
The column is added with ALTER TABLE (no batch table copy, which on SQLite would
cascade-delete the trace points of the jobs).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _free_public_names() -> None:
    from faceoff.core.datasets import public_source

    datasets = sa.table(
        "datasets", sa.column("id", sa.Integer), sa.column("name"), sa.column("source", sa.JSON)
    )
    bind = op.get_bind()
    for dataset_id, name, source in bind.execute(
        sa.select(datasets.c.id, datasets.c.name, datasets.c.source)
    ):
        public = public_source(name)
        if public is not None and source != public:
            bind.execute(
                datasets.update()
                .where(datasets.c.id == dataset_id)
                .values(name=f"{name}.taken-{dataset_id}")
            )


def upgrade() -> None:
    """Upgrade schema."""
    op.add_column("jobs", sa.Column("data_hash", sa.String(length=64), nullable=True))
    op.execute('DELETE FROM "references"')
    _free_public_names()


def downgrade() -> None:
    """Downgrade schema (the content-keyed references are deleted: their keys mean nothing
    to the name-keyed schema; renamed datasets keep their new names)."""
    op.execute('DELETE FROM "references"')
    op.drop_column("jobs", "data_hash")
