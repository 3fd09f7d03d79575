"""What each live worker can run: its record in the broker, read by the API.

Every worker's main process (its reaper, worker.reaper) writes a record under
``faceoff:worker:<queue>:<worker>`` in the Redis broker, again every pass, expiring
``RECORD_TTL_SECONDS`` after the last: its host, its Faceoff version, the plug-ins installed
there (name → distribution and version) and the solvers unavailable there, with the reason
(a warm-up that failed, crashed or timed out: worker.warmup). The API shows them in GET
/solvers (``unavailable_on``) and refuses a job whose solver no live worker can run, naming
each worker's host and reason (:func:`unavailable_everywhere`).
"""

from __future__ import annotations

import json
import logging
from typing import Any

import redis

from faceoff.core.settings import Settings

log = logging.getLogger(__name__)

RECORD_KEY = "faceoff:worker:{queue}:{worker}"
RECORD_TTL_SECONDS = 20.0  # a worker not heard of for this long is taken as gone
TIMEOUT_SECONDS = 1.0


def _client(settings: Settings) -> redis.Redis | None:
    if not settings.BROKER_URL.startswith(("redis://", "rediss://", "unix://")):
        return None
    return redis.Redis.from_url(
        settings.BROKER_URL,
        socket_connect_timeout=TIMEOUT_SECONDS,
        socket_timeout=TIMEOUT_SECONDS,
    )


def publish(settings: Settings, worker: str, record: dict[str, Any], ttl: float) -> None:
    """Write this worker's record, expiring in ``ttl`` seconds."""
    client = _client(settings)
    if client is None:
        return
    key = RECORD_KEY.format(queue=settings.QUEUE, worker=worker)
    with client:
        client.set(key, json.dumps(record, sort_keys=True), px=int(ttl * 1000))


def records(settings: Settings) -> list[dict[str, Any]]:
    """The records of the live workers of this queue, by worker; [] if the broker cannot
    be read (nothing is then refused for it)."""
    client = _client(settings)
    if client is None:
        return []
    pattern = RECORD_KEY.format(queue=settings.QUEUE.replace("*", r"\*"), worker="*")
    try:
        with client:
            keys = sorted(client.scan_iter(match=pattern, count=100))
            values = client.mget(keys) if keys else []
    except redis.RedisError as err:
        log.warning("reading the workers' records failed: %s", err)
        return []
    found = []
    for value in values:
        if value is None:
            continue
        try:
            found.append(json.loads(value))
        except ValueError:
            continue
    return found


def unavailable_on(solver: str, live: list[dict[str, Any]]) -> list[dict[str, str]]:
    """[{host, reason}] of the live workers that cannot run ``solver``."""
    found = []
    for record in live:
        host = str(record.get("host"))
        if solver in record.get("unavailable", {}):
            found.append({"host": host, "reason": str(record["unavailable"][solver])})
        elif solver not in record.get("solvers", [solver]):
            version = record.get("faceoff", "?")
            reason = f"plug-in {solver} is not installed on worker {host} (faceoff {version})"
            found.append({"host": host, "reason": reason})
    return found


def unavailable_everywhere(solver: str, settings: Settings) -> str | None:
    """Why no live worker can run ``solver``, naming each host and its reason; None if one
    can, or if no worker has a record (a job then waits for one, as before)."""
    live = records(settings)
    missing = unavailable_on(solver, live)
    if not live or len(missing) < len(live):
        return None
    reasons = "; ".join(f"{m['host']}: {m['reason']}" for m in missing)
    return f"no live worker can run solver {solver!r} ({reasons})"
