"""``/health``: database, broker and workers."""

from __future__ import annotations

from fastapi import APIRouter, Response

from faceoff.api.deps import SettingsDep
from faceoff.api.schemas import HealthPublic
from faceoff.core.health import check_broker, check_database, live_workers
from faceoff.core.queue import limits_text

router = APIRouter(prefix="/health", tags=["health"])


@router.get(
    "",
    response_model=HealthPublic,
    responses={503: {"model": HealthPublic, "description": "database or broker down"}},
)
def health_check(response: Response, settings: SettingsDep) -> HealthPublic:
    """200 when the database and the broker answer, 503 otherwise; live workers counted,
    with the hosts a job or sweep can be pinned to (``host``), and the time limits jobs
    run under."""
    database, broker = check_database(settings), check_broker(settings)
    workers, hosts = live_workers(settings) if broker == "ok" else (0, [])
    if database != "ok" or broker != "ok":
        response.status_code = 503
    return HealthPublic(
        database=database,
        broker=broker,
        workers=workers,
        worker_hosts=hosts,
        time_limits=limits_text(settings),
    )
