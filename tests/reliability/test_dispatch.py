"""A queued job is always dispatched: a job committed but never sent — its API killed between
the commit and the send, or a reaper's requeue never sent — runs once, within the re-dispatch
timeout, on real uvicorn, worker, PostgreSQL and Redis processes.

The API is killed deterministically inside that window: its broker connection goes through a
TCP proxy that is blackholed (connections accepted, no byte forwarded), so the sweep is
committed and the API then hangs in its first send until it is killed with SIGKILL.
"""

from __future__ import annotations

import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
import redis
from sqlalchemy import func, select

from faceoff.core.db import session_scope
from faceoff.core.jobs import submit_job
from faceoff.core.models import QUEUED, RUNNING, Dataset, Job, utcnow
from faceoff.core.settings import Settings
from faceoff.core.specs import JobSpec
from faceoff.worker import store
from faceoff.worker.reaper import EPOCH_KEY
from tests.backends import REDIS_HOST, REDIS_PORT
from tests.reliability.proxy import tcp_proxy
from tests.reliability.servers import TINY, api_env, running_api
from tests.reliability.test_faults import check_ran_once, wait_done
from tests.service.workers import WorkerProcess, running_worker, wait_for

pytestmark = pytest.mark.slow

DISPATCH_TIMEOUT = 2.0
N_JOBS = 30


def tiny_job(dataset: str, seed: int) -> dict:
    stop = {"max_epochs": 5.0, "max_seconds": 10.0}
    spec = {"dataset": dataset, "loss": "logistic", "l2": 1e-2, "solver": "dual_cd"}
    return {**spec, "seed": seed, "stop": stop}


@pytest.fixture
def dispatch_settings(settings_for, monkeypatch):
    """``dispatch_settings(database_url, broker_url)``: settings with a short re-dispatch
    timeout, which the processes started afterwards read from the environment."""
    monkeypatch.setenv("FACEOFF_DISPATCH_TIMEOUT_SECONDS", str(DISPATCH_TIMEOUT))

    def make(database_url: str, broker_url: str) -> Settings:
        return settings_for(database_url, broker_url, DISPATCH_TIMEOUT_SECONDS=DISPATCH_TIMEOUT)

    return make


@contextmanager
def api_process(settings: Settings, log_path: Path) -> Iterator[tuple[subprocess.Popen, str]]:
    """The API with ``settings`` (authentication off): (process, base URL)."""
    with running_api(api_env(settings), log_path) as api:
        yield api.process, api.url


@contextmanager
def ready_worker(settings: Settings) -> Iterator[WorkerProcess]:
    """A running worker whose reaper has made its first pass (set the broker's epoch
    marker), so that the queued jobs it sends later are sent by the re-dispatch alone."""
    with running_worker(settings) as worker, redis.Redis.from_url(settings.BROKER_URL) as client:
        key = EPOCH_KEY.format(queue=settings.QUEUE)
        wait_for(lambda: client.exists(key), 30, "the reaper's first pass", worker)
        yield worker


def add_dataset(url: str) -> str:
    name = f"tiny-{uuid.uuid4().hex[:8]}"
    with session_scope(url) as session:
        session.add(Dataset(name=name, source=TINY))
    return name


def post_unanswered(url: str, body: dict) -> None:
    """POST to an API that is killed before it answers."""
    with pytest.raises(httpx.RemoteProtocolError):
        httpx.post(url, json=body, timeout=120)


def count_jobs(url: str) -> int:
    with session_scope(url) as session:
        return session.scalar(select(func.count()).select_from(Job))


def job_statuses(url: str) -> dict[int, str]:
    with session_scope(url) as session:
        return {job_id: status for job_id, status in session.execute(select(Job.id, Job.status))}


