"""Lost jobs: the heartbeat of a running job and the reaper that requeues jobs without one.

Each run refreshes its job's ``heartbeat_at`` from a :class:`Heartbeat` thread (and with
every trace batch). A :class:`Reaper` thread in every worker's main process requeues the
running jobs whose heartbeat is older than ``HEARTBEAT_TIMEOUT_SECONDS`` — their worker
was killed as a whole, lost its pool process or its host — and sends them again; the
atomic claim (:func:`faceoff.worker.store.claim_job`) lets one delivery run a job. It waits for a
full timeout of database access after starting or after an outage first, so a heartbeat
that could not be written during the outage is not taken for a lost worker.

A Redis without persistence forgets its queues when it restarts. The reaper keeps a marker
key (``faceoff:broker-epoch:<queue>``) in the broker; when it finds the key missing, it
sends every queued job again (a duplicate message is skipped by the claim) and sets it.

Every pass also writes the worker's record in the broker (core.workers: its host, version,
plug-ins and the solvers unavailable here), which the API reads.

A job submitted with ``wait_for_host`` to a host no live worker served says it waits for
that host (``Job.waiting_for_host``); every pass of a reaper clears that for its own host.

A job is committed queued before its message is sent (by the API, or by the reaper's
requeue), so a process that dies in between, or a broker that cannot be reached then,
leaves a queued job without a message. ``Job.dispatched_at`` records when a job's message
was last sent (or due to be); when the broker's queue is empty — no message of any queued
job can be waiting in it — the reaper sends again the queued jobs whose last send is older
than ``DISPATCH_TIMEOUT_SECONDS``, taking them by one conditional UPDATE so that of several
reapers one sends each. A job waiting behind others in the queue is never sent twice; a
duplicate can only arise for a message taken by a worker that has not claimed it for that
long, and the claim skips it.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable

import redis

from faceoff.core import workers
from faceoff.core.db import brief, is_unavailable
from faceoff.core.machine import worker_host_name
from faceoff.core.queue import enqueue, job_queue
from faceoff.core.settings import Settings
from faceoff.worker import store

log = logging.getLogger(__name__)

EPOCH_KEY = "faceoff:broker-epoch:{queue}"
BROKER_TIMEOUT_SECONDS = 2.0


def check_interval(settings: Settings) -> float:
    """Seconds between two heartbeats of a run, and between two passes of the reaper."""
    return min(5.0, settings.HEARTBEAT_TIMEOUT_SECONDS / 5)


class Heartbeat(threading.Thread):
    """Refreshes the claimed job's heartbeat every :func:`check_interval` until stopped;
    a database error is logged and the next beat tried as usual."""

    def __init__(self, settings: Settings, claim: store.Claim) -> None:
        super().__init__(name=f"heartbeat-{claim.job_id}", daemon=True)
        self.url = settings.database_url
        self.claim = claim
        self.interval = check_interval(settings)
        self._stopped = threading.Event()

    def run(self) -> None:
        while not self._stopped.wait(self.interval):
            try:
                if not store.beat(self.url, self.claim):
                    return  # superseded: the run stops at its next cancel check
            except Exception as err:
                log.warning("job %d: heartbeat not written: %s", self.claim.job_id, brief(err))

    def __enter__(self) -> Heartbeat:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stopped.set()
        self.join()


class Reaper(threading.Thread):
    """Every :func:`check_interval` (at most half ``DISPATCH_TIMEOUT_SECONDS``): re-send the
    queued jobs if the broker lost them, requeue the running jobs whose worker was lost, and
    send the queued jobs left without a message (see the module doc)."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(name="faceoff-reaper", daemon=True)
        self.settings = settings
        self.url = settings.database_url
        self.interval = min(check_interval(settings), settings.DISPATCH_TIMEOUT_SECONDS / 2)
        self.epoch_key = EPOCH_KEY.format(queue=settings.QUEUE)
        self._db_ok_since: float | None = None
        self._stopped = threading.Event()

    def stop(self) -> None:
        self._stopped.set()
        self.join()

    def run(self) -> None:
        log.info(
            "reaper started: jobs silent for %g s are requeued",
            self.settings.HEARTBEAT_TIMEOUT_SECONDS,
        )
        self.run_duty(self.publish_record)
        while not self._stopped.wait(self.interval):
            self.run_once()

    def run_once(self) -> None:
        """One pass of each duty; an error is logged and the next pass tries again."""
        duties = (
            self.publish_record,
            self.resend_if_broker_lost,
            self.requeue_lost,
            self.dispatch_overdue,
            self.serve_waiting,
        )
        for duty in duties:
            self.run_duty(duty)

    def run_duty(self, duty: Callable[[], None]) -> None:
        try:
            duty()
        except Exception as err:
            if is_unavailable(err):
                self._db_ok_since = None
            log.warning("reaper: %s failed: %s", duty.__name__, brief(err))

    def publish_record(self) -> None:
        """Write this worker's record (core.workers), to expire unless written again."""
        from faceoff import __version__
        from faceoff.solvers.catalogue import catalogue, distribution_of
        from faceoff.worker.warmup import UNAVAILABLE

        solvers = catalogue()
        worker = f"{socket.gethostname()}:{os.getpid()}"
        record = {
            "host": worker_host_name(self.settings),
            "worker": worker,
            "faceoff": __version__,
            "solvers": sorted(solvers),
            "distributions": {name: distribution_of(name) for name in solvers},
            "unavailable": dict(UNAVAILABLE),
        }
        ttl = max(workers.RECORD_TTL_SECONDS, 3 * self.interval)
        workers.publish(self.settings, worker, record, ttl)

    def _broker(self) -> redis.Redis | None:
        """A client of the Redis broker (None for another broker), with short timeouts."""
        if not self.settings.BROKER_URL.startswith(("redis://", "rediss://")):
            return None
        return redis.Redis.from_url(
            self.settings.BROKER_URL,
            socket_connect_timeout=BROKER_TIMEOUT_SECONDS,
            socket_timeout=BROKER_TIMEOUT_SECONDS,
        )

    def resend_if_broker_lost(self) -> None:
        """Send every queued job again if the broker's epoch marker is gone."""
        if (client := self._broker()) is None:
            return
        with client:
            if client.exists(self.epoch_key):
                return
            queued = store.queued_jobs(self.url)
            for send in queued:
                enqueue(send.job_id, self.settings, send.max_seconds, send.host)
            client.set(self.epoch_key, f"{socket.gethostname()} {time.time():.0f}", nx=True)
        if queued:
            log.warning(
                "the broker had no epoch marker for this queue (first start, or Redis restarted "
                "empty): sent the %d queued jobs again",
                len(queued),
            )

    def requeue_lost(self) -> None:
        """Requeue and send the running jobs whose heartbeat is too old, once the database
        has answered for a whole timeout; a job that cannot be sent is put back for a later
        pass."""
        timeout = self.settings.HEARTBEAT_TIMEOUT_SECONDS
        now = time.monotonic()
        if self._db_ok_since is None or now - self._db_ok_since < timeout:
            store.ping(self.url)
            self._db_ok_since = self._db_ok_since or now
            return
        for send in store.requeue_lost(self.url, timeout):
            try:
                enqueue(send.job_id, self.settings, send.max_seconds, send.host)
            except Exception as err:
                store.unqueue(self.url, send.job_id)
                log.warning(
                    "job %d could not be sent (%s); a later pass tries again", send.job_id, err
                )

    def serve_waiting(self) -> None:
        """This worker serves its host: the queued jobs submitted to wait for it no longer
        say they are waiting for a host (they wait for their turn)."""
        served = store.host_served(self.url, worker_host_name(self.settings))
        if served:
            log.info("%d queued jobs pinned to this host no longer wait for a worker", served)

    def dispatch_overdue(self) -> None:
        """Send the queued jobs not sent for ``DISPATCH_TIMEOUT_SECONDS`` whose queue in the
        broker is empty (the job queue, or the queue of the host a job is pinned to); the
        jobs not sent are taken again by a later pass."""
        if (client := self._broker()) is None:
            return
        hosts: list[str | None] = [None, *store.pinned_hosts(self.url)]
        with client:
            # messages waiting in a queue may be its queued jobs'
            empty = [host for host in hosts if not client.llen(job_queue(self.settings, host))]
        overdue = store.take_overdue(self.url, self.settings.DISPATCH_TIMEOUT_SECONDS, empty)
        for index, send in enumerate(overdue):
            try:
                enqueue(send.job_id, self.settings, send.max_seconds, send.host)
            except Exception as err:
                store.untake(self.url, [later.job_id for later in overdue[index:]])
                log.warning("queued jobs could not be sent (%s); a later pass tries again", err)
                return
        if overdue:
            ids = [str(send.job_id) for send in overdue]
            log.warning(
                "sent %d queued jobs left without a message in the broker for %g s: %s",
                len(ids),
                self.settings.DISPATCH_TIMEOUT_SECONDS,
                ", ".join(ids[:10]) + (", …" if len(ids) > 10 else ""),
            )
