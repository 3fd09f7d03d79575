"""dgpd: doubly greedy primal-dual coordinate descent, its spec and parameters."""

from __future__ import annotations

from dataclasses import dataclass

from faceoff.solvers.spec import SeedWhen, SolverSpec, param


@dataclass(frozen=True)
class Params:
    variant: str = param(
        "active_set",
        choices=("active_set", "basic"),
        help="basic: Algorithm 1; active_set: Algorithm 2 with the sparse implementation of §3.2",
    )
    step: str = param(
        "adaptive",
        choices=("adaptive", "theorem"),
        help="dual step rule when eta is not given. theorem: η of Theorem 4.2, eq. (16), "
        "with s = current ‖x − x̄‖₀; adaptive (variant basic): m times that η, m "
        "doubled after a period that contracts the gap P(x) − D(y) at least at eq. "
        "(15)'s rate and halved, back to the period's start, after one that does "
        "not (m = 1: the theorem's η). active_set always uses eq. (16)",
    )
    eta: float | None = param(
        None,
        low=1e-300,
        high=1e300,
        help="fixed dual step size η (overrides step); auto: the step rule",
    )
    inner_passes: int = param(
        5,
        low=1,
        high=1000,
        help="rounds of updates on the active sets per greedy search (Algorithm 2)",
    )


SPEC = SolverSpec(
    "dgpd",
    "Doubly greedy primal-dual coordinate descent (DGPD)",
    "Lei, Yen, Wu, Dhillon & Ravikumar, ICML 2017, Algorithms 1-2",
    "primal",
    params=Params,
    # Algorithm 1 is greedy in both coordinates; the seed orders Algorithm 2's rounds
    seeded=SeedWhen("variant", ("active_set",)),
    # the multinomial form's dual rows live on a simplex: no scalar greedy dual coordinate
    multiclass=("ovr",),
)
