"""The worker's Celery app (``celery -A faceoff.worker.celery_app worker``).

Importing this module reads no setting and imports no solver: the app's configuration
(:func:`worker_config`, from ``core.settings``) is read when the worker starts. The worker
sets Numba's cache folder (:func:`faceoff.solvers.numba_cache.configure_numba_cache`) on
``import_modules``, before Celery imports the task module: Numba fixes a kernel's cache
folder when the kernel's module is imported. The kernels are compiled into that cache when
the worker starts (``celeryd_after_setup``: logging is configured, the pool is not forked
yet), in child processes (worker.warmup), so a solver that crashes or hangs there cannot
take the worker with it; the main process then loads the kernels that passed from the
cache, and every pool process inherits them and which solvers are unavailable. A pool
process drops the database connections it inherits.
Once the worker consumes (``worker_ready``), its main process runs a
:class:`faceoff.worker.reaper.Reaper` until it shuts down.

Besides the job queue, every worker consumes its host's queue (``<queue>.host.<host>``,
core.machine.host_queue), where the jobs pinned to that host are sent; it collects its
machine record (core.machine) before forking, and warns when it runs more jobs at once
than its host has physical cores.
"""

from __future__ import annotations

import logging
from typing import Any

from celery import Celery
from celery.signals import (
    celeryd_after_setup,
    import_modules,
    worker_process_init,
    worker_ready,
    worker_shutdown,
)

from faceoff.core.db import engine_for
from faceoff.core.health import record_capacity
from faceoff.core.machine import host_queue, machine_record
from faceoff.core.queue import RUN_JOB, celery_config, time_limits
from faceoff.core.settings import Settings, get_settings, worker_job_bytes
from faceoff.solvers.numba_cache import configure_numba_cache
from faceoff.worker.reaper import Reaper

log = logging.getLogger(__name__)


def worker_config(settings: Settings) -> dict[str, Any]:
    """The worker's Celery configuration: the shared one (core.queue), ``run_job`` on the
    job queue, and the limits of a message sent without them."""
    # a message without limits (enqueued without max_seconds) has only a hard limit, that
    # of the longest job allowed; a default soft limit would also postpone a message's own
    # hard limit (the pool starts the hard timer when the soft one fires)
    _, hard = time_limits(settings.MAX_JOB_SECONDS, settings)
    return {
        **celery_config(settings),
        "task_routes": {RUN_JOB: {"queue": settings.QUEUE}},
        "task_time_limit": hard,
        # Redis redelivers an unacknowledged task after this long: longer than the longest
        # job (a lost worker's job is requeued sooner by the reaper)
        "broker_transport_options": {"visibility_timeout": hard + 600},
    }


celery_app = Celery("faceoff", include=["faceoff.worker.tasks"])
celery_app.add_defaults(lambda: worker_config(get_settings()))  # read on first use


@import_modules.connect
def _configure_numba_cache(sender: Any, **kwargs: Any) -> None:
    configure_numba_cache()


@celeryd_after_setup.connect
def _warm_up(sender: Any, instance: Any, **kwargs: Any) -> None:
    # the warm-up imports every kernel: not when `celery -A` imports this app, only once
    # the worker has set Numba's cache folder
    from faceoff.worker.warmup import wanted, warm_up

    warm_up(wanted(get_settings().WARMUP_SKIP))


@celeryd_after_setup.connect
def _consume_host_queue(sender: Any, instance: Any, **kwargs: Any) -> None:
    machine = machine_record()
    queue = host_queue(get_settings().QUEUE, machine["host"])
    instance.app.amqp.queues.select_add(queue)
    cores = machine["physical_cores"]
    log.info("consuming %s too; %s, %d physical cores", queue, machine["cpu_model"], cores)
    memory = get_settings().worker_memory
    capacity = {
        "host": machine["host"],
        "memory_bytes": memory,
        "concurrency": instance.concurrency,
        "job_bytes": worker_job_bytes(memory, instance.concurrency),
    }
    record_capacity(get_settings(), sender, capacity)
    log.info("a job may take %s bytes (GET /health: worker_memory)", capacity["job_bytes"])
    if instance.concurrency > cores:
        log.warning(
            "this worker runs %d jobs at once on %d physical cores: their times are inflated "
            "(use a concurrency of at most %d for timing-grade runs)",
            instance.concurrency,
            cores,
            cores,
        )


@worker_process_init.connect
def _forget_parent_connections(**kwargs: Any) -> None:
    engine_for(get_settings().database_url).dispose(close=False)


_reapers: list[Reaper] = []


@worker_ready.connect
def _start_reaper(**kwargs: Any) -> None:
    reaper = Reaper(get_settings())
    reaper.start()
    _reapers.append(reaper)


@worker_shutdown.connect
def _stop_reaper(**kwargs: Any) -> None:
    while _reapers:
        _reapers.pop().stop()
