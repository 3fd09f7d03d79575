"""``/solvers``: the catalogue (parameters, defaults, bounds, losses and penalties), with each
peer's distribution, trace mode and whether it is installed here."""

from __future__ import annotations

from fastapi import APIRouter

from faceoff.api.deps import AuthenticatedRoute, SettingsDep
from faceoff.api.schemas import BrokenPluginPublic, SolverPublic, SolversPublic
from faceoff.core.workers import records, unavailable_on
from faceoff.solvers.catalogue import broken_plugins, catalogue, distribution_of

router = APIRouter(prefix="/solvers", tags=["solvers"], route_class=AuthenticatedRoute)


@router.get("", response_model=SolversPublic)
def read_solvers(settings: SettingsDep) -> SolversPublic:
    """Every solver (built-in, peer or plug-in) with its parameter schema, the losses and
    penalties it supports, how its trace is made, whether the distribution it needs is
    installed (read from installed metadata: no peer is imported), the distribution and
    version it comes from and the live workers that cannot run it (core.workers); and the
    installed plug-ins that could not be used."""
    live = records(settings)
    data = []
    for name, spec in catalogue().items():
        distribution, version = distribution_of(name)
        extra = {
            "distribution": distribution,
            "version": version,
            "unavailable_on": unavailable_on(name, live),
        }
        data.append(SolverPublic.model_validate({**spec.to_dict(), **extra}))
    broken = [BrokenPluginPublic.model_validate(b.to_dict()) for b in broken_plugins()]
    return SolversPublic(data=data, count=len(data), broken_plugins=broken)
