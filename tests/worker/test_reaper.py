"""The worker's reaper, in process, on SQLite and PostgreSQL with a real Redis broker: a
queued job whose message was never sent goes to the queue of the host it is pinned to."""

from __future__ import annotations

import redis

from faceoff.core.db import session_scope
from faceoff.core.models import Job
from faceoff.core.queue import enqueue, job_queue
from faceoff.worker import store
from faceoff.worker.reaper import Reaper
from tests.worker.test_store import make_job


def pinned_job(url: str, host: str | None) -> int:
    """A queued job pinned to ``host`` (None: any), never sent."""
    job_id = make_job(url)
    with session_scope(url) as session:
        job = session.get(Job, job_id)
        job.spec, job.pinned_host = {**job.spec, "host": host}, host
        job.dispatched_at = None
    return job_id


def waiting(settings, host: str | None) -> int:
    with redis.Redis.from_url(settings.BROKER_URL) as client:
        return client.llen(job_queue(settings, host))


def test_the_reaper_sends_each_pinned_job_to_its_hosts_queue_once(
    database_url, redis_url, settings_for
):
    settings = settings_for(database_url, redis_url, DISPATCH_TIMEOUT_SECONDS=1.0)
    free, busy = pinned_job(database_url, None), pinned_job(database_url, "busy")
    idle = pinned_job(database_url, "idle")
    assert store.pinned_hosts(database_url) == ["busy", "idle"]
    assert store.take_overdue(database_url, 1.0, []) == []
    enqueue(busy, settings, 10.0, "busy")  # its message waits: no worker on "busy"
    Reaper(settings).dispatch_overdue()
    # the job queue and "idle"'s were empty: their jobs are sent there; "busy"'s is not
    # sent twice while its message waits
    assert (waiting(settings, None), waiting(settings, "idle"), waiting(settings, "busy")) == (
        1,
        1,
        1,
    )
    assert [s.job_id for s in store.take_overdue(database_url, 0.0, ["busy"])] == [busy]
    assert {s.job_id: s.host for s in store.queued_jobs(database_url)} == {
        free: None,
        busy: "busy",
        idle: "idle",
    }


def test_a_reaper_clears_the_wait_of_jobs_pinned_to_its_host(
    database_url, redis_url, settings_for, monkeypatch
):
    """A job submitted with wait_for_host says it waits for its host until a worker there
    runs its reaper (or claims it); jobs waiting for other hosts keep waiting."""
    monkeypatch.setenv("FACEOFF_WORKER_HOST", "here")
    settings = settings_for(database_url, redis_url)
    mine, theirs = pinned_job(database_url, "here"), pinned_job(database_url, "there")
    with session_scope(database_url) as session:
        for job_id, host in ((mine, "here"), (theirs, "there")):
            session.get(Job, job_id).waiting_for_host = host
    Reaper(settings).serve_waiting()
    with session_scope(database_url) as session:
        assert session.get(Job, mine).waiting is None
        assert session.get(Job, theirs).waiting == "waiting for host there"
