"""celer as peers (adapters in ``method.py``), traced by refits.

celer's estimators report no progress (``verbose`` prints, no callback), so their traces
are made by refits with growing ``max_iter`` (its outer iterations). Its solvers are
deterministic (no random_state). No l2 penalty alone: its ElasticNet refuses
l1_ratio = 0 and its LogisticRegression has the l1 penalty only.
"""

from __future__ import annotations

from dataclasses import dataclass

from faceoff.solvers.spec import SolverSpec, param

REQUIRES = "celer"


@dataclass(frozen=True)
class LogisticParams:
    solver: str = param(
        "celer-pn",
        choices=("celer-pn", "celer"),
        help="celer-pn: working sets and proximal Newton on them; celer: working sets, "
        "coordinate descent and dual extrapolation",
    )


SPECS: tuple[SolverSpec, ...] = (
    SolverSpec(
        "celer.lasso",
        "celer Lasso / ElasticNet (squared loss)",
        "Massias, Gramfort & Salmon 2018 (Celer: dual extrapolation and working sets)",
        "primal",
        entry="lasso",
        requires=REQUIRES,
        trace_mode="refit",
        losses=("squared",),
        penalties=("elastic_net", "l1"),
        seeded=False,
        intercept=True,  # unpenalized: scikit-learn's centering (method.py)
    ),
    SolverSpec(
        "celer.logistic",
        "celer LogisticRegression (l1 penalty)",
        "Massias, Gramfort & Salmon 2018 (Celer); Massias et al. 2020 (prox-Newton, celer-pn)",
        "primal",
        entry="logistic",
        requires=REQUIRES,
        trace_mode="refit",
        losses=("logistic",),
        penalties=("l1",),
        params=LogisticParams,
        seeded=False,  # no intercept: celer 0.7's LogisticRegression refuses fit_intercept
    ),
)
