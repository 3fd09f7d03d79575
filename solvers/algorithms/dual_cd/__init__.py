"""dual_cd: dual randomized coordinate ascent (Quartz / SDCA), its spec and parameters."""

from __future__ import annotations

from dataclasses import dataclass

from faceoff.solvers.algorithms import coordinate_sampling
from faceoff.solvers.spec import AUTO, OnlyWith, SolverSpec, param

# auto chooses Catalyst when n ≥ d and the condition number β·mean‖aᵢ‖²/(l2·(n + 1)) is at
# least this (κ ≥ 2·l2): bench/README.md, "Defaults"
CATALYST_CONDITION = 3.0


@dataclass(frozen=True)
class Params:
    sampling: str = coordinate_sampling(
        "permutation, the fastest on every cell of bench part 1 (bench/README.md, Defaults)"
    )
    step: str = param(
        "exact",
        choices=("exact", "fixed"),
        help="exact 1-D maximization, or the fixed step η of Faceoff §7",
    )
    accelerate: str = param(
        AUTO,
        choices=(AUTO, "none", "catalyst"),
        help="plain dual ascent, or Catalyst around it (Lin, Mairal & Harchaoui 2018): "
        "one epoch per proximal subproblem with l2 + κ, κ = β·mean‖aᵢ‖²/(n+1) − l2, "
        "then Nesterov's extrapolation with an adaptive restart. Much faster on "
        "ill-conditioned problems with n ≫ d (a9a logistic, l2 = 1e-6: 32 epochs "
        "instead of 699), slower where plain ascent is fast already (n ≪ d); the "
        "same as none when l2 ≥ β·mean‖aᵢ‖²/(n+1). auto: catalyst when n ≥ d and "
        f"β·mean‖aᵢ‖²/(l2·(n+1)) ≥ {CATALYST_CONDITION:g} (and shrinking is not on), else none",
    )
    shrinking: str = param(
        AUTO,
        choices=(AUTO, "off", "on"),
        help="liblinear's shrinking (Hsieh et al. 2008, §3.2) for sampling=permutation: "
        "a row whose dual variable sits at a bound of the smoothed hinge's box "
        "and is pushed outward more than last pass's largest violation is left "
        "out of the next passes, all rows come back once the rest is settled; "
        "the certificate is always the full problem's. Smoothed hinge only (the "
        "other losses' dual variables never sit at a bound: they run as off; so does "
        "the multinomial form, whose row of dual variables lives on a simplex the "
        "entropy keeps it inside of). One-vs-rest: a row leaves when each of its K "
        "classes is held at a bound. w8a, l2 = 1e-6: 6× faster to 1e-6 (bench/README.md). "
        "auto: on for a loss with a dual box (the smoothed hinge, binary or one-vs-rest) when "
        "the passes are permutation passes with the exact step and no Catalyst, else off",
    )


SPEC = SolverSpec(
    "dual_cd",
    "Dual randomized coordinate ascent (Quartz / SDCA)",
    "Csiba & Richtárik, Coordinate Descent Faceoff, Algorithm 2",
    "dual",
    params=Params,
    rules=(
        OnlyWith("shrinking", "sampling", "permutation", when="on"),
        OnlyWith("shrinking", "step", "exact", when="on"),
        OnlyWith("shrinking", "accelerate", "none", when="on"),
    ),
    multiclass=("ovr", "multinomial"),
)