def test_jobs_committed_by_an_api_killed_before_sending_them_run_once(
    postgres_url, redis_url, dispatch_settings, tmp_path
):
    with tcp_proxy(REDIS_HOST, REDIS_PORT) as proxy:
        settings = dispatch_settings(postgres_url, redis_url)
        proxied = settings.model_copy(
            update={"BROKER_URL": f"redis://127.0.0.1:{proxy.port}/{redis_url.rsplit('/', 1)[1]}"}
        )
        dataset = add_dataset(postgres_url)
        sweep = {
            "name": "killed",
            "datasets": [dataset],
            "losses": ["logistic"],
            "l2": [1e-2],
            "solvers": ["dual_cd"],
            "seeds": list(range(N_JOBS)),
            "stop": tiny_job(dataset, 0)["stop"],
        }
        with ready_worker(settings) as worker:
            with api_process(proxied, tmp_path / "faceoff.api.log") as (api, base):
                proxy.blackhole()  # the API's sends hang from now on
                poster = threading.Thread(target=post_unanswered, args=(f"{base}/sweeps", sweep))
                poster.start()
                wait_for(
                    lambda: count_jobs(postgres_url) == N_JOBS, 30, "the sweep's commit", worker
                )
                api.send_signal(signal.SIGKILL)  # committed, not sent
                api.wait()
                poster.join()
            statuses = job_statuses(postgres_url)
            assert set(statuses.values()) == {QUEUED}
            proxy.up()

            with api_process(proxied, tmp_path / "faceoff.api.log") as (_, base):
                again = httpx.post(f"{base}/jobs", json=tiny_job(dataset, 7), timeout=30)
                assert again.status_code == 200, again.text  # the identical job, not a new one
                started = time.monotonic()
                jobs = wait_done(postgres_url, sorted(statuses), worker, timeout=60)
            for job in jobs:
                check_ran_once(postgres_url, job)
            assert again.json()["id"] in {job.id for job in jobs}
            print(f"all {N_JOBS} jobs ended {time.monotonic() - started:.1f} s after the restart")
            assert "left without a message in the broker" in worker.log()


def test_a_requeued_job_whose_reaper_died_before_sending_it_runs(
    postgres_url, redis_url, dispatch_settings
):
    settings = dispatch_settings(postgres_url, redis_url)
    dataset = add_dataset(postgres_url)
    with ready_worker(settings) as worker:
        with session_scope(postgres_url) as session:  # a job whose worker was lost
            job, _ = submit_job(session, JobSpec(**tiny_job(dataset, 0)), settings, team_id=None)
            job.status, job.attempts = RUNNING, 1
            job.heartbeat_at = utcnow() - timedelta(seconds=1)
        # another worker's reaper requeues it and dies before sending it
        assert store.requeue_lost(postgres_url, timeout=0.5) == [(job.id, 10.0, None)]
        (done,) = wait_done(postgres_url, [job.id], worker, timeout=30)
        check_ran_once(postgres_url, done, attempts=2)


def test_a_silent_broker_costs_a_submission_seconds_not_a_hang(
    postgres_url, redis_url, settings_for
):
    """Sends to a broker that accepts connections and never answers are bounded: the job is
    committed, the answer comes within seconds, and the job stays queued for the reaper."""
    from fastapi.testclient import TestClient

    from faceoff.api.main import create_app

    with tcp_proxy(REDIS_HOST, REDIS_PORT) as proxy:
        db = redis_url.rsplit("/", 1)[1]
        settings = settings_for(postgres_url, f"redis://127.0.0.1:{proxy.port}/{db}")
        dataset = add_dataset(postgres_url)
        proxy.blackhole()
        with TestClient(create_app(settings), client=("127.0.0.1", 5000)) as client:
            started = time.monotonic()
            response = client.post("/api/v1/jobs", json=tiny_job(dataset, 0))
            elapsed = time.monotonic() - started
        assert response.status_code == 201, response.text
        assert response.json()["status"] == QUEUED
        assert elapsed < 15, f"the submission took {elapsed:.1f} s"
