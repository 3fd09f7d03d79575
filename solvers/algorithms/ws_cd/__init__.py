"""ws_cd: working-set coordinate descent with Anderson extrapolation, its spec and
parameters."""

from __future__ import annotations

from dataclasses import dataclass

from faceoff.solvers.spec import SolverSpec, param
from faceoff.solvers.vocabulary import PENALTY_NAMES


@dataclass(frozen=True)
class Params:
    p0: int = param(
        10,
        low=1,
        high=10**6,
        help="the first working set's size; later ones hold twice the support, at least p0 "
        "(Massias et al. 2018; skglm's AndersonCD)",
    )
    anderson: int = param(
        5,
        low=0,
        high=20,
        help="K: every K epochs on a working set, the Anderson extrapolation of its last K + 1 "
        "iterates, kept if it lowers P (Bertrand & Massias 2021); 0: none. The logistic "
        "loss's working sets take proximal-Newton steps instead, without extrapolation",
    )


SPEC = SolverSpec(
    "ws_cd",
    "Working-set coordinate descent with Anderson extrapolation",
    "Massias et al. 2018 (Celer); Bertrand & Massias 2021; Johnson & Guestrin 2015 (Blitz)",
    "primal",
    penalties=PENALTY_NAMES,
    params=Params,
    seeded=False,  # deterministic: cyclic passes over working sets chosen by score
    warm_start=True,  # the first working set holds the given point's support
    intercept=True,  # a Newton step on c after every CD epoch, or in the Newton model
)
