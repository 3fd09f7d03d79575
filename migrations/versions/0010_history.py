"""trace summaries (first point reaching each ε) and the indexes of a large history

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-27 21:00:00.000000

``job_summaries`` (one row a job: the trace points summarized, the P* the relative
suboptimality was computed against, and how an old trace was pruned: core.retention) and
``job_reach`` (per job, criterion and ε = 10^-k, k = 1 … 12: the first trace point
reaching it) let the pages answer time to ε without
reading traces (core.summaries). The upgrade back-fills both from the stored traces, in
chunks of jobs; the constants and the two criteria are copied here, as Alembic advises, so
this revision does not change when the code does.

Indexes for the listings of a large history: the team's jobs newest first
(``ix_jobs_team_id_id``), jobs by dataset (the foreign key had none) and by solver.
"""

from collections.abc import Sequence

import numpy as np
import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0010"
down_revision: str | Sequence[str] | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

EPS_GRID = {k: float(f"1e-{k}") for k in range(1, 13)}
CHUNK = 500  # jobs back-filled a query
INDEXES = (
    ("ix_jobs_team_id_id", ["team_id", "id"]),
    ("ix_jobs_dataset_id", ["dataset_id"]),
    ("ix_jobs_solver", ["solver"]),
)


def _criteria(primal: np.ndarray, gap: np.ndarray, p_star: float | None) -> dict[str, np.ndarray]:
    """The values of each criterion at the points (core.analysis.measure as of 0010):
    gap/max(1, |P|), and (P − P*)/|P*| when P* is known and not 0."""
    out = {"gap_rel": gap / np.maximum(1.0, np.abs(primal))}
    if p_star is not None and p_star != 0:
        out["subopt_rel"] = (primal - p_star) / abs(p_star)
    return out


def _reach_rows(job_id: int, points: list, p_star: float | None) -> list[dict]:
    """The job_reach rows of one job's trace (rows of seq, iteration, epoch, time_s,
    primal, gap in seq order)."""
    columns = np.array([p[4:] for p in points], dtype=float).T  # primal, gap
    rows = []
    for criterion, values in _criteria(columns[0], columns[1], p_star).items():
        best = np.fmin.accumulate(np.where(np.isnan(values), np.inf, values))
        for k, eps in EPS_GRID.items():
            i = int(np.searchsorted(-best, -eps, side="left"))
            if i == len(best):
                break
            seq, iteration, epoch, time_s = points[i][:4]
            rows.append(
                {
                    "job_id": job_id,
                    "criterion": criterion,
                    "k": k,
                    "seq": seq,
                    "iteration": iteration,
                    "epoch": epoch,
                    "time_s": time_s,
                }
            )
    return rows


def _backfill(summaries: sa.Table, reach: sa.Table) -> None:
    bind = op.get_bind()
    last = 0
    while True:
        jobs = bind.execute(
            sa.text(
                'SELECT j.id, r.primal FROM jobs j LEFT JOIN "references" r '
                "ON r.objective_hash = j.objective_hash "
                "WHERE j.id > :last AND j.n_points > 0 ORDER BY j.id LIMIT :chunk"
            ),
            {"last": last, "chunk": CHUNK},
        ).all()
        if not jobs:
            return
        last = jobs[-1][0]
        traces: dict[int, list] = {job_id: [] for job_id, _ in jobs}
        points = bind.execute(
            sa.text(
                "SELECT job_id, seq, iteration, epoch, time_s, primal, gap FROM trace_points "
                "WHERE job_id >= :first AND job_id <= :last ORDER BY job_id, seq"
            ),
            {"first": jobs[0][0], "last": last},
        )
        for job_id, *point in points:
            if job_id in traces:
                traces[job_id].append(point)
        rows, covered = [], []
        for job_id, p_star in jobs:
            trace = traces[job_id]
            n = trace[-1][0] + 1 if trace else 0
            covered.append({"job_id": job_id, "n_points": n, "p_star": p_star})
            if trace:
                rows += _reach_rows(job_id, trace, p_star)
        bind.execute(summaries.insert(), covered)
        if rows:
            bind.execute(reach.insert(), rows)


def upgrade() -> None:
    """Upgrade schema."""
    summaries = op.create_table(
        "job_summaries",
        sa.Column(
            "job_id", sa.Integer(), sa.ForeignKey("jobs.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("n_points", sa.Integer(), nullable=False),
        sa.Column("p_star", sa.Float(), nullable=True),
        sa.Column("pruned", sa.String(length=16), nullable=True),
        sa.PrimaryKeyConstraint("job_id"),
    )
    reach = op.create_table(
        "job_reach",
        sa.Column(
            "job_id", sa.Integer(), sa.ForeignKey("jobs.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("criterion", sa.String(length=16), nullable=False),
        sa.Column("k", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("iteration", sa.BigInteger(), nullable=False),
        sa.Column("epoch", sa.Float(), nullable=False),
        sa.Column("time_s", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("job_id", "criterion", "k"),
    )
    for name, columns in INDEXES:
        op.create_index(name, "jobs", columns)
    assert summaries is not None and reach is not None
    _backfill(summaries, reach)


def downgrade() -> None:
    """Downgrade schema."""
    for name, _ in INDEXES:
        op.drop_index(name, table_name="jobs")
    op.drop_table("job_reach")
    op.drop_table("job_summaries")
