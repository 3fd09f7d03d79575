"""saga: SAGA with the l1 proximal step, its spec and parameters."""

from __future__ import annotations

from dataclasses import dataclass

from faceoff.solvers.spec import SolverSpec, param

# auto's step_scale: max‖aᵢ‖²/mean‖aᵢ‖² within these bounds (bench/README.md, Defaults)
AUTO_SCALE = (1.0, 3.0)


@dataclass(frozen=True)
class Params:
    step_scale: float | None = param(
        None,
        low=1e-3,
        high=10.0,
        help="step = step_scale / (3·L_max), L_max = β·max‖aᵢ‖² + l2 (β = 1/2 for multinomial). "
        "None (auto, the default): max‖aᵢ‖²/mean‖aᵢ‖² clipped to [1, 3], the step 1/(3·L) of "
        "the mean row but never above 1/L_max (w8a, whose longest row has 9.8× the mean's "
        "squared norm: 3, 2.7–3.4× faster; a9a and unit rows: 1)",
    )


SPEC = SolverSpec(
    "saga",
    "SAGA with the l1 proximal step",
    "Defazio, Bach & Lacoste-Julien 2014",
    "primal",
    params=Params,
    multiclass=("ovr", "multinomial"),
)
