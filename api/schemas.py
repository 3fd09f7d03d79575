"""Request and response bodies of the API (kept apart from the ORM models of core.models)."""

from __future__ import annotations

import math
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, computed_field, model_validator

from faceoff.core.datasets import NAME_PATTERN, availability
from faceoff.core.specs import (
    JobSpec,
    JsonInt,
    Loss,
    Multiclass,
    Normalize,
    ObjectiveSpec,
    Penalty,
    SweepSpec,
    Text,
)


def _finite_or_none(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


# a float read from the database: NaN and ±inf (a diverging run) are reported as null
Measured = Annotated[float | None, BeforeValidator(_finite_or_none)]


class _Public(BaseModel):
    model_config = ConfigDict(from_attributes=True)


class _Create(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ---------------------------------------------------------------- jobs


WAIT_FOR_HOST = (
    "accept a host no live worker serves (GET /health: worker_hosts): the job waits queued "
    "until a worker starts there, and says so (waiting); without it such a host is a 422"
)


class JobCreate(JobSpec):
    """A job specification; ``force`` runs it even if an identical job exists."""

    force: bool = Field(False, description="create a new job even if an identical one exists")
    wait_for_host: bool = Field(False, description=WAIT_FOR_HOST)

    def spec(self) -> JobSpec:
        return JobSpec(**self.model_dump(exclude={"force", "wait_for_host"}))


class JobPublic(_Public):
    """A job, with the summary of its last trace point."""

    id: int
    sweep_id: int | None
    dataset_id: int
    spec: dict[str, Any]
    spec_hash: str
    objective_hash: str = Field(
        description="the objective's hash: as named in the spec until a worker runs the job, "
        "then keyed by the data's content (the key of its reference P*)"
    )
    data_hash: str | None = Field(
        None, description="sha256 of the data after transforms, once a worker has run the job"
    )
    solver: str
    loss: Loss
    status: str
    stop_reason: str | None
    error: str | None
    cancel_requested: bool
    attempts: int
    worker_host: str | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    n_points: int
    epoch: Measured
    time_s: Measured
    primal: Measured
    gap: Measured
    trace_mode: str | None = Field(
        None,
        description="how its trace is made, set when a worker starts it: native, callback or "
        "refit (one fit from scratch per point; a point's time_s is that fit's own)",
    )
    wall_s: Measured = Field(
        None,
        description="wall time the whole run cost, evaluation and every refit included "
        "(seconds), set when it ends; null before, or when the run failed",
    )
    auto: dict[str, Any] | None = Field(
        None,
        description="what the solver chose for the parameters it ran at auto (e.g. dual_cd's "
        '{"sampling": "permutation", "accelerate": "catalyst", "shrinking": "off"}), set '
        "with the first trace point; null: every parameter given, or no point yet",
    )
    machine: dict[str, Any] | None = Field(
        None,
        description="what the job ran on, recorded when a worker claims it: host, cpu_model, "
        "physical_cores, logical_cores, platform, python, and versions of faceoff-bench, numpy, "
        "scipy, numba and the peer libraries (null: not installed)",
    )
    concurrency: int | None = Field(
        None, description="jobs running on the job's host when it started, itself included"
    )
    concurrency_max: int | None = Field(
        None,
        description="most jobs seen running on its host during the run (at its start, "
        "heartbeats and end); above machine.physical_cores, its times are inflated",
    )
    load_start: Measured = Field(None, description="the host's 1-minute load average at start")
    load_end: Measured = Field(None, description="the host's 1-minute load average at the end")
    pinned_host: str | None = Field(
        None, description="the worker host the job must run on (its spec's host); null: any"
    )
    waiting: str | None = Field(
        None,
        description='why the queued job is not running, when known: "waiting for host H" '
        "for a job submitted with wait_for_host to a host no live worker served, until a "
        "worker there takes it",
    )


class JobsPublic(BaseModel):
    data: list[JobPublic]
    count: int = Field(description="number of matching jobs (all pages)")


class TracePointPublic(_Public):
    """One certified point of a convergence trace."""

    seq: int
    iteration: int
    epoch: Measured
    time_s: Measured
    primal: Measured
    dual: Measured
    gap: Measured
    nnz_x: int
    extras: dict[str, Any]


class PathStepPublic(_Public):
    """One λ of a regularization path: its last trace point so far."""

    index: int = Field(description="position in the grid")
    l1: float
    ratio: Measured = Field(description="l1 / λ_max")
    seconds: Measured = Field(description="this λ's solver time")
    time_s: Measured = Field(description="the path's solver time at this λ's end")
    epochs: Measured = Field(description="this λ's passes over the data")
    primal: Measured
    gap: Measured
    gap_rel: Measured = Field(description="gap / max(1, |primal|), the stop rules' tol")
    nnz: int = Field(description="support size of this λ's solution")
    points: int = Field(description="this λ's trace points")


class PathPublic(BaseModel):
    """A path job's λs (core.paths: read from its trace)."""

    job_id: int
    status: str
    solver: str
    lambda_max: Measured = Field(description="‖Aᵀφ'(A·0)‖∞/n: the model is empty from it on")
    n_lambdas: int = Field(description="λs in the grid")
    tol: float = Field(description="relative duality gap each λ is solved to")
    seconds: Measured = Field(description="the path's solver time so far")
    reached: bool = Field(description="every λ of the grid has a relative gap ≤ tol")
    steps: list[PathStepPublic]


class TracePublic(BaseModel):
    job_id: int
    status: str
    n_points: int = Field(description="points recorded so far (before downsampling)")
    trace_mode: str | None = Field(None, description="the job's trace_mode (see JobPublic)")
    wall_s: Measured = Field(None, description="the job's wall_s (see JobPublic)")
    data: list[TracePointPublic]


# ---------------------------------------------------------------- sweeps


class SweepCreate(SweepSpec):
    """A sweep specification; ``force`` creates new jobs even for identical ones."""

    force: bool = Field(False, description="create new jobs even if identical ones exist")
    wait_for_host: bool = Field(False, description=WAIT_FOR_HOST)

    def spec(self) -> SweepSpec:
        return SweepSpec(**self.model_dump(exclude={"force", "wait_for_host"}))


class SolverJobsPublic(BaseModel):
    """How many jobs of one solver a sweep has, in all and of each kind."""

    jobs: int
    seeded: int = Field(description="runs with each of the sweep's seeds")
    unseeded: int = Field(
        description="runs of settings that use no seed (deterministic): one per objective"
    )
    timing_repeats: int = Field(
        description="reruns of those settings, one per further seed, that measure timing "
        "noise (the sweep's timing_repeats)"
    )
    skipped: int = Field(
        0,
        description="(setting, objective) pairs not run because the solver or the loss has "
        "no such multiclass form",
    )


class SweepPublic(_Public):
    id: int
    name: str | None
    spec: dict[str, Any]
    n_jobs: int
    created_at: datetime
    progress: dict[str, int] = Field(description="number of the sweep's jobs per status")
    jobs_per_solver: dict[str, SolverJobsPublic] | None = Field(
        None, description="the sweep's jobs of each solver (None: its spec no longer parses)"
    )
    duplicates_dropped: dict[str, int] = Field(
        default_factory=dict,
        description="repeated values dropped before the sweep expanded, by axis (datasets, "
        "losses, l2, l1, seeds; solvers: settings equal once parsed with their defaults); "
        "spec holds the axes without them",
    )


class SweepsPublic(BaseModel):
    data: list[SweepPublic]
    count: int


# ---------------------------------------------------------------- datasets


class RegistrySource(_Create):
    """A public dataset of the registry (faceoff datasets list)."""

    kind: Literal["registry"]
    name: Text = Field(min_length=1, max_length=200)


class SyntheticSource(_Create):
    """A seeded synthetic problem of data.synthetic, regenerated identically when used;
    n_samples·n_features·density is capped by FACEOFF_MAX_NNZ and n_classes by
    FACEOFF_MAX_CLASSES (core.datasets.check_source)."""

    kind: Literal["synthetic"]
    generator: Literal["classification", "regression", "multiclass"] = Field(
        description="classification: labels ±1; regression: real targets; multiclass: "
        "class labels 0..n_classes−1"
    )
    n_samples: JsonInt = Field(ge=1, le=10_000_000)
    n_features: JsonInt = Field(ge=1, le=10_000_000)
    density: float = Field(gt=0, le=1, allow_inf_nan=False, description="1: dense")
    seed: JsonInt = Field(0, ge=0, le=2**31 - 1)
    n_classes: JsonInt | None = Field(
        None, ge=2, le=10_000_000, description="multiclass: K, at most n_samples"
    )
    layout: Literal["planted", "clusters"] | None = Field(
        None,
        description="multiclass: planted (default; the argmax of a planted linear model) or "
        "clusters (Aloi-like: K balanced Gaussian classes, n_samples/K samples each — many "
        "classes, few samples each)",
    )

    @model_validator(mode="after")
    def _classes(self) -> SyntheticSource:
        if self.generator != "multiclass":
            given = [f for f in ("n_classes", "layout") if getattr(self, f) is not None]
            if given:
                raise ValueError(f"{given[0]} applies to generator multiclass only")
            return self
        if self.n_classes is None:
            raise ValueError("generator multiclass needs n_classes (2 to n_samples)")
        if self.n_classes > self.n_samples:
            raise ValueError(
                f"n_classes {self.n_classes} is more than n_samples {self.n_samples}: every "
                "class needs a sample"
            )
        self.layout = self.layout or "planted"
        return self


class SklearnSource(_Create):
    """A dataset shipped with scikit-learn (standardized features, labels ±1)."""

    kind: Literal["sklearn"]
    name: Literal["breast_cancer"]


# each map's parameters and their defaults: DGPD §5's recipe for pixels in [0, 1]
# (bench/run_dgpd_sparse.py: 1,000 Fourier features with γ = 0.02, 100 grids with σ = 20)
FEATURE_PARAMS = {
    "fourier": {"n_components": 1000, "gamma": 0.02},
    "binning": {"n_grids": 100, "sigma": 20.0},
}


class RandomFeaturesSource(_Create):
    """Random features of a registered dataset (Rahimi & Recht 2007), the DGPD paper's
    Mnist-RF/RB recipe (core.features): fourier, z(x) = √(2/D) cos(Wᵀx + b) for the kernel
    exp(−γ‖x − y‖²) (dense, n × n_components); binning, n_grids random grids for
    exp(−‖x − y‖₁/σ) (sparse, n_grids non-zeros a row). Labels are the base's; sizes are
    checked against the caps before anything is built."""

    kind: Literal["random_features"]
    base: Text = Field(
        min_length=1, max_length=200, description="the dataset the features are made of"
    )
    map: Literal["fourier", "binning"]
    n_components: int | None = Field(None, ge=1, le=10_000_000, description="fourier: D (1000)")
    gamma: float | None = Field(
        None, gt=0, le=1e6, allow_inf_nan=False, description="fourier: γ of the kernel (0.02)"
    )
    n_grids: int | None = Field(None, ge=1, le=100_000, description="binning: P (100)")
    sigma: float | None = Field(
        None, gt=0, le=1e6, allow_inf_nan=False, description="binning: σ of the kernel (20)"
    )
    seed: int = Field(0, ge=0, le=2**31 - 1)

    @model_validator(mode="after")
    def _one_map(self) -> RandomFeaturesSource:
        for field in FEATURE_PARAMS["binning" if self.map == "fourier" else "fourier"]:
            if getattr(self, field) is not None:
                taken = " and ".join(FEATURE_PARAMS[self.map])
                raise ValueError(f"{field} does not apply to map {self.map}, which takes {taken}")
        for field, default in FEATURE_PARAMS[self.map].items():
            if getattr(self, field) is None:
                setattr(self, field, default)
        return self


Source = Annotated[
    RegistrySource | SyntheticSource | SklearnSource | RandomFeaturesSource,
    Field(discriminator="kind"),
]


class DatasetCreate(_Create):
    name: Text = Field(min_length=1, max_length=200, pattern=NAME_PATTERN)
    source: Source


class DatasetPublic(_Public):
    id: int
    name: str
    source: dict[str, Any]
    n_samples: int | None
    n_features: int | None
    nnz: int | None
    sha256: str | None
    labels: dict[str, Any] | None = Field(
        None,
        description='its labels: {"kind": "classes", "n_classes": K, "counts": {label: '
        'samples} (null above FACEOFF_MAX_CLASSES)} or {"kind": "targets"}; null until known '
        "(a registry dataset without n_classes, before its data is first read)",
    )
    created_at: datetime

    @computed_field(  # type: ignore[prop-decorator]
        description="where its data comes from, as this server sees it: a registry file "
        "'in the mirror folder', 'in the cache' or 'downloaded on first use (not in the "
        "mirror or the cache yet)'; 'uploaded', 'generated when used', 'shipped with "
        "scikit-learn'"
    )
    @property
    def availability(self) -> str:
        return availability(self.source)


class DatasetsPublic(BaseModel):
    data: list[DatasetPublic]
    count: int


class DatasetStatsPublic(BaseModel):
    dataset_id: int
    normalize: Normalize
    stats: dict[str, Any] = Field(description="faceoff.data.stats.dataset_stats (NaN as null)")
    advice: dict[str, Any] = Field(description="faceoff.data.stats.advise: primal or dual CD")


# ---------------------------------------------------------------- solvers


class ParamPublic(BaseModel):
    name: str
    kind: Literal["float", "int", "choice"]
    default: Any
    help: str
    low: float | None = None
    high: float | None = None
    choices: list[str] | None = None


class LossParamPublic(BaseModel):
    loss: Loss
    param: str = Field(description="the loss parameter, e.g. gamma")
    low: float
    high: float | None = Field(description="None: no upper bound")
    why: str


class SeedWhenPublic(BaseModel):
    param: str = Field(description="the parameter that decides")
    values: list[str] = Field(description="its values with which the seed is used")


class SolverPublic(BaseModel):
    name: str
    title: str
    reference: str
    side: str
    losses: list[Loss]
    penalties: list[Penalty]
    params: list[ParamPublic]
    loss_params: list[LossParamPublic] = Field(
        description="the loss parameters the solver supports, where not all (e.g. γ = 1)"
    )
    multiclass: list[Multiclass] = Field(
        description="the K-class forms it solves as one objective: ovr (one-vs-rest), "
        "multinomial (softmax cross-entropy); empty: binary and regression problems only"
    )
    requires: str | None = Field(
        None, description="the distribution a peer solver needs (None: one of ours)"
    )
    trace_mode: str = Field(
        description="native (our clock between chunks), callback (the library calls us "
        "back) or refit (one fit from scratch per budget; each point's time is its own fit's)"
    )
    uses_seed: bool | SeedWhenPublic = Field(
        description="whether a run's seed changes it: always, never (a deterministic solver, "
        "run once per objective in a sweep), or when a parameter takes one of some values"
    )
    available: bool = Field(description="whether the distribution it requires is installed")
    unavailable_reason: str | None = Field(None, description="what to install, if not")
    distribution: str | None = Field(
        None, description="the distribution it comes from (faceoff, or a plug-in's)"
    )
    version: str | None = Field(None, description="that distribution's version")
    unavailable_on: list[dict[str, str]] = Field(
        default_factory=list,
        description="the live workers that cannot run it: host and reason (its warm-up "
        "failed, crashed or timed out there, or the plug-in is not installed there)",
    )


class BrokenPluginPublic(BaseModel):
    name: str = Field(description="the entry point's name")
    distribution: str = Field(description="the installed distribution that declares it")
    error: str = Field(description="why it is not in the catalogue")


class SolversPublic(BaseModel):
    data: list[SolverPublic]
    count: int
    broken_plugins: list[BrokenPluginPublic] = Field(
        description="installed plug-ins (entry points of group faceoff.solvers) left out"
    )


# ---------------------------------------------------------------- references


class ReferenceCreate(ObjectiveSpec):
    """An objective whose optimum P* should be certified by a high-precision run."""

    solver: Text = Field("dual_cd", min_length=1, max_length=64)
    max_seconds: float = Field(600.0, gt=0, le=86400, allow_inf_nan=False)
    max_epochs: float = Field(100_000.0, gt=0, le=1e7, allow_inf_nan=False)
    force: bool = False

    def objective(self) -> ObjectiveSpec:
        return ObjectiveSpec(**self.model_dump(include=set(ObjectiveSpec.model_fields)))


class ReferencePublic(_Public):
    id: int
    objective_hash: str = Field(description="hash of the content-keyed objective")
    objective: dict[str, Any] = Field(
        description="data_hash, loss, gamma (smoothed hinge), l1, l2, the transforms of the "
        "run that certified it, and the dataset's name if it is shared with every team; "
        "no data_hash for another team's private dataset"
    )
    primal: float = Field(description="P of the certifying point: P* ∈ [P − gap, P]")
    gap: float
    job_id: int | None = Field(
        description="the job that certified it; null once deleted, or when another team's "
        "job certified it on a private dataset"
    )
    created_at: datetime


class ReferencesPublic(BaseModel):
    data: list[ReferencePublic]
    count: int


# ---------------------------------------------------------------- health


class WorkerMemory(BaseModel):
    host: str = Field(description="the worker's host (a job's host may name it)")
    memory_bytes: int | None = Field(description="its machine's memory (or cgroup limit)")
    concurrency: int = Field(description="jobs it runs at once")
    job_bytes: int | None = Field(
        description="what one of its jobs may take: (memory − 1 GiB baseline) ÷ concurrency; "
        "a job whose estimated working memory exceeds it on every live worker is refused"
    )


class HealthPublic(BaseModel):
    database: str = Field(description='"ok" or what went wrong')
    broker: str = Field(description='"ok" or what went wrong')
    workers: int = Field(description="live workers consuming this server's queue")
    worker_hosts: list[str] = Field(
        default_factory=list,
        description="hosts of the live workers: the values a job's or sweep's host may take "
        "(a job pinned to another host waits queued until a worker there starts)",
    )
    worker_memory: list[WorkerMemory] = Field(
        default_factory=list, description="each live worker's memory, read at its start"
    )
    time_limits: dict[str, Any] = Field(
        default_factory=dict,
        description="the limits a job runs under: when a run that does not stop at its "
        "max_seconds is killed, how long a cancelled run may take to stop, the soft and hard "
        "wall-time limits, the longest max_seconds accepted, each solver's warm-up time-out",
    )


# the ``responses=`` of a route: extra documented answers, status code -> model and text
Responses = dict[int | str, dict[str, Any]]


class Message(BaseModel):
    detail: str
