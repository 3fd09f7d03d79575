"""The Celery app as the API and the workers share it: broker, queue, delivery guarantees.

Importing this module imports no solver: the API uses it only to send ``run_job`` by name
with the job id.
"""

from __future__ import annotations

import uuid
from functools import lru_cache
from typing import Any

import redis
from celery import Celery

from faceoff.core.machine import host_queue
from faceoff.core.settings import Settings, get_settings

RUN_JOB = "worker.run_job"
# a message's task id names its job, so the job's messages can be found in the broker
TASK_ID = "faceoff-job-{job_id}.{unique}"
SETUP_SECONDS = 120.0  # a job's allowance for loading its dataset, on top of solver time
# a send waits at most this long for the broker per attempt, and is tried twice: a silent
# broker costs a request seconds, not a hang (the job stays queued and is re-dispatched)
SEND_TIMEOUT_SECONDS = 2.0
SEND_RETRY_POLICY = {
    "max_retries": 1,
    "interval_start": 0,
    "interval_step": 0.5,
    "interval_max": 0.5,
}


def celery_config(settings: Settings) -> dict[str, Any]:
    """The Celery configuration the API and the workers share: broker, queue, delivery."""
    return {
        "broker_url": settings.BROKER_URL,
        "task_default_queue": settings.QUEUE,
        "task_acks_late": True,  # run_job is idempotent by (job, seq): redelivery is safe
        "task_reject_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,
        "task_ignore_result": True,
        "task_serializer": "json",
        "accept_content": ["json"],
        "broker_connection_retry_on_startup": True,
        "broker_connection_max_retries": None,
        "worker_hijack_root_logger": False,
    }


@lru_cache
def celery_for(broker_url: str, queue: str) -> Celery:
    """The app that sends jobs (API, reapers): every wait on the broker is bounded."""
    settings = get_settings().model_copy(update={"BROKER_URL": broker_url, "QUEUE": queue})
    app = Celery("faceoff")
    app.conf.update(
        celery_config(settings),
        broker_connection_timeout=SEND_TIMEOUT_SECONDS,
        broker_transport_options={
            "socket_timeout": SEND_TIMEOUT_SECONDS,
            "socket_connect_timeout": SEND_TIMEOUT_SECONDS,
        },
        task_publish_retry_policy=SEND_RETRY_POLICY,
    )
    return app


def time_limits(max_seconds: float, settings: Settings) -> tuple[float, float]:
    """(soft, hard) Celery time limits, in seconds, of a job with ``max_seconds``.

    The solver stops itself after ``max_seconds`` of solver time; evaluating its trace points
    is not solver time and can cost as much again on short runs, and loading the dataset gets
    ``SETUP_SECONDS``. The hard limit, ``HARD_LIMIT_GRACE_SECONDS`` later, kills a process
    stuck in a kernel.
    """
    soft = 2.0 * max_seconds + SETUP_SECONDS
    return soft, soft + settings.HARD_LIMIT_GRACE_SECONDS


CANCEL_GRACE_SECONDS = 0.75  # a cancelled run may stop by itself this long, then is killed


def overshoot(max_seconds: float) -> float:
    """How far past ``max_seconds`` a run may end at most: max(2 s, 10 %)."""
    return max(2.0, 0.1 * max_seconds)


def kill_after(max_seconds: float) -> float:
    """The budget (wall time less the time spent evaluating trace points: worker.runner)
    at which a run that has not stopped at ``max_seconds`` is killed: half the
    :func:`overshoot` past it, leaving the other half to end the job."""
    return max_seconds + overshoot(max_seconds) / 2


def limits_text(settings: Settings) -> dict[str, Any]:
    """Every time limit a job runs under, as GET /health documents them."""
    grace = settings.HARD_LIMIT_GRACE_SECONDS
    return {
        "run_killed_after": "max_seconds + max(1 s, 5 % of max_seconds) of budget (wall time "
        "less trace-point evaluation): the job fails with stop reason time_limit, its points "
        "kept",
        "cancel_grace_seconds": CANCEL_GRACE_SECONDS,
        "soft_limit": f"2 × max_seconds + {SETUP_SECONDS:g} s of wall time (set-up, run and "
        "evaluation): the job fails",
        "hard_limit": f"2 × max_seconds + {SETUP_SECONDS + grace:g} s of wall time: the pool "
        "process is killed and the job fails",
        "max_job_seconds": settings.MAX_JOB_SECONDS,
        "warmup_timeout_seconds": settings.WARMUP_TIMEOUT_SECONDS,
    }


def job_queue(settings: Settings, host: str | None = None) -> str:
    """The queue of jobs pinned to worker ``host`` (core.machine.host_queue), or, for None,
    the queue every worker consumes."""
    return settings.QUEUE if host is None else host_queue(settings.QUEUE, host)


def enqueue(
    job_id: int,
    settings: Settings | None = None,
    max_seconds: float | None = None,
    host: str | None = None,
) -> None:
    """Send ``worker.run_job(job_id)`` to the job queue, or to that of the worker ``host``
    it is pinned to, with the :func:`time_limits` of the job's ``max_seconds`` if given
    (else the worker's limits for ``MAX_JOB_SECONDS`` apply)."""
    settings = settings or get_settings()
    limits = {}
    if max_seconds is not None:
        soft, hard = time_limits(max_seconds, settings)
        limits = {"soft_time_limit": soft, "time_limit": hard}
    celery_for(settings.BROKER_URL, settings.QUEUE).send_task(
        RUN_JOB,
        args=[job_id],
        queue=job_queue(settings, host),
        task_id=TASK_ID.format(job_id=job_id, unique=uuid.uuid4().hex),
        **limits,
    )


# Removes from a queue (a Redis list, KEYS[1]) every message whose text holds ARGV[1]; when
# ARGV[2] is "1" and the queue is then empty, deletes the queue's binding keys (KEYS[2],
# KEYS[3]) too. One script: Redis runs it atomically.
_WITHDRAW = """
local removed = 0
for _, message in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  if string.find(message, ARGV[1], 1, true) then
    removed = removed + redis.call('LREM', KEYS[1], 0, message)
  end
end
if ARGV[2] == '1' and redis.call('LLEN', KEYS[1]) == 0 then
  redis.call('DEL', KEYS[2], KEYS[3])
end
return removed
"""
BINDINGS = ("_kombu.binding.{queue}", "_kombu.binding_permanent.{queue}")
BROKER_TIMEOUT_SECONDS = 2.0


def withdraw(job_id: int, settings: Settings, host: str | None) -> int:
    """Remove job ``job_id``'s messages from its queue (that of the host it is pinned to, or
    the job queue) once it is cancelled, so a cancelled job leaves nothing in the broker; a
    host's queue left empty is forgotten too (kombu's binding keys of it: messages are sent
    to a queue by name, through the default exchange, so nothing needs them). Returns the
    messages removed; 0 for a broker other than Redis. A message already taken by a worker
    is acknowledged by it: its claim finds the job cancelled."""
    if not settings.BROKER_URL.startswith(("redis://", "rediss://", "unix://")):
        return 0
    queue = job_queue(settings, host)
    keys = [queue, *(binding.format(queue=queue) for binding in BINDINGS)]
    needle = TASK_ID.format(job_id=job_id, unique="")
    client = redis.Redis.from_url(
        settings.BROKER_URL,
        socket_connect_timeout=BROKER_TIMEOUT_SECONDS,
        socket_timeout=BROKER_TIMEOUT_SECONDS,
    )
    with client:
        forget = "1" if host is not None else "0"
        return int(client.eval(_WITHDRAW, len(keys), *keys, f'"{needle}', forget))
