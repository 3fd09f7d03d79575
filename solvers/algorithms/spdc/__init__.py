"""spdc: the stochastic primal-dual coordinate method, its spec and parameters."""

from __future__ import annotations

from dataclasses import dataclass

from faceoff.solvers.spec import OnlyWith, SolverSpec, param


@dataclass(frozen=True)
class Params:
    batch_size: int = param(
        1,
        low=1,
        high=65536,
        help="dual coordinates per iteration m: Algorithm 1 for m = 1, Algorithm 2 "
        "(index-partition sampling of §2) otherwise",
    )
    sampling: str = param(
        "uniform",
        choices=("uniform", "weighted"),
        help="uniform, or weighted (Algorithm 3, pᵢ ∝ α + ‖aᵢ‖ mixed as in eq. (25))",
    )
    alpha: float | None = param(
        None, low=0.0, high=1.0, help="weighted sampling mix α; auto: eq. (25)"
    )
    tau: float | None = param(
        None, low=1e-300, high=1e300, help="primal step τ; auto: eq. (12) / (24)"
    )
    sigma: float | None = param(
        None, low=1e-300, high=1e300, help="dual step σ; auto: eq. (12) / (24)"
    )
    theta: float | None = param(
        None, low=0.0, high=1.0, help="extrapolation θ; auto: eq. (12) / (24)"
    )
    updates: str = param(
        "lazy",
        choices=("lazy", "dense"),
        help="lazy: just-in-time updates of §6, O(nnz(aᵢ)) per step; dense: the same "
        "iteration with O(d) updates (a reference for tests)",
    )


SPEC = SolverSpec(
    "spdc",
    "Stochastic primal-dual coordinate method (SPDC), lazy sparse updates",
    "Zhang & Xiao, SPDC, Algorithms 1-3 and §6",
    "primal",
    params=Params,
    rules=(OnlyWith("alpha", "sampling", "weighted"),),
    multiclass=("ovr", "multinomial"),
    # seeded even at batch_size ≥ n, where every block holds one row and the seed
    # changes nothing: the parameters do not tell n
)
