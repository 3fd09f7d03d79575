"""The worker end to end: real Redis, PostgreSQL and SQLite, a real Celery worker process.

One worker per database backend serves every test of this module (each test makes its own
datasets and jobs); its log of a failed test is printed with the failure.
"""

from __future__ import annotations

import os
import signal
import socket
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pytest
from sqlalchemy import func, select, update

from faceoff.core.db import session_scope
from faceoff.core.migrate import upgrade
from faceoff.core.models import (
    CANCELLED,
    FAILED,
    SUCCEEDED,
    TERMINAL,
    Dataset,
    Job,
    Reference,
    TracePoint,
)
from faceoff.core.queue import RUN_JOB, celery_for, enqueue
from faceoff.core.settings import Settings
from faceoff.core.specs import JobSpec, canonical_job, objective_hash, spec_hash
from tests.backends import (
    PG_HOST,
    PG_PORT,
    REDIS_DB,
    REDIS_HOST,
    REDIS_PORT,
    create_pg_database,
    drop_pg_database,
    require,
)
from tests.service.workers import WorkerProcess, running_worker, wait_for

SMALL = {
    "kind": "synthetic",
    "generator": "classification",
    "n_samples": 2000,
    "n_features": 100,
    "density": 0.1,
    "seed": 0,
}
# with l2 = 1e-9 and tol = 0, dual_cd's plain uniform passes run until max_seconds (~150
# points in 4 s); its auto defaults (Catalyst here) reach gap 0 in a fraction of a second
SLOW = {**SMALL, "n_samples": 5000, "n_features": 1000, "density": 0.05}
PLAIN = {"sampling": "uniform", "accelerate": "none", "shrinking": "off"}
SLOW_JOB = {"loss": "logistic", "l2": 1e-9, "solver": "dual_cd", "params": PLAIN}
HEARTBEAT_TIMEOUT = 3.0  # the reaper requeues the job of a lost pool process after this


@dataclass
class Service:
    settings: Settings
    worker: WorkerProcess

    @property
    def url(self) -> str:
        return self.settings.database_url


@pytest.fixture(scope="module", params=["postgres", "sqlite"])
def service(request, tmp_path_factory) -> Iterator[Service]:
    """A migrated database of each backend and a worker (prefork, one process) for it."""
    require("Redis", REDIS_HOST, REDIS_PORT)
    home = tmp_path_factory.mktemp(f"worker-{request.param}")
    if request.param == "postgres":
        require("PostgreSQL", PG_HOST, PG_PORT)
        url = create_pg_database()
    else:
        url = f"sqlite:///{home / 'faceoff.db'}"
    try:
        upgrade(url)
        settings = Settings(
            HOME=home,
            DATABASE_URL=url,
            BROKER_URL=f"redis://{REDIS_HOST}:{REDIS_PORT}/{REDIS_DB}",
            QUEUE=f"faceoff-test-{uuid.uuid4().hex[:8]}",
            HEARTBEAT_TIMEOUT_SECONDS=HEARTBEAT_TIMEOUT,
        )
        with pytest.MonkeyPatch.context() as env:
            env.setenv("FACEOFF_HEARTBEAT_TIMEOUT_SECONDS", str(HEARTBEAT_TIMEOUT))
            with running_worker(settings) as worker:
                yield Service(settings, worker)
    finally:
        if request.param == "postgres":
            drop_pg_database(url)


@pytest.fixture(autouse=True)
def worker_log(service: Service) -> Iterator[None]:
    """Print what the worker logged during the test (pytest shows it if the test fails)."""
    start = service.worker.log_size()
    yield
    print(service.worker.log(start))


def add_dataset(service: Service, source: dict) -> str:
    name = f"data-{uuid.uuid4().hex[:8]}"
    with session_scope(service.url) as session:
        session.add(Dataset(name=name, source=source))
    return name


def add_job(service: Service, dataset: str, **fields) -> tuple[int, JobSpec]:
    spec = canonical_job(JobSpec(dataset=dataset, **fields))
    with session_scope(service.url) as session:
        dataset_id = session.scalars(select(Dataset.id).where(Dataset.name == dataset)).one()
        job = Job(
            dataset_id=dataset_id,
            spec=spec.model_dump(mode="json"),
            spec_hash=spec_hash(spec),
            objective_hash=objective_hash(spec),
            solver=spec.solver,
            loss=spec.loss,
        )
        session.add(job)
        session.flush()
        return job.id, spec


def submit(service: Service, dataset: str, **fields) -> int:
    """A new job, enqueued as the API does."""
    job_id, spec = add_job(service, dataset, **fields)
    enqueue(job_id, service.settings, max_seconds=spec.stop.max_seconds)
    return job_id


def get_job(service: Service, job_id: int) -> Job:
    with session_scope(service.url) as session:
        return session.get(Job, job_id)


def get_trace(service: Service, job_id: int) -> list[TracePoint]:
    with session_scope(service.url) as session:
        query = select(TracePoint).where(TracePoint.job_id == job_id).order_by(TracePoint.seq)
        return list(session.scalars(query))


