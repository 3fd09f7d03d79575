"""saga: SAGA with the l1 proximal step, its spec and parameters."""

from __future__ import annotations

from dataclasses import dataclass

from faceoff.solvers.spec import SolverSpec, param


@dataclass(frozen=True)
class Params:
    step_scale: float = param(
        1.0,
        low=1e-3,
        high=10.0,
        help="step = step_scale / (3·L_max), L_max = β·max‖aᵢ‖² + l2 (β = 1/2 for multinomial)",
    )


SPEC = SolverSpec(
    "saga",
    "SAGA with the l1 proximal step",
    "Defazio, Bach & Lacoste-Julien 2014",
    "primal",
    params=Params,
    multiclass=("ovr", "multinomial"),
)
