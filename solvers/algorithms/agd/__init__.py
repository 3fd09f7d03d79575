"""agd: accelerated proximal gradient with an adaptive line search, its spec."""

from __future__ import annotations

from faceoff.solvers.spec import NoParams, SolverSpec
from faceoff.solvers.vocabulary import PENALTY_NAMES

Params = NoParams  # agd takes no parameters

SPEC = SolverSpec(
    "agd",
    "Accelerated proximal gradient with adaptive line search",
    "Nesterov 2013, as used in Zhang & Xiao (SPDC) §7",
    "primal",
    params=Params,
    penalties=PENALTY_NAMES,  # l2 = 0: FISTA's momentum
    intercept=True,
    warm_start=True,
    seeded=False,
    multiclass=("ovr", "multinomial"),
)
