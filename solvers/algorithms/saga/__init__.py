"""saga: SAGA with the l1 proximal step, its spec and parameters."""

from __future__ import annotations

from dataclasses import dataclass

from faceoff.solvers.spec import SolverSpec, param

# auto's step_scale: max‖aᵢ‖²/mean‖aᵢ‖² clipped to [1, the loss's bound] (bench/README.md,
# Defaults): 3 (the step 1/L_max) for the logistic, whose curvature reaches its bound β
# only at margin 0; 2 for the others, whose curvature is β on whole regions (at 3 the
# squared loss and the smoothed hinge did not converge on a sparse synthetic, at 2 they
# took 0.55–0.58× the epochs of 1)
AUTO_SCALE_MAX = {"logistic": 3.0}
AUTO_SCALE_MAX_OTHERS = 2.0


@dataclass(frozen=True)
class Params:
    step_scale: float | None = param(
        None,
        low=1e-3,
        high=10.0,
        help="step = step_scale / (3·L_max), L_max = β·max‖aᵢ‖² + l2 (β = 1/2 for multinomial). "
        "None (auto, the default): max‖aᵢ‖²/mean‖aᵢ‖² clipped to [1, 3] for the logistic, "
        "[1, 2] for the other losses: the step 1/(3·L) of the mean row, never above 1/L_max "
        "(2/(3·L_max)) (w8a, whose longest row has 9.8× the mean's squared norm: 3, "
        "2.7–3.3× faster than 1; a9a and unit rows: 1)",
    )


SPEC = SolverSpec(
    "saga",
    "SAGA with the l1 proximal step",
    "Defazio, Bach & Lacoste-Julien 2014",
    "primal",
    params=Params,
    multiclass=("ovr", "multinomial"),
)
