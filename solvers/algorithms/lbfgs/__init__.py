"""lbfgs: scipy's L-BFGS-B, its spec and parameters."""

from __future__ import annotations

from dataclasses import dataclass

from faceoff.solvers.spec import SolverSpec, param
from faceoff.solvers.vocabulary import PENALTY_NAMES


@dataclass(frozen=True)
class Params:
    memory: int = param(30, low=1, high=1000, help="number of stored correction pairs")


def extra_memory(n: int, d: int, params: Params, penalty: str) -> float:
    """L-BFGS-B's workspace, 2md + 5d + 11m² + 8m doubles (scipy's setulb), over the
    variables x (d of them — d·K of a K-class problem — and twice as many for the elastic
    net's split x = x⁺ − x⁻)."""
    m, dim = params.memory, (d if penalty == "l2" else 2 * d)
    return 8.0 * ((2 * m + 5) * dim + 11 * m * m + 8 * m)


SPEC = SolverSpec(
    "lbfgs",
    "L-BFGS-B (scipy); elastic net by the bound-constrained split x = x⁺ − x⁻",
    "Nocedal & Wright §7.2; SPDC §7 (memory 30)",
    "primal",
    params=Params,
    extra_memory=extra_memory,
    penalties=PENALTY_NAMES,  # the split x = x⁺ − x⁻ needs no strong convexity
    intercept=True,  # one more variable, unbounded
    warm_start=True,
    seeded=False,
    multiclass=("ovr", "multinomial"),
)
