"""``/solvers``: the catalogue (parameters, defaults, bounds, losses and penalties), with each
peer's distribution, trace mode and whether it is installed here."""

from __future__ import annotations

from fastapi import APIRouter

from faceoff.api.deps import AuthenticatedRoute
from faceoff.api.schemas import SolverPublic, SolversPublic
from faceoff.solvers.catalogue import CATALOGUE

router = APIRouter(prefix="/solvers", tags=["solvers"], route_class=AuthenticatedRoute)


@router.get("", response_model=SolversPublic)
def read_solvers() -> SolversPublic:
    """Every solver with its parameter schema, the losses and penalties it supports, how its
    trace is made and whether the distribution it needs is installed (read from installed
    metadata: no peer is imported)."""
    data = [SolverPublic.model_validate(spec.to_dict()) for spec in CATALOGUE.values()]
    return SolversPublic(data=data, count=len(data))
