"""Faults, with real processes: a worker killed as a whole, Redis restarted empty, PostgreSQL
unreachable for a while. Every job ends exactly once, with a contiguous trace.

A solver that diverges or raises, and the soft and hard time limits, are covered by
tests/service/test_worker.py (``test_failures_are_recorded_and_the_worker_carries_on``,
``test_a_diverged_run_fails_and_keeps_its_finite_points``, ``test_*_time_limit_*``).
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from contextlib import ExitStack
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.engine import make_url

from faceoff.api.main import create_app
from faceoff.core.db import session_scope
from faceoff.core.models import RUNNING, SUCCEEDED, TERMINAL, Dataset, Job, TracePoint
from faceoff.core.queue import enqueue
from faceoff.core.settings import Settings
from tests.backends import LOCAL, PG_HOST, PG_PORT
from tests.reliability.brokers import redis_server
from tests.reliability.proxy import tcp_proxy
from tests.service.workers import WorkerProcess, running_worker, wait_for

pytestmark = pytest.mark.slow

HEARTBEAT_TIMEOUT = 3.0
# dual_cd's plain uniform passes with l2 = 1e-9 and tol = 0 run until max_seconds, writing
# ~40 points a second (its auto defaults, Catalyst here, reach gap 0 within a second)
SLOW = {
    "kind": "synthetic",
    "generator": "classification",
    "n_samples": 5000,
    "n_features": 1000,
    "density": 0.05,
    "seed": 0,
}
SMALL = {**SLOW, "n_samples": 2000, "n_features": 100, "density": 0.1}


def slow_job(dataset: str, seconds: float) -> dict:
    stop = {"tol": 0, "max_epochs": 1e6, "max_seconds": seconds}
    plain = {"sampling": "uniform", "accelerate": "none", "shrinking": "off"}
    solver = {"solver": "dual_cd", "params": plain}
    return {"dataset": dataset, "loss": "logistic", "l2": 1e-9, **solver, "stop": stop}


def small_job(dataset: str, l2: float) -> dict:
    return {"dataset": dataset, "loss": "logistic", "l2": l2, "solver": "primal_cd"}


@pytest.fixture
def fault_settings(settings_for, monkeypatch):
    """``fault_settings(database_url, broker_url)``: settings with a short heartbeat timeout,
    which the workers started afterwards read from the environment."""
    monkeypatch.setenv("FACEOFF_HEARTBEAT_TIMEOUT_SECONDS", str(HEARTBEAT_TIMEOUT))

    def make(database_url: str, broker_url: str) -> Settings:
        return settings_for(database_url, broker_url, HEARTBEAT_TIMEOUT_SECONDS=HEARTBEAT_TIMEOUT)

    return make


def add_datasets(url: str) -> tuple[str, str]:
    """(slow, small) dataset names."""
    names = (f"slow-{uuid.uuid4().hex[:8]}", f"small-{uuid.uuid4().hex[:8]}")
    with session_scope(url) as session:
        session.add_all(
            [Dataset(name=n, source=s) for n, s in zip(names, (SLOW, SMALL), strict=True)]
        )
    return names


def submit(client: TestClient, spec: dict) -> int:
    response = client.post("/api/v1/jobs", json=spec)
    assert response.status_code == 201, response.text
    return response.json()["id"]


def get_job(url: str, job_id: int) -> Job:
    with session_scope(url) as session:
        return session.get(Job, job_id)


def wait_running(url: str, job_id: int, worker: WorkerProcess, min_points: int) -> Job:
    def running():
        job = get_job(url, job_id)
        return job if job.status == RUNNING and job.n_points >= min_points else None

    return wait_for(running, 60, f"job {job_id} to record {min_points} points", worker)


def wait_done(url: str, job_ids: list[int], worker: WorkerProcess, timeout: float) -> list[Job]:
    def done():
        jobs = [get_job(url, job_id) for job_id in job_ids]
        return jobs if all(job.status in TERMINAL for job in jobs) else None

    return wait_for(done, timeout, f"jobs {job_ids} to finish", worker)


def check_ran_once(url: str, job: Job, attempts: int = 1) -> None:
    """Succeeded at the ``attempts``-th try, its trace contiguous from seq 0, one row each."""
    assert (job.status, job.error, job.attempts) == (SUCCEEDED, None, attempts)
    with session_scope(url) as session:
        seqs = session.scalars(
            select(TracePoint.seq).where(TracePoint.job_id == job.id).order_by(TracePoint.seq)
        ).all()
        count = session.scalar(select(func.count()).where(TracePoint.job_id == job.id))
    assert seqs == list(range(job.n_points)) and count == job.n_points > 0


def process_tree(pid: int) -> list[int]:
    """``pid`` and its children (Linux /proc)."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [pid, *map(int, children)]


