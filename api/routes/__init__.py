"""One router per resource, collected under ``/api/v1``. Every router but ``/health``
needs the caller's team (see api.deps.get_team)."""

from fastapi import APIRouter, Depends

from faceoff.api.deps import get_team
from faceoff.api.routes import admin, datasets, health, jobs, references, solvers, sweeps

api_router = APIRouter()
for module in (jobs, sweeps, datasets, solvers, references, admin):
    api_router.include_router(module.router, dependencies=[Depends(get_team)])
api_router.include_router(health.router)
