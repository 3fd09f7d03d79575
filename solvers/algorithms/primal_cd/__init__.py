"""primal_cd: primal randomized coordinate descent (NSync), its spec and parameters."""

from __future__ import annotations

from dataclasses import dataclass

from faceoff.solvers.algorithms import coordinate_sampling
from faceoff.solvers.spec import AUTO, SolverSpec, param
from faceoff.solvers.vocabulary import PENALTY_NAMES


@dataclass(frozen=True)
class Params:
    sampling: str = coordinate_sampling(
        "permutation with the Newton step (as lightning's CD), uniform with the fixed step"
    )
    step: str = param(
        AUTO,
        choices=(AUTO, "fixed", "newton"),
        help="the fixed step 1/u'ⱼ of Faceoff eq. (7), or a Newton coordinate step on "
        "the local curvature with Armijo's test (as CDN and lightning's CD): "
        "faster for logistic on sparse data, slower for the smoothed hinge, "
        "whose curvature jumps at its kinks (bench/README.md). Multinomial: the "
        "block Hessian's diagonal with Armijo's test on the block (to a gap of 1e-8: "
        "news20 l2 = 1e-4 24 s against 50 s, usps l2 = 1e-5 6 s against 41 s, "
        "usps l2 = 1e-3 1.6 s against 0.9 s). auto: fixed for a smoothed loss (the smoothed "
        "hinge's kinks), newton otherwise",
    )


SPEC = SolverSpec(
    "primal_cd",
    "Primal randomized coordinate descent (NSync)",
    "Csiba & Richtárik, Coordinate Descent Faceoff, Algorithm 1",
    "primal",
    params=Params,
    penalties=PENALTY_NAMES,  # l2 = 0: the Lasso's coordinate descent
    intercept=True,  # a step on c after every d coordinate steps
    warm_start=True,
    multiclass=("ovr", "multinomial"),
)