def wait_until_done(service: Service, job_id: int, timeout: float = 60) -> Job:
    def done():
        job = get_job(service, job_id)
        return job if job.status in TERMINAL else None

    return wait_for(done, timeout, f"job {job_id} to finish", service.worker)


def wait_until_running(service: Service, job_id: int, min_points: int = 1) -> Job:
    def running():
        job = get_job(service, job_id)
        assert job.status not in TERMINAL, f"job {job_id} ended early: {job.status} {job.error}"
        return job if job.n_points >= min_points else None

    return wait_for(running, 60, f"job {job_id} to record points", service.worker)


def check_trace(service: Service, job: Job) -> list[TracePoint]:
    """The job's trace is contiguous from seq 0 and its summary is the last point."""
    points = get_trace(service, job.id)
    assert [p.seq for p in points] == list(range(len(points)))
    assert points and job.n_points == len(points)
    last = points[-1]
    assert (job.epoch, job.time_s, job.primal, job.gap) == (
        last.epoch,
        last.time_s,
        last.primal,
        last.gap,
    )
    return points


def test_jobs_succeed_with_contiguous_traces(service):
    small = add_dataset(service, SMALL)
    objective = {"loss": "logistic", "l2": 1e-3}
    stop = {"max_epochs": 50, "tol": 1e-8}
    runs = [
        ("primal_cd", {}),
        ("dual_cd", {"sampling": "importance"}),
        ("agd", {}),
        ("lbfgs", {}),
        ("saga", {}),
    ]
    ids = [submit(service, small, **objective, solver=s, params=p, stop=stop) for s, p in runs]
    cancer = add_dataset(service, {"kind": "sklearn", "name": "breast_cancer"})
    ids.append(
        submit(service, cancer, loss="smooth_hinge", l2=1e-2, l1=1e-3, solver="dual_cd", stop=stop)
    )
    for job_id in ids:
        job = wait_until_done(service, job_id)
        assert (job.status, job.error) == (SUCCEEDED, None)
        assert job.stop_reason in ("converged", "max_epochs", "finished")
        assert job.attempts == 1 and job.worker_host.startswith(socket.gethostname())
        assert job.started_at <= job.finished_at
        points = check_trace(service, job)
        assert points[0].time_s < 0.05  # set-up only: compilation happened at warm-up
    digest = get_job(service, ids[0]).objective_hash
    with session_scope(service.url) as session:
        reference = session.scalars(
            select(Reference).where(Reference.objective_hash == digest)
        ).one()
    assert reference.job_id in ids[:5]


def test_trace_is_readable_while_the_job_runs(service):
    slow = add_dataset(service, SLOW)
    job_id = submit(service, slow, **SLOW_JOB, stop={"tol": 0, "max_epochs": 1e6, "max_seconds": 3})
    seen_points, seen_rows = set(), 0
    while (job := get_job(service, job_id)).status not in TERMINAL:
        if job.status == "running" and job.n_points:
            seen_points.add(job.n_points)
            seen_rows = max(seen_rows, len(get_trace(service, job_id)))
        time.sleep(0.1)
    assert len(seen_points) >= 3, seen_points  # the summary grew while the job ran
    assert seen_rows > 0
    assert (job.status, job.stop_reason) == (SUCCEEDED, "max_seconds")
    assert job.time_s >= 3
    check_trace(service, job)


def test_cancel_stops_a_running_job_within_a_chunk(service):
    slow = add_dataset(service, SLOW)
    job_id = submit(
        service, slow, **SLOW_JOB, stop={"tol": 0, "max_epochs": 1e6, "max_seconds": 60}
    )
    wait_until_running(service, job_id)
    with session_scope(service.url) as session:
        session.execute(update(Job).where(Job.id == job_id).values(cancel_requested=True))
    requested = time.monotonic()
    job = wait_until_done(service, job_id, timeout=10)
    assert time.monotonic() - requested < 1.5
    assert (job.status, job.stop_reason, job.error) == (CANCELLED, "cancelled", None)
    check_trace(service, job)


def test_failures_are_recorded_and_the_worker_carries_on(service):
    missing = add_dataset(service, {"kind": "upload", "file": "missing.svm", "n_features": None})
    regression = add_dataset(
        service,
        {"kind": "synthetic", "generator": "regression", "n_samples": 200, "n_features": 20,
         "density": 0.5, "seed": 0},
    )  # fmt: skip
    small = add_dataset(service, SMALL)
    no_file = submit(service, missing, loss="logistic", l2=1e-3, solver="dual_cd")
    bad_labels = submit(service, regression, loss="logistic", l2=1e-3, solver="primal_cd")
    fine = submit(service, small, loss="logistic", l2=1e-3, solver="dual_cd")

    job = wait_until_done(service, no_file)
    assert job.status == FAILED and job.stop_reason is None
    assert job.error.startswith("FileNotFoundError: ") and "missing.svm" in job.error
    job = wait_until_done(service, bad_labels)
    assert job.status == FAILED
    assert "a classification loss needs two label classes" in job.error
    assert job.n_points == 0 and get_trace(service, bad_labels) == []
    assert wait_until_done(service, fine).status == SUCCEEDED


