"""Service configuration, read from the environment only (prefix ``FACEOFF_``)."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_HOME = Path.home() / ".local" / "share" / "faceoff"
GiB = 1024**3
# FACEOFF_MAX_NNZ's default, from this machine's memory (bench/run_memory.py measures a job's
# peak at ≤ 3 × its CSR matrix, 12 bytes a non-zero, above the imports and kernels):
JOB_BYTES_PER_NNZ = 64  # a job's 4 × 12 B, the matrix a worker keeps for its next job, margin
BASELINE_BYTES = 1 * GiB  # a worker's imports and compiled kernels (~0.3 GiB), the system
MIN_MAX_NNZ = 2**20
# FACEOFF_API_MAX_UPLOAD_VALUES's default, from the API host's memory: an upload parsed whole
# at the svmlight parser's peak (≤ 32 bytes a value: values and int64 indices in growing
# arrays, then their CSR copy) takes at most a sixteenth of the memory left after the
# baseline — the API shares its host with the database, the broker and the dashboard
API_BYTES_PER_UPLOAD_VALUE = 16 * 32
MIN_API_UPLOAD_VALUES = 2**20


def memory_bytes() -> int | None:
    """This machine's memory (RAM, or the container's cgroup limit if lower); None: unknown."""
    try:
        found = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        found = None
    for limit in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            value = int(Path(limit).read_text().strip())  # "max": no limit (ValueError)
        except (OSError, ValueError):
            continue
        found = value if found is None else min(found, value)
    return found


def default_max_nnz(memory: int | None, jobs: int = 1) -> int:
    """The largest dataset (non-zeros) ``jobs`` concurrent jobs can load in ``memory`` bytes:
    (memory − BASELINE_BYTES) / (jobs · JOB_BYTES_PER_NNZ), at least MIN_MAX_NNZ; 2²⁹ when
    the memory is unknown."""
    if memory is None:
        return 2**29
    return max(MIN_MAX_NNZ, (memory - BASELINE_BYTES) // (max(jobs, 1) * JOB_BYTES_PER_NNZ))


def worker_job_bytes(memory: int | None, concurrency: int) -> int | None:
    """The memory one job of a worker running ``concurrency`` jobs at once on a machine with
    ``memory`` bytes may take: (memory − BASELINE_BYTES) ÷ concurrency, compared with a
    job's estimate (SolverSpec.working_bytes) at submission; None when unknown."""
    if memory is None:
        return None
    return max(0, memory - BASELINE_BYTES) // max(concurrency, 1)


