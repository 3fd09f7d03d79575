"""The worker's database helpers and warm-up, in process, on SQLite and PostgreSQL."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import timedelta

import numpy as np
import pytest
from sqlalchemy import event, func, select, update
from sqlalchemy.orm import Session

from faceoff.core.db import engine_for, session_scope
from faceoff.core.lifecycle import Event
from faceoff.core.models import (
    CANCELLED,
    FAILED,
    QUEUED,
    RUNNING,
    SUCCEEDED,
    Dataset,
    Job,
    TracePoint,
    utcnow,
)
from faceoff.core.queue import SETUP_SECONDS, celery_for, enqueue, time_limits
from faceoff.core.specs import JobSpec, canonical_job, objective_hash, spec_hash
from faceoff.solvers.catalogue import catalogue
from faceoff.solvers.spec import SolverSpec
from faceoff.solvers.trace import TracePoint as Point
from faceoff.worker import store, warmup


def make_job(url: str, **values) -> int:
    spec = canonical_job(JobSpec(dataset="small", loss="logistic", l2=1e-3, solver="dual_cd"))
    with session_scope(url) as session:
        dataset = Dataset(name=f"small-{time.monotonic_ns()}", source={"kind": "sklearn"})
        job = Job(
            dataset=dataset,
            spec=spec.model_dump(mode="json"),
            spec_hash=spec_hash(spec),
            objective_hash=objective_hash(spec),
            solver=spec.solver,
            loss=spec.loss,
            **values,
        )
        session.add(job)
        session.flush()
        return job.id


def points(start: int, stop: int) -> list[Point]:
    return [
        Point(s, 10 * s, 0.5 * s, 0.01 * s, 1.0 / (s + 1), 0.5, 0.5 / (s + 1), s,
              {"nnz_y": np.int64(s), "lipschitz": np.float64(2.0), "bad": np.inf})
        for s in range(start, stop)
    ]  # fmt: skip


def stored(url: str, job_id: int) -> list[TracePoint]:
    with session_scope(url) as session:
        query = select(TracePoint).where(TracePoint.job_id == job_id).order_by(TracePoint.seq)
        return list(session.scalars(query))


def get_job(url: str, job_id: int) -> Job:
    with session_scope(url) as session:
        return session.get(Job, job_id)


def test_writing_a_batch_twice_keeps_one_copy(database_url):
    job_id = make_job(database_url)
    for _ in range(2):
        with session_scope(database_url) as session:
            store.write_points(session, job_id, points(0, 5))
    with session_scope(database_url) as session:
        store.write_points(session, job_id, points(3, 8))  # overlapping batch
    rows = stored(database_url, job_id)
    assert [r.seq for r in rows] == list(range(8))
    assert rows[4].primal == 1.0 / 5 and rows[4].iteration == 40
    assert rows[4].extras == {"nnz_y": 4, "lipschitz": 2.0, "bad": None}


def test_a_large_batch_twice_keeps_one_copy(database_url):
    """Batches of COPY_MIN_POINTS or more take the COPY path on PostgreSQL."""
    job_id = make_job(database_url)
    size = store.COPY_MIN_POINTS + 50
    for start in (0, 0, size // 2):
        with session_scope(database_url) as session:
            store.write_points(session, job_id, points(start, start + size))
    rows = stored(database_url, job_id)
    assert [r.seq for r in rows] == list(range(size + size // 2))
    assert rows[4].primal == 1.0 / 5 and rows[4].iteration == 40
    assert rows[4].extras == {"nnz_y": 4, "lipschitz": 2.0, "bad": None}


def age_heartbeat(url: str, job_id: int, seconds: float) -> None:
    with session_scope(url) as session:
        then = utcnow() - timedelta(seconds=seconds)
        session.execute(update(Job).where(Job.id == job_id).values(heartbeat_at=then))


def test_a_claimed_job_is_not_claimed_again(database_url):
    job_id = make_job(database_url)
    first = store.claim_job(database_url, job_id, "host:1")
    assert first.attempt == 1
    job = get_job(database_url, job_id)
    assert job.status == RUNNING and job.heartbeat_at is not None
    assert store.claim_job(database_url, job_id, "host:2") is None  # a duplicate delivery
    assert get_job(database_url, job_id).worker_host == "host:1"


def test_heartbeats_keep_a_job_from_the_reaper(database_url):
    job_id = make_job(database_url)
    claim = store.claim_job(database_url, job_id, "host:1")
    age_heartbeat(database_url, job_id, 30)
    assert store.beat(database_url, claim)
    assert store.requeue_lost(database_url, timeout=10) == []
    age_heartbeat(database_url, job_id, 30)
    assert store.save_batch(database_url, claim, points(0, 1))  # a batch is a heartbeat too
    assert store.requeue_lost(database_url, timeout=10) == []
    assert get_job(database_url, job_id).status == RUNNING


def test_a_requeued_job_restarts_its_trace_and_supersedes_the_lost_run(database_url):
    job_id = make_job(database_url)
    first = store.claim_job(database_url, job_id, "host:1")
    assert store.save_batch(database_url, first, points(0, 4))
    job = get_job(database_url, job_id)
    assert (job.n_points, job.epoch, job.primal) == (4, 1.5, 0.25)

    age_heartbeat(database_url, job_id, 30)
    assert store.requeue_lost(database_url, timeout=10) == [
        (job_id, job.spec["stop"]["max_seconds"], None)
    ]
    assert store.requeue_lost(database_url, timeout=10) == []  # one reaper wins
    assert get_job(database_url, job_id).status == QUEUED
    assert not store.beat(database_url, first)
    second = store.claim_job(database_url, job_id, "host:2")
    assert second.attempt == 2
    job = get_job(database_url, job_id)
    assert (job.worker_host, job.n_points, job.primal) == ("host:2", 0, None)
    assert stored(database_url, job_id) == []
    assert not store.save_batch(database_url, first, points(4, 6))  # the lost run writes nothing
    assert not store.finish_job(database_url, first, Event.SUCCEED, "converged", None, [])
    assert store.save_batch(database_url, second, points(0, 2))
    assert store.finish_job(database_url, second, Event.SUCCEED, "converged", None, points(2, 3))
    assert [r.seq for r in stored(database_url, job_id)] == [0, 1, 2]  # the end's points too
    job = get_job(database_url, job_id)
    assert (job.status, job.n_points) == (SUCCEEDED, 3)


def test_a_run_records_its_trace_mode_at_start_and_its_wall_time_at_its_end(database_url):
    job_id = make_job(database_url)
    first = store.claim_job(database_url, job_id, "host:1")
    identity = store.Identity("d" * 64, "o" * 64, "refit")
    assert store.set_identity(database_url, first, identity)
    job = get_job(database_url, job_id)
    assert (job.trace_mode, job.wall_s, job.data_hash) == ("refit", None, "d" * 64)
    assert store.finish_job(database_url, first, Event.SUCCEED, "converged", None, [], None, 1.5)
    job = get_job(database_url, job_id)
    assert (job.status, job.trace_mode, job.wall_s) == (SUCCEEDED, "refit", 1.5)

    # a rerun starts without them; an identity not written at start comes with the end
    with session_scope(database_url) as session:
        session.execute(update(Job).where(Job.id == job_id).values(status=QUEUED))
    second = store.claim_job(database_url, job_id, "host:2")
    job = get_job(database_url, job_id)
    assert (job.trace_mode, job.wall_s) == (None, None)
    identity = store.Identity("e" * 64, "p" * 64, "native")
    assert store.finish_job(database_url, second, Event.FAIL, None, "boom", [], identity)
    job = get_job(database_url, job_id)
    assert (job.trace_mode, job.wall_s, job.data_hash) == ("native", None, "e" * 64)


def test_a_job_whose_message_was_not_sent_is_requeued_again(database_url):
    job_id = make_job(database_url)
    store.claim_job(database_url, job_id, "host")
    age_heartbeat(database_url, job_id, 30)
    assert [send.job_id for send in store.requeue_lost(database_url, timeout=10)] == [job_id]
    store.unqueue(database_url, job_id)  # the broker was down
    assert get_job(database_url, job_id).status == RUNNING
    assert [send.job_id for send in store.requeue_lost(database_url, timeout=10)] == [job_id]
    assert store.queued_jobs(database_url) == [(job_id, 60.0, None)]


def test_a_job_lost_too_often_fails(database_url):
    job_id = make_job(database_url)
    for attempt in range(1, store.MAX_ATTEMPTS + 1):
        assert store.claim_job(database_url, job_id, "host").attempt == attempt
        age_heartbeat(database_url, job_id, 30)
        requeued = store.requeue_lost(database_url, timeout=10)
        assert [s.job_id for s in requeued] == ([job_id] if attempt < store.MAX_ATTEMPTS else [])
    assert store.claim_job(database_url, job_id, "host") is None
    job = get_job(database_url, job_id)
    assert job.status == FAILED
    assert job.error.startswith(f"the worker running this job was lost {store.MAX_ATTEMPTS} times")


def test_claim_skips_missing_finished_and_cancelled_jobs(database_url):
    assert store.claim_job(database_url, 12345, "host") is None
    done = make_job(database_url, status=SUCCEEDED)
    assert store.claim_job(database_url, done, "host") is None
    assert get_job(database_url, done).attempts == 0
    cancelled = make_job(database_url, cancel_requested=True)
    assert store.claim_job(database_url, cancelled, "host") is None
    job = get_job(database_url, cancelled)
    assert (job.status, job.stop_reason, job.attempts) == (CANCELLED, "cancelled", 0)
    assert job.finished_at is not None


def test_fail_running_job_only_touches_running_jobs(database_url):
    job_id = make_job(database_url)
    assert not store.fail_running_job(database_url, job_id, "killed")  # still queued
    store.claim_job(database_url, job_id, "host")
    assert store.fail_running_job(database_url, job_id, "killed")
    assert (get_job(database_url, job_id).status, get_job(database_url, job_id).error) == (
        FAILED,
        "killed",
    )


def test_cancel_check_reads_the_database_at_most_every_interval(database_url):
    job_id = make_job(database_url)
    claim = store.claim_job(database_url, job_id, "host")
    reads = []
    engine = engine_for(database_url)

    def count(conn, cursor, statement, *args):
        if "cancel_requested" in statement and statement.lstrip().upper().startswith("SELECT"):
            reads.append(statement)

    event.listen(engine, "before_cursor_execute", count)
    try:
        check = store.CancelCheck(database_url, claim, interval=0.2)
        assert not any(check() for _ in range(100))
        assert reads == []  # the claim has just read the job: the first read waits an interval
        time.sleep(0.25)
        assert not check()
        assert len(reads) == 1
        with Session(engine) as session, session.begin():
            session.execute(update(Job).where(Job.id == job_id).values(cancel_requested=True))
        assert not check()  # the cached answer, until the interval has passed
        time.sleep(0.25)
        assert check() and check()
        assert len(reads) == 2
    finally:
        event.remove(engine, "before_cursor_execute", count)


def test_a_solver_that_fails_to_warm_up_is_reported_and_refused(monkeypatch, caplog):
    ghost = SolverSpec(
        "ghost", "Ghost", "none", "primal", module="faceoff.solvers.algorithms.ghost_not_written"
    )
    monkeypatch.setitem(catalogue(), "ghost", ghost)
    monkeypatch.setattr(warmup, "UNAVAILABLE", {})
    failed = warmup.warm_up(["ghost", "agd"])  # in a child process
    assert list(failed) == ["ghost"]
    assert failed["ghost"].startswith("its warm-up failed: ModuleNotFoundError: ")
    assert "solver 'ghost' is unavailable on this worker" in caplog.text
    warmup.check_available("agd", "h1")
    with pytest.raises(RuntimeError, match="solver 'ghost' is not available on worker h1"):
        warmup.check_available("ghost", "h1")


_IMPORTS = """
import os, sys
import faceoff.core.settings