def send_with_limits(service: Service, job_id: int, **limits) -> None:
    celery_for(service.settings.BROKER_URL, service.settings.QUEUE).send_task(
        RUN_JOB, args=[job_id], queue=service.settings.QUEUE, **limits
    )


def test_soft_time_limit_fails_the_job(service):
    slow = add_dataset(service, SLOW)
    job_id, _ = add_job(
        service, slow, **SLOW_JOB, stop={"tol": 0, "max_epochs": 1e6, "max_seconds": 60}
    )
    # 3 s: set-up, the run's fork and its first points fit on a loaded host
    send_with_limits(service, job_id, soft_time_limit=3, time_limit=30)
    job = wait_until_done(service, job_id, timeout=30)
    assert job.status == FAILED
    assert job.error.startswith("time limit exceeded: the job ran past its soft limit of 3 s")
    check_trace(service, job)  # the points recorded before the limit are kept


def test_hard_time_limit_fails_the_job_and_the_worker_recovers(service):
    slow = add_dataset(service, SLOW)
    job_id, _ = add_job(
        service, slow, **SLOW_JOB, stop={"tol": 0, "max_epochs": 1e6, "max_seconds": 60}
    )
    send_with_limits(service, job_id, time_limit=1.5)  # no soft limit: as if the run were stuck
    job = wait_until_done(service, job_id, timeout=20)
    assert job.status == FAILED
    assert job.error.startswith("hard time limit exceeded (1.5 s)"), job.error
    assert job.attempts == 1
    small = add_dataset(service, SMALL)
    after = submit(service, small, loss="logistic", l2=1e-3, solver="primal_cd")
    assert wait_until_done(service, after).status == SUCCEEDED


def test_job_of_a_lost_pool_process_is_requeued_and_reruns_from_seq_zero(service):
    slow = add_dataset(service, SLOW)
    job_id = submit(service, slow, **SLOW_JOB, stop={"tol": 0, "max_epochs": 1e6, "max_seconds": 2})
    first = wait_until_running(service, job_id, min_points=20)
    os.kill(int(first.worker_host.rsplit(":", 1)[1]), signal.SIGKILL)
    job = wait_until_done(service, job_id)
    assert (job.status, job.attempts) == (SUCCEEDED, 2)
    assert job.worker_host != first.worker_host
    points = check_trace(service, job)
    with session_scope(service.url) as session:
        count = session.scalar(select(func.count()).where(TracePoint.job_id == job_id))
    assert count == len(points) == job.n_points


def test_a_diverged_run_fails_and_keeps_its_finite_points(service):
    small = add_dataset(service, SMALL)
    job_id = submit(
        service, small, loss="squared", l2=1e-3, solver="saga", params={"step_scale": 10},
        stop={"max_epochs": 1000},
    )  # fmt: skip
    job = wait_until_done(service, job_id)
    assert (job.status, job.stop_reason) == (FAILED, "diverged")
    assert job.error == "diverged: primal or dual not finite"
    points = check_trace(service, job)
    assert all(np.isfinite([p.primal, p.dual, p.gap]).all() for p in points)


def test_a_job_records_what_auto_chose_and_explicit_values_win(service):
    """issue 34: omitted parameters run auto, whose choices each trace point's extras hold
    and the job's own ``auto`` column copies (the dashboard's legend names them from it);
    a value given explicitly is run as given and nothing is recorded for it."""
    small = add_dataset(service, SMALL)  # 2000 × 100: n ≥ d
    stop = {"max_epochs": 30, "tol": 1e-8}
    ill = {"loss": "smooth_hinge", "l2": 1e-7, "stop": stop}  # Catalyst pays
    runs = [
        ("dual_cd", ill, {}),
        ("dual_cd", ill, {"accelerate": "none"}),  # auto then shrinks the box
        ("dual_cd", ill, {"sampling": "importance", "accelerate": "none", "shrinking": "off"}),
        ("saga", {"loss": "logistic", "l2": 1e-3, "stop": stop}, {}),
        ("saga", {"loss": "logistic", "l2": 1e-3, "stop": stop}, {"step_scale": 1.0}),
    ]
    ids = [submit(service, small, **objective, solver=s, params=p) for s, objective, p in runs]
    jobs = [wait_until_done(service, job_id) for job_id in ids]
    assert [(job.status, job.error) for job in jobs] == [(SUCCEEDED, None)] * len(jobs)
    first = [check_trace(service, job)[0].extras.get("auto") for job in jobs]
    assert first[:3] == [
        {"sampling": "permutation", "accelerate": "catalyst", "shrinking": "off"},
        {"sampling": "permutation", "shrinking": "on"},
        None,
    ]
    assert 1.0 <= first[3]["step_scale"] <= 3.0 and first[4] is None
    assert [job.auto for job in jobs] == first  # the job's own copy, none for no choice
    assert get_job(service, ids[1]).spec["params"]["accelerate"] == "none"  # as given
