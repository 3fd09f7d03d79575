"""skglm as a peer (adapter in ``method.py``), traced by refits.

skglm's solvers report no progress: ``solve()`` returns the final iterate only, so the
trace is made by refits with growing ``max_iter`` (its outer iterations). Both solvers are
deterministic (no random_state).
"""

from __future__ import annotations

from dataclasses import dataclass

from faceoff.solvers.spec import SolverSpec, param

REQUIRES = "skglm"


@dataclass(frozen=True)
class Params:
    solver: str = param(
        "anderson_cd",
        choices=("anderson_cd", "prox_newton"),
        help="anderson_cd: working sets, coordinate descent with Anderson acceleration "
        "(skglm's Lasso, ElasticNet, SparseLogisticRegression); prox_newton: working sets, "
        "proximal Newton steps",
    )


SPECS: tuple[SolverSpec, ...] = (
    SolverSpec(
        "skglm",
        "skglm GeneralizedLinearEstimator (Quadratic / Logistic, L1 / L1_plus_L2)",
        "Bertrand, Klopfenstein, Bannier, Gidel & Massias 2022 (skglm); Bertrand & Massias "
        "2021 (Anderson CD)",
        "primal",
        entry="solve",
        requires=REQUIRES,
        trace_mode="refit",
        losses=("logistic", "squared"),  # no smoothed hinge among its datafits
        penalties=("l2", "elastic_net", "l1"),  # L1_plus_L2 (l1_ratio 0 for l2 alone), L1
        params=Params,
        seeded=False,
        intercept=True,  # unpenalized, stepped once an epoch; x = (coef_, intercept_)
    ),
)
