"""The catalogue entry of ``example.sparsa``: metadata only, no solver code imported."""

from faceoff.solvers.catalogue import Param, SolverSpec

SPEC = SolverSpec(
    "example.sparsa",
    "SpaRSA: proximal gradient, Barzilai-Borwein steps, non-monotone line search",
    "Wright, Nowak & Figueiredo, IEEE TSP 57(7), 2009, Algorithm SpaRSA",
    "faceoff_plugin_example.solver",
    "primal",
    params=(
        Param(
            "memory",
            "int",
            5,
            "M: a step is accepted against the largest of the last M objective values",
            1,
            100,
        ),
    ),
    seeded=False,  # deterministic: a sweep runs it once per objective
)
