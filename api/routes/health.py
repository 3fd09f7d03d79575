"""``/health``: database, broker and workers."""

from __future__ import annotations

from fastapi import APIRouter, Response

from faceoff.api.deps import SettingsDep
from faceoff.api.schemas import HealthPublic, WorkerMemory
from faceoff.core.health import Workers, check_broker, check_database, live_workers
from faceoff.core.queue import limits_text

router = APIRouter(prefix="/health", tags=["health"])


@router.get(
    "",
    response_model=HealthPublic,
    responses={503: {"model": HealthPublic, "description": "database or broker down"}},
)
def health_check(response: Response, settings: SettingsDep) -> HealthPublic:
    """200 when the database and the broker answer, 503 otherwise; live workers counted,
    with the hosts a job or sweep can be pinned to (``host``), the memory a job of each
    worker may take (a job whose estimate no live worker can hold is refused), and the time
    limits jobs run under."""
    database, broker = check_database(settings), check_broker(settings)
    workers = live_workers(settings) if broker == "ok" else Workers(0, [], [])
    if database != "ok" or broker != "ok":
        response.status_code = 503
    return HealthPublic(
        database=database,
        broker=broker,
        workers=workers.workers,
        worker_hosts=workers.hosts,
        worker_memory=[WorkerMemory.model_validate(record) for record in workers.memory],
        time_limits=limits_text(settings),
    )
