"""Whether the service's parts answer: the database, the broker, and live workers."""

from __future__ import annotations

import logging

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


def live_workers(settings: Settings) -> tuple[int, list[str]]:
    """(workers answering within INSPECT_SECONDS that consume this server's queue, the
    hosts whose pinned-job queues they consume, sorted); (0, []) if the broker fails
    meanwhile. A job pinned to a host not listed waits queued until a worker there starts."""
    inspect = celery_for(settings.BROKER_URL, settings.QUEUE).control.inspect(
        timeout=INSPECT_SECONDS
    )
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
