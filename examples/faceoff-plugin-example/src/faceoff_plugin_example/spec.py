"""The spec of ``example.sparsa`` and its typed parameters: metadata only, no solver code
imported."""

from dataclasses import dataclass

from faceoff.solvers.spec import SolverSpec, param


@dataclass(frozen=True)
class Params:
    memory: int = param(
        5,
        low=1,
        high=100,
        help="M: a step is accepted against the largest of the last M objective values",
    )


SPEC = SolverSpec(
    "example.sparsa",
    "SpaRSA: proximal gradient, Barzilai-Borwein steps, non-monotone line search",
    "Wright, Nowak & Figueiredo, IEEE TSP 57(7), 2009, Algorithm SpaRSA",
    "primal",
    params=Params,
    module="faceoff_plugin_example.solver",  # default: faceoff_plugin_example.method
    seeded=False,  # deterministic: a sweep runs it once per objective
    plugin_api="1.0",  # the faceoff.solvers.PLUGIN_API it was written for
)