def parent_of(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def test_a_killed_worker_s_job_is_requeued_and_runs_once(
    postgres_url, redis_url, fault_settings, tmp_path
):
    settings = fault_settings(postgres_url, redis_url)
    other = settings.model_copy(update={"HOME": tmp_path / "other"})
    slow, _ = add_datasets(postgres_url)
    with ExitStack() as stack, TestClient(create_app(settings), client=LOCAL) as client:
        workers = [stack.enter_context(running_worker(s)) for s in (settings, other)]
        job_id = submit(client, slow_job(slow, 3))
        first = wait_running(postgres_url, job_id, workers[0], min_points=20)
        pool_pid = int(first.worker_host.rsplit(":", 1)[1])
        victim = next(w for w in workers if w.process.pid == parent_of(pool_pid))
        survivor = next(w for w in workers if w is not victim)
        for pid in process_tree(victim.process.pid):  # the whole worker, as if its host died
            os.kill(pid, signal.SIGKILL)

        (job,) = wait_done(postgres_url, [job_id], survivor, timeout=60)
        check_ran_once(postgres_url, job, attempts=2)
        assert job.stop_reason == "max_seconds" and job.worker_host != first.worker_host
        assert f"job {job_id}: its worker was lost during attempt 1; requeued" in survivor.log()

        enqueue(job_id, settings, max_seconds=3)  # a late duplicate of its message
        wait_for(
            lambda: f"job {job_id} is succeeded; this delivery does not run it" in survivor.log(),
            30,
            "the duplicate delivery to be skipped",
            survivor,
        )
        again = get_job(postgres_url, job_id)
        assert (again.attempts, again.finished_at) == (2, job.finished_at)


def test_a_restarted_redis_loses_no_job(sqlite_url, fault_settings, tmp_path):
    with redis_server(tmp_path) as broker:
        settings = fault_settings(sqlite_url, broker.url)
        slow, small = add_datasets(sqlite_url)
        with (
            running_worker(settings) as worker,
            TestClient(create_app(settings), client=LOCAL) as client,
        ):
            running = submit(client, slow_job(slow, 3))
            queued = [submit(client, small_job(small, l2)) for l2 in (1e-1, 1e-2, 1e-3)]
            wait_running(sqlite_url, running, worker, min_points=5)
            broker.kill()

            health = client.get("/api/v1/health")
            assert health.status_code == 503 and health.json()["database"] == "ok"
            assert health.json()["broker"].startswith("ConnectionError")
            unsent = client.post("/api/v1/jobs", json=small_job(small, 1e-4))
            assert unsent.status_code == 201 and unsent.json()["status"] == "queued"

            broker.start()  # empty, on the same port
            wait_for(
                lambda: client.get("/api/v1/health").status_code == 200,
                30,
                "the API to reach the broker again",
                worker,
            )
            jobs = wait_done(sqlite_url, [running, *queued, unsent.json()["id"]], worker, 90)
            for job in jobs:
                check_ran_once(sqlite_url, job)
            assert "queued jobs again" in worker.log()


def test_an_unreachable_postgres_delays_jobs_but_loses_nothing(
    postgres_url, redis_url, fault_settings
):
    with tcp_proxy(PG_HOST, PG_PORT) as proxy:
        proxied = make_url(postgres_url).set(host="127.0.0.1", port=proxy.port)
        settings = fault_settings(proxied.render_as_string(hide_password=False), redis_url)
        slow, small = add_datasets(postgres_url)
        with (
            running_worker(settings) as worker,
            TestClient(create_app(settings), client=LOCAL) as client,
        ):
            running = submit(client, slow_job(slow, 2))
            queued = submit(client, small_job(small, 1e-2))
            wait_running(postgres_url, running, worker, min_points=5)
            proxy.down()

            for response in (
                client.get(f"/api/v1/jobs/{running}"),
                client.get("/api/v1/jobs"),
                client.post("/api/v1/jobs", json=small_job(small, 1e-3)),
            ):
                assert response.status_code == 503
                assert response.json()["detail"].startswith("database unavailable: ")
                assert response.headers["retry-after"]
            health = client.get("/api/v1/health")
            assert health.status_code == 503 and health.json()["database"] != "ok"
            time.sleep(2 * HEARTBEAT_TIMEOUT)  # the run ends and the next job arrives meanwhile
            proxy.up()

            jobs = wait_done(postgres_url, [running, queued], worker, timeout=60)
            for job in jobs:
                check_ran_once(postgres_url, job)
            assert jobs[0].stop_reason == "max_seconds" and jobs[0].time_s >= 2
            assert "database unavailable" in worker.log()
            assert client.get(f"/api/v1/jobs/{running}").status_code == 200
