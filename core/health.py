"""Whether the service's parts answer: the database, the broker, and live workers."""

from __future__ import annotations

import logging
import threading
import time

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


def live_workers(settings: Settings, timeout: float = INSPECT_SECONDS) -> tuple[int, list[str]]:
    """(workers answering within ``timeout`` seconds that consume this server's queue, the
    hosts whose pinned-job queues they consume, sorted); (0, []) if the broker fails
    meanwhile. A job may be pinned to a host not listed only with ``wait_for_host``."""
    inspect = celery_for(settings.BROKER_URL, settings.QUEUE).control.inspect(timeout=timeout)
    try:
        replies = inspect.active_queues() or {}
    except Exception as err:
        log.warning("counting workers failed: %s", _problem(err))
        return 0, []
    prefix = host_queue(settings.QUEUE, "")
    workers, hosts = 0, set[str]()
    for queues in replies.values():
        names = [queue.get("name") or "" for queue in queues]
        if settings.QUEUE in names:
            workers += 1
            hosts.update(name[len(prefix) :] for name in names if name.startswith(prefix))
    return workers, sorted(hosts)


FRESH_SECONDS = 10.0  # a host seen serving this recently is taken as live by submissions
REFRESH_SECONDS = 1.0  # a host not seen is looked for again at most this often
MISSING_INSPECT_SECONDS = 2.0  # how long a look for a host not seen waits for workers' replies
_seen: dict[tuple[str, str], tuple[float, tuple[str, ...]]] = {}
_seen_lock = threading.Lock()


def live_hosts(settings: Settings, host: str | None = None) -> tuple[str, ...]:
    """The hosts live workers serve (GET /health's ``worker_hosts``), as seen within
    FRESH_SECONDS; asking whether ``host`` is one looks again when it was not seen and the
    last look is older than REFRESH_SECONDS, waiting MISSING_INSPECT_SECONDS for the
    workers' replies (a busy worker may answer late, and refusing a live host costs more
    than the wait). One look at a time per process: a burst of pinned submissions costs one
    broadcast, not one each."""
    key = (settings.BROKER_URL, settings.QUEUE)
    with _seen_lock:
        at, hosts = _seen.get(key, (-float("inf"), ()))
        age = time.monotonic() - at
        missing = host is not None and host not in hosts
        if age > FRESH_SECONDS or (missing and age > REFRESH_SECONDS):
            timeout = MISSING_INSPECT_SECONDS if missing else INSPECT_SECONDS
            hosts = tuple(live_workers(settings, timeout)[1])
            _seen[key] = (time.monotonic(), hosts)
    return hosts
