"""SQLAlchemy 2 models. The schema is made only by the Alembic migrations in ``migrations/``."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

# job status
QUEUED = "queued"
RUNNING = "running"
SUCCEEDED = "succeeded"
FAILED = "failed"
CANCELLED = "cancelled"
STATUSES = (QUEUED, RUNNING, SUCCEEDED, FAILED, CANCELLED)
TERMINAL = (SUCCEEDED, FAILED, CANCELLED)


def utcnow() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    type_annotation_map = {dict[str, Any]: JSON, datetime: DateTime(timezone=True)}


class Team(Base):
    """The owner of API tokens, jobs, sweeps and uploaded datasets (see core.auth)."""

    __tablename__ = "teams"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class ApiToken(Base):
    """An API token of a team: only the sha256 of its secret is stored."""

    __tablename__ = "api_tokens"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id"), index=True)
    name: Mapped[str | None] = mapped_column(String(200))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    revoked_at: Mapped[datetime | None]
    last_used_at: Mapped[datetime | None]

    team: Mapped[Team] = relationship()


SHARED = text("team_id IS NULL")
PRIVATE = text("team_id IS NOT NULL")


class Dataset(Base):
    """A registered dataset: a public registry name, an uploaded svmlight file, a synthetic
    generator, a dataset shipped with scikit-learn or random features of another dataset
    (``source`` says which and how). ``team_id`` is the team of a private upload (and of
    features made from one), NULL for a shared dataset. ``labels`` is what its labels are
    (data.labels.summarize: classes and their counts, or targets), NULL until known. A
    name is unique among the shared datasets and among each team's uploads (two partial
    unique indexes), so a team's private name never stops another team from using it
    (core.datasets)."""

    __tablename__ = "datasets"
    __table_args__ = (
        Index(
            "uq_datasets_shared_name",
            "name",
            unique=True,
            sqlite_where=SHARED,
            postgresql_where=SHARED,
        ),
        Index(
            "uq_datasets_team_name",
            "team_id",
            "name",
            unique=True,
            sqlite_where=PRIVATE,
            postgresql_where=PRIVATE,
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    team_id: Mapped[int | None] = mapped_column(ForeignKey("teams.id"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    source: Mapped[dict[str, Any]]
    n_samples: Mapped[int | None]
    n_features: Mapped[int | None]
    nnz: Mapped[int | None] = mapped_column(BigInteger)
    sha256: Mapped[str | None] = mapped_column(String(64))
    stats: Mapped[dict[str, Any] | None]
    labels: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Sweep(Base):
    """A cartesian product of job specifications, submitted at once."""

    __tablename__ = "sweeps"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    team_id: Mapped[int | None] = mapped_column(ForeignKey("teams.id"), index=True)
    name: Mapped[str | None] = mapped_column(String(200))
    spec: Mapped[dict[str, Any]]
    n_jobs: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # {axis: repeated values dropped} (core.specs.dedupe_sweep); NULL before migration 0008
    duplicates_dropped: Mapped[dict[str, Any] | None]

    jobs: Mapped[list[Job]] = relationship(back_populates="sweep")


class Job(Base):
    """One solver run. ``spec`` is the canonical job specification (see core.specs).
    ``team_id``: the owning team (NULL when submitted with authentication off).

    ``data_hash`` is the digest of the data the run solves on (core.references), set by the
    worker when it builds the problem. ``objective_hash`` is, until then, the hash of the
    objective as the spec names it (core.specs.objective_hash); from then on, the hash of
    its content (core.references.content_objective_hash), the key of its reference P*.

    ``trace_mode`` says how the trace is made (``native``, ``callback`` or ``refit``:
    solvers.spec.SolverSpec), set by the worker when the run starts; ``wall_s`` is the
    wall time the whole run cost (evaluation and every refit included), set when it ends.

    ``machine`` is the record of the worker's machine (core.machine), ``concurrency`` and
    ``concurrency_max`` the jobs running on its host at the claim and at most during the
    run, ``load_start``/``load_end`` the host's 1-minute load average; ``pinned_host`` the
    worker host the job must run on (its spec's ``host``; None: any)."""

    __tablename__ = "jobs"
    __table_args__ = (
        Index("ix_jobs_status", "status"),
        Index("ix_jobs_spec_hash", "spec_hash"),
        Index("ix_jobs_sweep_id", "sweep_id"),
        Index("ix_jobs_team_id_id", "team_id", "id"),
        Index("ix_jobs_dataset_id", "dataset_id"),
        Index("ix_jobs_solver", "solver"),
        # a team's listing by each filter, newest first, and its count (migration 0012)
        *(
            Index(f"ix_jobs_team_id_{column}_id", "team_id", column, "id")
            for column in ("status", "solver", "loss", "dataset_id", "sweep_id")
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    sweep_id: Mapped[int | None] = mapped_column(ForeignKey("sweeps.id", ondelete="SET NULL"))
    team_id: Mapped[int | None] = mapped_column(ForeignKey("teams.id"), index=True)
    dataset_id: Mapped[int] = mapped_column(ForeignKey("datasets.id"))
    spec: Mapped[dict[str, Any]]
    spec_hash: Mapped[str] = mapped_column(String(64))
    objective_hash: Mapped[str] = mapped_column(String(64), index=True)
    data_hash: Mapped[str | None] = mapped_column(String(64))
    solver: Mapped[str] = mapped_column(String(64))
    loss: Mapped[str] = mapped_column(String(32))
    status: Mapped[str] = mapped_column(String(16), default=QUEUED)
    stop_reason: Mapped[str | None] = mapped_column(String(32))
    error: Mapped[str | None] = mapped_column(Text)
    cancel_requested: Mapped[bool] = mapped_column(Boolean, default=False)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    worker_host: Mapped[str | None] = mapped_column(String(255))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    started_at: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]
    heartbeat_at: Mapped[datetime | None]  # last sign of life of its run (worker.reaper)
    # when its message was last sent to the broker, or due to be (worker.reaper)
    dispatched_at: Mapped[datetime | None] = mapped_column(default=utcnow)
    # summary of the last trace point, kept on the job for listing without the trace
    n_points: Mapped[int] = mapped_column(Integer, default=0)
    epoch: Mapped[float | None] = mapped_column(Float)
    time_s: Mapped[float | None] = mapped_column(Float)
    primal: Mapped[float | None] = mapped_column(Float)
    gap: Mapped[float | None] = mapped_column(Float)
    trace_mode: Mapped[str | None] = mapped_column(String(16))
    wall_s: Mapped[float | None] = mapped_column(Float)
    # what the solver's ``auto`` parameters chose ({parameter: value}, solvers.spec.AUTO),
    # copied from the first trace point's extras; NULL: nothing chosen, or no point yet
    auto: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True))
    machine: Mapped[dict[str, Any] | None]
    concurrency: Mapped[int | None] = mapped_column(Integer)
    concurrency_max: Mapped[int | None] = mapped_column(Integer)
    load_start: Mapped[float | None] = mapped_column(Float)
    load_end: Mapped[float | None] = mapped_column(Float)
    pinned_host: Mapped[str | None] = mapped_column(String(253))
    # the pinned host no live worker served when the job was submitted with wait_for_host;
    # cleared when a worker there claims it or starts (core.jobs, worker.reaper)
    waiting_for_host: Mapped[str | None] = mapped_column(String(253))

    sweep: Mapped[Sweep | None] = relationship(back_populates="jobs")
    dataset: Mapped[Dataset] = relationship()

    @property
    def waiting(self) -> str | None:
        """Why the queued job is not running, when known (:func:`waiting_reason`)."""
        return waiting_reason(self.status, self.waiting_for_host)


