"""The worker's Celery app (``celery -A faceoff.worker.celery_app worker``).

Importing this module imports no solver. The kernels are compiled when the worker starts
(``celeryd_after_setup``: logging is configured, the pool is not forked yet), in the main
process, so every pool process inherits them — including one that replaces a process
killed by a hard time limit. A pool process drops the database connections it inherits.
Once the worker consumes (``worker_ready``), its main process runs a
:class:`faceoff.worker.reaper.Reaper` until it shuts down.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from celery.signals import celeryd_after_setup, worker_process_init, worker_ready, worker_shutdown

from faceoff.core.db import engine_for
from faceoff.core.queue import make_celery, time_limits
from faceoff.core.settings import get_settings

if TYPE_CHECKING:
    from faceoff.worker.reaper import Reaper

celery_app = make_celery(get_settings())
celery_app.conf.update(
    include=["faceoff.worker.tasks"],
    # Redis redelivers an unacknowledged task after this long: longer than the longest job
    # (a lost worker's job is requeued sooner by the reaper)
    broker_transport_options={
        "visibility_timeout": time_limits(get_settings().MAX_JOB_SECONDS, get_settings())[1] + 600
    },
)


@celeryd_after_setup.connect
def _warm_up(sender, instance, **kwargs) -> None:
    from faceoff.worker.warmup import warm_up

    warm_up()


@worker_process_init.connect
def _forget_parent_connections(**kwargs) -> None:
    engine_for(get_settings().database_url).dispose(close=False)


_reapers: list[Reaper] = []


@worker_ready.connect
def _start_reaper(**kwargs) -> None:
    from faceoff.worker.reaper import Reaper

    reaper = Reaper(get_settings())
    reaper.start()
    _reapers.append(reaper)


@worker_shutdown.connect
def _stop_reaper(**kwargs) -> None:
    while _reapers:
        _reapers.pop().stop()