def default_api_upload_values(memory: int | None) -> int:
    """The most feature values an upload may hold on an API host with ``memory`` bytes:
    (memory − BASELINE_BYTES) / API_BYTES_PER_UPLOAD_VALUE, at least MIN_API_UPLOAD_VALUES;
    2²⁵ when the memory is unknown. 24 GiB: 48M values (a 0.6 GB CSR matrix)."""
    if memory is None:
        return 2**25
    return max(MIN_API_UPLOAD_VALUES, (memory - BASELINE_BYTES) // API_BYTES_PER_UPLOAD_VALUE)


class Settings(BaseSettings):
    """Every setting of the service; ``FACEOFF_DATABASE_URL`` etc. in the environment."""

    model_config = SettingsConfigDict(env_prefix="FACEOFF_", extra="ignore")

    HOME: Path = DEFAULT_HOME
    DATABASE_URL: str = ""  # default: SQLite file in HOME
    BROKER_URL: str = "redis://127.0.0.1:6379/0"
    QUEUE: str = "faceoff"  # Celery queue the API sends jobs to and workers consume
    # this worker's host name, for pinned jobs' queues and machine records (core.machine);
    # default: the system's. Give the containers of one machine one name.
    WORKER_HOST: str = ""
    MAX_SWEEP_JOBS: int = 1000  # larger sweeps are refused with 422
    # per-team quotas (core.jobs.check_quotas): queued jobs, and sweeps with a queued or
    # running job; a submission over one is a 429 with Retry-After
    TEAM_MAX_QUEUED_JOBS: int = 5000
    TEAM_MAX_OPEN_SWEEPS: int = 20
    QUOTA_RETRY_AFTER_SECONDS: int = 60
    MAX_UPLOAD_BYTES: int = 200 * 1024 * 1024
    MAX_JSON_BYTES: int = 1024 * 1024  # any other request body (a maximal sweep is ~0.3 MB)
    MAX_UPLOAD_DECOMPRESSED_BYTES: int = 2 * 1024**3  # a .bz2/.gz upload, once decompressed
    # the most feature values an upload may hold, counted while it streams in (a compression
    # bomb is refused after that many); the API validates an upload in 1 MiB blocks and never
    # holds its matrix, so this bounds the work (time, disk) one upload costs it, not its
    # memory. 0: sized from the API host's memory (default_api_upload_values: 48M on 24 GiB)
    API_MAX_UPLOAD_VALUES: int = 0
    # the largest dataset registered or loaded, whatever its source (core.datasets.Caps);
    # the defaults admit every registry dataset (url: 2.4M × 3.2M, 277M non-zeros)
    MAX_SAMPLES: int = 2**25  # 33.5M examples
    MAX_CLASSES: int = 10_000  # classes of a K-class problem (X has one column a class)
    MAX_FEATURES: int = 2**22  # 4.2M features: each solver vector of length d ≤ 32 MiB
    # stored non-zeros; 0: sized from this machine's memory and FACEOFF_WORKER_CONCURRENCY
    # (default_max_nnz: 24 GiB, one job at a time → 385M, 4.6 GB as CSR)
    MAX_NNZ: int = 0
    # the largest dataset the API and the dashboard load into their own process for
    # statistics and the advisor (a job's data is loaded by a worker, within MAX_NNZ):
    # 2²⁵ non-zeros, about 1.2 GB at bench/run_memory.py's peak
    STATS_MAX_NNZ: int = 2**25
    WORKER_CONCURRENCY: int = 1  # jobs a worker runs at once (python -m faceoff.worker)
    # the memory a worker's jobs share: (this − 1 GiB baseline) ÷ its concurrency is what one
    # job may take (GET /health: worker_memory); 0: this machine's RAM or cgroup limit
    WORKER_MEMORY_BYTES: int = 0
    # a job's estimated working memory (solvers.spec.SolverSpec.working_bytes), whatever
    # the workers have
    MAX_JOB_BYTES: int = 16 * 1024**3
    MAX_JOB_SECONDS: float = 3600.0  # the largest max_seconds a job may ask for
    TRACE_BATCH_POINTS: int = 1000  # trace points per database write ...
    TRACE_BATCH_SECONDS: float = 0.5  # ... or at least this often while a job runs
    HARD_LIMIT_GRACE_SECONDS: float = 60.0  # hard time limit = max_seconds + set-up + grace
    # each solver's warm-up (compilation, a plug-in's first run) at a worker's start must end
    # within this, else the solver is unavailable on that worker (worker.warmup)
    WARMUP_TIMEOUT_SECONDS: float = 600.0
    # comma-separated solvers a worker does not warm up at its start: their first job in
    # each run process compiles them, outside its solver clock (skglm compiles its kernels
    # anew in every process, about a minute on 2 busy cores: the test suite skips it)
    WARMUP_SKIP: str = ""
    HEARTBEAT_TIMEOUT_SECONDS: float = 60.0  # a running job silent this long is requeued
    DB_RETRY_SECONDS: float = 60.0  # a worker retries a failed database write this long
    # PostgreSQL bounds (core.db): connecting; a silent network (pings, TCP keepalives and
    # unacknowledged data); a statement (cancelled by the server, 0: none; migrations: none)
    DB_CONNECT_TIMEOUT_SECONDS: float = 5.0
    DB_NETWORK_TIMEOUT_SECONDS: float = 3.0
    DB_STATEMENT_TIMEOUT_SECONDS: float = 60.0
    # a queued job with no message in the broker is sent again after this long (worker.reaper)
    DISPATCH_TIMEOUT_SECONDS: float = 60.0
    # the dashboard's server (dashboard.serve: gunicorn, one asyncio worker a process): its
    # processes, the threads of each that run the Dash app, a worker silent this long is
    # replaced, idle kept-alive connections closed after this long, and the largest request
    # body (413 before it is read: Dash's callbacks send kilobytes, the login form less)
    DASHBOARD_WORKERS: int = Field(2, ge=1, le=64)
    DASHBOARD_THREADS: int = Field(8, ge=1, le=256)
    DASHBOARD_TIMEOUT_SECONDS: int = Field(120, ge=1)
    DASHBOARD_KEEPALIVE_SECONDS: int = Field(5, ge=0)
    DASHBOARD_MAX_BODY_BYTES: int = Field(2 * 1024 * 1024, ge=1024)
    # API tokens and dashboard login; off: the API answers loopback clients only
    AUTH_ENABLED: bool = False
    SECRET_KEY: str = ""  # signs the dashboard's session cookie; required when AUTH_ENABLED
    ADMIN_TEAM: str = ""  # the team whose tokens may call /api/v1/admin (auth on); "": none
    # proxies whose X-Forwarded-For is believed (addresses or networks, comma-separated);
    # every other client is its connection's address (core.auth.client_address)
    TRUSTED_PROXIES: str = "127.0.0.1,::1"

    @model_validator(mode="after")
    def _size_from_memory(self) -> Settings:
        if self.MAX_NNZ <= 0:
            self.MAX_NNZ = default_max_nnz(memory_bytes(), self.WORKER_CONCURRENCY)
        if self.API_MAX_UPLOAD_VALUES <= 0:
            self.API_MAX_UPLOAD_VALUES = default_api_upload_values(memory_bytes())
        return self

    @property
    def worker_memory(self) -> int | None:
        """The memory this worker's jobs share (WORKER_MEMORY_BYTES, else the machine's)."""
        return self.WORKER_MEMORY_BYTES or memory_bytes()

    @property
    def database_url(self) -> str:
        return self.DATABASE_URL or f"sqlite:///{self.HOME / 'faceoff.db'}"

    @property
    def upload_dir(self) -> Path:
        return self.HOME / "uploads"


@lru_cache
def get_settings() -> Settings:
    return Settings()
