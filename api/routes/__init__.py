"""One router per resource, collected under ``/api/v1``."""

from fastapi import APIRouter

from api.routes import datasets, health, jobs, references, solvers, sweeps

api_router = APIRouter()
for module in (jobs, sweeps, datasets, solvers, references, health):
    api_router.include_router(module.router)