read, started = faceoff.core.settings.get_settings, []

def get_settings():
    assert started, "settings read at import"
    return read()

faceoff.core.settings.get_settings = get_settings
import faceoff.solvers, faceoff.solvers.catalogue
assert "NUMBA_CACHE_DIR" not in os.environ, "importing faceoff.solvers set the Numba cache"
import faceoff.worker.__main__, faceoff.worker.celery_app
assert "numba" not in sys.modules, "importing the worker's app imported Numba"
import faceoff.worker.tasks
from faceoff.worker.celery_app import celery_app
started.append(True)
print(celery_app.conf.task_default_queue, celery_app.conf.task_routes["worker.run_job"])
"""


def test_the_worker_reads_its_settings_when_it_starts_not_on_import():
    """Importing the worker (its app, entry point and task) reads no setting and sets no
    Numba cache; the app's configuration comes from the settings of its first use."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["FACEOFF_QUEUE"] = "q-start"
    ran = subprocess.run(
        [sys.executable, "-c", _IMPORTS], capture_output=True, text=True, env=env, timeout=120
    )
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert ran.stdout.split() == ["q-start", "{'queue':", "'q-start'}"]


def test_enqueue_sends_the_time_limits_of_the_job(redis_url, settings_for, sqlite_url):
    settings = settings_for(sqlite_url, redis_url, HARD_LIMIT_GRACE_SECONDS=30.0)
    soft, hard = time_limits(10.0, settings)
    assert (soft, hard) == (20.0 + SETUP_SECONDS, 20.0 + SETUP_SECONDS + 30.0)
    enqueue(7, settings, max_seconds=10.0)
    enqueue(8, settings)
    app = celery_for(settings.BROKER_URL, settings.QUEUE)
    with app.connection_for_read() as conn, conn.SimpleQueue(settings.QUEUE) as queue:
        messages = [queue.get(timeout=5) for _ in range(2)]
        for message in messages:
            message.ack()
    assert [m.headers["argsrepr"] for m in messages] == ["[7]", "[8]"]
    assert [m.headers["timelimit"] for m in messages] == [[hard, soft], [None, None]]


