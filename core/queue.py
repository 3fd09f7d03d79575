"""The Celery app as the API and the workers share it: broker, queue, delivery guarantees.

Importing this module imports no solver: the API uses it only to send ``run_job`` by name
with the job id.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from celery import Celery

from faceoff.core.machine import host_queue
from faceoff.core.settings import Settings, get_settings

RUN_JOB = "worker.run_job"
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
        RUN_JOB, args=[job_id], queue=job_queue(settings, host), **limits
    )
