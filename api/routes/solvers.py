"""``/solvers``: the catalogue (parameters, defaults, bounds, losses and penalties)."""

from __future__ import annotations

from fastapi import APIRouter

from faceoff.api.deps import AuthenticatedRoute
from faceoff.api.schemas import SolverPublic, SolversPublic
from faceoff.solvers.catalogue import CATALOGUE

router = APIRouter(prefix="/solvers", tags=["solvers"], route_class=AuthenticatedRoute)


@router.get("", response_model=SolversPublic)
def read_solvers() -> SolversPublic:
    """Every solver with its parameter schema and the losses and penalties it supports."""
    data = [SolverPublic.model_validate(spec.to_dict()) for spec in CATALOGUE.values()]
    return SolversPublic(data=data, count=len(data))