def test_summary_count_matches_rows(database_url):
    job_id = make_job(database_url)
    claim = store.claim_job(database_url, job_id, "host")
    batch = points(0, 3)
    assert store.save_batch(database_url, claim, batch)
    assert store.save_batch(database_url, claim, batch)  # a repeated batch changes nothing
    with session_scope(database_url) as session:
        count = session.scalar(select(func.count()).where(TracePoint.job_id == job_id))
    assert count == get_job(database_url, job_id).n_points == 3


def test_a_claim_carries_the_test_dataset_the_jobs_team_sees(database_url):
    """{"split": "dataset"}: the claim holds the source of the dataset of that name the
    job's team may use (a shared one here), None once no such dataset is registered."""
    name = f"held-{time.monotonic_ns()}"
    source = {"kind": "synthetic", "generator": "classification", "n_samples": 50,
              "n_features": 5, "density": 1.0, "seed": 4}  # fmt: skip
    with session_scope(database_url) as session:
        session.add(Dataset(name=name, source=source))
    test = {"split": "dataset", "dataset": name}
    spec = canonical_job(
        JobSpec(dataset="small", loss="logistic", l2=1e-3, solver="dual_cd", test=test)
    )
    job_ids = []
    for _ in range(2):
        job_ids.append(make_job(database_url))
        with session_scope(database_url) as session:
            session.get(Job, job_ids[-1]).spec = spec.model_dump(mode="json")
    assert store.claim_job(database_url, job_ids[0], "host:1").test_source == source
    with session_scope(database_url) as session:
        session.execute(update(Dataset).where(Dataset.name == name).values(name=name + "-gone"))
    assert store.claim_job(database_url, job_ids[1], "host:1").test_source is None
    assert store.claim_job(database_url, make_job(database_url), "host:1").test_source is None
