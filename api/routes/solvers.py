"""``/solvers``: the catalogue (parameters, defaults, bounds, losses and penalties)."""

from __future__ import annotations

from fastapi import APIRouter

from faceoff.api.deps import AuthenticatedRoute
from faceoff.api.schemas import BrokenPluginPublic, SolverPublic, SolversPublic
from faceoff.solvers.catalogue import BROKEN_PLUGINS, CATALOGUE

router = APIRouter(prefix="/solvers", tags=["solvers"], route_class=AuthenticatedRoute)


@router.get("", response_model=SolversPublic)
def read_solvers() -> SolversPublic:
    """Every solver (built-in or plug-in) with its parameter schema and the losses and
    penalties it supports, and the installed plug-ins that could not be used."""
    data = [SolverPublic.model_validate(spec.to_dict()) for spec in CATALOGUE.values()]
    broken = [BrokenPluginPublic.model_validate(b.to_dict()) for b in BROKEN_PLUGINS]
    return SolversPublic(data=data, count=len(data), broken_plugins=broken)
