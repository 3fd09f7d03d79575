"""``/solvers``: the catalogue (parameters, defaults, bounds, losses and penalties), with each
peer's distribution, trace mode and whether it is installed here."""

from __future__ import annotations

from fastapi import APIRouter

from faceoff.api.deps import AuthenticatedRoute
from faceoff.api.schemas import BrokenPluginPublic, SolverPublic, SolversPublic
from faceoff.solvers.catalogue import broken_plugins, catalogue

router = APIRouter(prefix="/solvers", tags=["solvers"], route_class=AuthenticatedRoute)


@router.get("", response_model=SolversPublic)
def read_solvers() -> SolversPublic:
    """Every solver (built-in, peer or plug-in) with its parameter schema, the losses and
    penalties it supports, how its trace is made and whether the distribution it needs is
    installed (read from installed metadata: no peer is imported); and the installed
    plug-ins that could not be used."""
    data = [SolverPublic.model_validate(spec.to_dict()) for spec in catalogue().values()]
    broken = [BrokenPluginPublic.model_validate(b.to_dict()) for b in broken_plugins()]
    return SolversPublic(data=data, count=len(data), broken_plugins=broken)
