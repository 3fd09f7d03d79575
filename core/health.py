"""Whether the service's parts answer: the database, the broker, and live workers."""

from __future__ import annotations

import json
import logging
import threading
import time
from typing import NamedTuple

import redis
from sqlalchemy import text

from faceoff.core.db import session_factory
from faceoff.core.machine import host_queue
from faceoff.core.queue import celery_for
from faceoff.core.settings import Settings

log = logging.getLogger(__name__)

TIMEOUT_SECONDS = 1.0
INSPECT_SECONDS = 0.5


def _problem(err: Exception) -> str:
    first = str(err).strip().splitlines()
    return f"{type(err).__name__}: {first[0] if first else 'no message'}"


def check_database(settings: Settings) -> str:
    """ "ok" when the database answers a query, else the error's type and first line."""
    try:
        with session_factory(settings.database_url)() as session:
            session.execute(text("SELECT 1"))
    except Exception as err:
        return _problem(err)
    return "ok"


def check_broker(settings: Settings) -> str:
    """ "ok" when the broker (Redis) answers a ping within TIMEOUT_SECONDS, else the error."""
    try:
        client = redis.Redis.from_url(
            settings.BROKER_URL,
            socket_connect_timeout=TIMEOUT_SECONDS,
            socket_timeout=TIMEOUT_SECONDS,
        )
        with client:
            client.ping()
    except Exception as err:
        return _problem(err)
    return "ok"


class Workers(NamedTuple):
    """Live workers: how many, the hosts they serve, and each one's capacity record."""

    workers: int
    hosts: list[str]
    memory: list[dict]


def capacity_key(queue: str) -> str:
    """The broker's hash where each worker of ``queue`` records, under its node name, what
    one of its jobs may take (worker.celery_app: :func:`record_capacity`)."""
    return f"{queue}:worker-memory"


def record_capacity(settings: Settings, node: str, capacity: dict) -> None:
    """Record worker ``node``'s ``capacity`` ({host, memory_bytes, concurrency, job_bytes})."""
    with redis.Redis.from_url(settings.BROKER_URL, socket_timeout=TIMEOUT_SECONDS) as client:
        client.hset(capacity_key(settings.QUEUE), node, json.dumps(capacity))


def _capacities(settings: Settings, nodes: list[str]) -> list[dict]:
    """What the live worker ``nodes`` recorded at start (older records are of dead workers)."""
    if not nodes:
        return []
    with redis.Redis.from_url(settings.BROKER_URL, socket_timeout=TIMEOUT_SECONDS) as client:
        found = client.hmget(capacity_key(settings.QUEUE), nodes)
    return [json.loads(raw) for raw in found if raw is not None]


def live_workers(settings: Settings, timeout: float = INSPECT_SECONDS) -> Workers:
    """The workers answering within ``timeout`` seconds that consume this server's queue:
    how many, the hosts whose pinned-job queues they consume (sorted), and what a job of
    each may take (:class:`Workers`); none if the broker fails meanwhile. A job may be
    pinned to a host not listed only with ``wait_for_host``."""
    inspect = celery_for(settings.BROKER_URL, settings.QUEUE).control.inspect(timeout=timeout)
    try:
        replies = inspect.active_queues() or {}
    except Exception as err:
        log.warning("counting workers failed: %s", _problem(err))
        return Workers(0, [], [])
    prefix = host_queue(settings.QUEUE, "")
    nodes, hosts = [], set[str]()
    for node, queues in replies.items():
        names = [queue.get("name") or "" for queue in queues]
        if settings.QUEUE in names:
            nodes.append(node)
            hosts.update(name[len(prefix) :] for name in names if name.startswith(prefix))
    try:
        memory = _capacities(settings, sorted(nodes))
    except Exception as err:
        log.warning("reading the workers' memory failed: %s", _problem(err))
        memory = []
    return Workers(len(nodes), sorted(hosts), memory)


FRESH_SECONDS = 10.0  # a host seen serving this recently is taken as live by submissions
REFRESH_SECONDS = 1.0  # a host not seen is looked for again at most this often
MISSING_INSPECT_SECONDS = 2.0  # how long a look for a host not seen waits for workers' replies
_seen: dict[tuple[str, str], tuple[float, Workers]] = {}
_seen_lock = threading.Lock()


def _seen_workers(settings: Settings, host: str | None = None) -> Workers:
    """The live workers as seen within FRESH_SECONDS (see :func:`live_hosts`)."""
    key = (settings.BROKER_URL, settings.QUEUE)
    with _seen_lock:
        at, seen = _seen.get(key, (-float("inf"), Workers(0, [], [])))
        age = time.monotonic() - at
        missing = host is not None and host not in seen.hosts
        if age > FRESH_SECONDS or (missing and age > REFRESH_SECONDS):
            timeout = MISSING_INSPECT_SECONDS if missing else INSPECT_SECONDS
            # a broker that does not answer a ping within a second: no worker is seen
            up = check_broker(settings) == "ok"
            seen = live_workers(settings, timeout) if up else Workers(0, [], [])
            if up and not seen.workers and timeout < MISSING_INSPECT_SECONDS:
                # none answered the quick look: a busy worker may answer late, and a job
                # admitted without its workers' memory may be one none of them can hold
                seen = live_workers(settings, MISSING_INSPECT_SECONDS)
            _seen[key] = (time.monotonic(), seen)
    return seen


def live_hosts(settings: Settings, host: str | None = None) -> tuple[str, ...]:
    """The hosts live workers serve (GET /health's ``worker_hosts``), as seen within
    FRESH_SECONDS; asking whether ``host`` is one looks again when it was not seen and the
    last look is older than REFRESH_SECONDS, waiting MISSING_INSPECT_SECONDS for the
    workers' replies (a busy worker may answer late, and refusing a live host costs more
    than the wait). One look at a time per process: a burst of pinned submissions costs one
    broadcast, not one each."""
    return tuple(_seen_workers(settings, host).hosts)


def job_capacity(settings: Settings, host: str | None = None) -> dict | None:
    """The record of the live worker whose jobs may take the most memory (of ``host`` if
    given), as seen within FRESH_SECONDS; None when no live worker recorded one."""
    records = [
        record
        for record in _seen_workers(settings, host).memory
        if record.get("job_bytes") is not None and host in (None, record.get("host"))
    ]
    return max(records, key=lambda record: record["job_bytes"], default=None)