def waiting_reason(status: str, waiting_for_host: str | None) -> str | None:
    """Why a queued job is not running, when known: ``waiting for host H`` while it is
    pinned to a host no live worker served (and none has taken it since)."""
    if status == QUEUED and waiting_for_host is not None:
        return f"waiting for host {waiting_for_host}"
    return None


class TracePoint(Base):
    """One convergence trace point of a job; (job_id, seq) is unique, so writes are
    idempotent."""

    __tablename__ = "trace_points"

    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"), primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    iteration: Mapped[int] = mapped_column(BigInteger)
    epoch: Mapped[float] = mapped_column(Float)
    time_s: Mapped[float] = mapped_column(Float)
    primal: Mapped[float] = mapped_column(Float)
    dual: Mapped[float] = mapped_column(Float)
    gap: Mapped[float] = mapped_column(Float)
    nnz_x: Mapped[int] = mapped_column(Integer)
    extras: Mapped[dict[str, Any]] = mapped_column(default=dict)


class Reference(Base):
    """The certified optimum P* of one objective, keyed by its content: ``objective_hash``
    is core.references.content_objective_hash of the data's digest (after transforms and
    label mapping), the loss and the weights. ``objective`` describes it; it names the
    dataset only when that dataset is shared with every team."""

    __tablename__ = "references"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    objective_hash: Mapped[str] = mapped_column(String(64), unique=True)
    objective: Mapped[dict[str, Any]]
    primal: Mapped[float] = mapped_column(Float)
    gap: Mapped[float] = mapped_column(Float)
    job_id: Mapped[int | None] = mapped_column(ForeignKey("jobs.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class JobSummary(Base):
    """What the pages need of a job's trace, kept as its points are written
    (core.summaries): ``n_points`` the points summarized (the job's own ``n_points`` when up
    to date), ``p_star`` the reference P* its ``subopt_rel`` rows were computed against
    (NULL: none, so none were); ``pruned`` how its old trace was pruned (core.retention:
    ``thinned`` or ``dropped``; NULL: whole)."""

    __tablename__ = "job_summaries"

    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"), primary_key=True)
    n_points: Mapped[int] = mapped_column(Integer, default=0)
    p_star: Mapped[float | None] = mapped_column(Float)
    pruned: Mapped[str | None] = mapped_column(String(16))


class JobReach(Base):
    """The first trace point of a job at which ``criterion`` (core.analysis.CRITERIA) is
    ≤ 10^-``k`` (core.summaries.EPS_GRID): its ``seq``, iteration, epoch and time. No row:
    not reached (yet)."""

    __tablename__ = "job_reach"

    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"), primary_key=True)
    criterion: Mapped[str] = mapped_column(String(16), primary_key=True)
    k: Mapped[int] = mapped_column(Integer, primary_key=True)
    seq: Mapped[int] = mapped_column(Integer)
    iteration: Mapped[int] = mapped_column(BigInteger)
    epoch: Mapped[float] = mapped_column(Float)
    time_s: Mapped[float] = mapped_column(Float)


class JobCoefficients(Base):
    """The final iterate x of a job (its last trace point's), as the worker received it
    from the run when the job ended: ``data`` the float64 bytes of x in C order, ``shape``
    ``[d]`` or ``[d, K]``, ``dtype`` their NumPy type (``<f8``), ``classes`` the K class
    values of a K-class job in the order of x's columns (NULL for one column). No row: the
    run sent none (it failed or was killed before returning), or retention deleted it."""

    __tablename__ = "job_coefficients"

    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"), primary_key=True)
    shape: Mapped[list[int]] = mapped_column(JSON)
    dtype: Mapped[str] = mapped_column(String(16))
    classes: Mapped[list[float] | None] = mapped_column(JSON(none_as_null=True))
    data: Mapped[bytes] = mapped_column(LargeBinary)
