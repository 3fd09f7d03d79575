"""how a job's trace was made and what its run cost: ``jobs.trace_mode``, ``jobs.wall_s``

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-02 09:00:00.000000

``trace_mode`` is the solver's (native, callback or refit: solvers.spec.SolverSpec), set
by the worker when it starts the run; ``wall_s`` is the wall time the whole run cost
(evaluation, and every fit of a refit trace, included), set when it ends. Jobs run before the
upgrade get the trace mode their solver had in the catalogue at this revision
(``TRACE_MODES``; a plug-in's jobs keep NULL) and no wall time. Added and dropped with ALTER
TABLE, never by batch mode's table copy (see 0003).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The trace mode of each solver of the catalogue, frozen as of this revision (ef40392): a
# migration reads no live code, so that it means the same whenever it runs.
TRACE_MODES = {
    **dict.fromkeys(("primal_cd", "dual_cd", "agd", "lbfgs", "saga", "spdc", "dgpd"), "native"),
    **dict.fromkeys(
        (
            "sklearn.liblinear",
            "sklearn.lbfgs",
            "sklearn.newton_cholesky",
            "sklearn.sag",
            "sklearn.saga",
            "sklearn.ridge",
            "sklearn.elastic_net",
            "cyanure",
        ),
        "refit",
    ),
    **dict.fromkeys(
        ("lightning.sdca", "lightning.cd", "lightning.saga", "lightning.svrg"), "callback"
    ),
}


def _fill_trace_modes() -> None:
    jobs = sa.table(
        "jobs",
        sa.column("solver", sa.String),
        sa.column("n_points", sa.Integer),
        sa.column("trace_mode", sa.String),
    )
    bind = op.get_bind()
    ran = sa.select(jobs.c.solver).where(jobs.c.n_points > 0).distinct()
    for (solver,) in bind.execute(ran).all():
        if solver in TRACE_MODES:
            bind.execute(
                jobs.update()
                .where(jobs.c.solver == solver, jobs.c.n_points > 0)
                .values(trace_mode=TRACE_MODES[solver])
            )


def upgrade() -> None:
    """Upgrade schema."""
    op.add_column("jobs", sa.Column("trace_mode", sa.String(length=16), nullable=True))
    op.add_column("jobs", sa.Column("wall_s", sa.Float(), nullable=True))
    _fill_trace_modes()


def downgrade() -> None:
    """Downgrade schema."""
    op.drop_column("jobs", "wall_s")
    op.drop_column("jobs", "trace_mode")
