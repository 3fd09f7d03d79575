"""scikit-learn's solvers as peers (adapters in ``method.py``), traced by refits."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from faceoff.solvers.spec import SeedWhen, SolverSpec, param

REQUIRES = "scikit-learn"


@dataclass(frozen=True)
class LiblinearParams:
    formulation: str = param(
        "dual",
        choices=("dual", "primal"),
        help="dual: coordinate descent on the dual (dual=True); primal: trust-region "
        "Newton (dual=False)",
    )


@dataclass(frozen=True)
class RidgeParams:
    solver: str = param(
        "lsqr",
        choices=("lsqr", "sag", "saga", "cholesky"),
        help="Ridge's solver; cholesky is direct (one fit, no budget)",
    )


def _hessian_memory(n: int, d: int, params: Any, penalty: str) -> float:
    """newton-cholesky's d × d Hessian, its Cholesky factor and the solve's copies: 4 d × d
    doubles (round 3 measured 3.54 GB at d = 12,000, 3.1 × 8d²; ``d``: d·K for a K-class
    problem, whose multinomial Hessian is dK × dK)."""
    return 4 * 8.0 * d * d


def _ridge_memory(n: int, d: int, params: Any, penalty: str) -> float:
    """Ridge's cholesky forms AᵀA densely (d × d) and factors it: 3 d × d doubles; its
    iterative solvers keep O(n + d)."""
    return 3 * 8.0 * d * d if params.solver == "cholesky" else 0.0


def _peer(name: str, title: str, reference: str, entry: str, **kw: Any) -> SolverSpec:
    return SolverSpec(
        name, title, reference, "primal", entry=entry, requires=REQUIRES, trace_mode="refit", **kw
    )


SPECS: tuple[SolverSpec, ...] = (
    _peer(
        "sklearn.liblinear",
        "scikit-learn LogisticRegression(solver='liblinear')",
        "Fan et al. 2008 (LIBLINEAR): Hsieh et al. 2008 (dual CD), Lin et al. 2008 (TRON)",
        "liblinear",
        losses=("logistic",),
        penalties=("l2",),  # its l1 form is sklearn.liblinear_l1 (primal only, no l2 term)
        params=LiblinearParams,
        multiclass=("ovr",),  # no multinomial form: it refuses K ≥ 3 classes
        # no intercept: liblinear penalizes it (a column of ones in A)
        # random_state shuffles the dual CD's coordinates; TRON is deterministic (checked
        # for every entry by tests/solvers/test_seeds.py)
        seeded=SeedWhen("formulation", ("dual",)),
    ),
    _peer(
        "sklearn.lbfgs",
        "scikit-learn LogisticRegression(solver='lbfgs')",
        "Byrd, Lu, Nocedal & Zhu 1995 (L-BFGS-B, through scipy)",
        "lbfgs",
        losses=("logistic",),
        penalties=("l2",),
        seeded=False,
        multiclass=("ovr", "multinomial"),
        intercept=True,  # unpenalized (method.py)
    ),
    _peer(
        "sklearn.newton_cholesky",
        "scikit-learn LogisticRegression(solver='newton-cholesky')",
        "Newton's method with a Cholesky solve of the d × d Hessian",
        "newton_cholesky",
        losses=("logistic",),
        penalties=("l2",),
        extra_memory=_hessian_memory,
        seeded=False,
        multiclass=("ovr", "multinomial"),
        intercept=True,  # unpenalized (method.py)
    ),
    _peer(
        "sklearn.sag",
        "scikit-learn LogisticRegression(solver='sag')",
        "Schmidt, Le Roux & Bach 2017 (SAG)",
        "sag",
        losses=("logistic",),
        penalties=("l2",),
        multiclass=("ovr", "multinomial"),
        intercept=True,  # unpenalized (method.py)
    ),
    _peer(
        "sklearn.saga",
        "scikit-learn LogisticRegression(solver='saga')",
        "Defazio, Bach & Lacoste-Julien 2014 (SAGA)",
        "saga",
        losses=("logistic",),
        penalties=("l2", "elastic_net", "l1"),
        multiclass=("ovr", "multinomial"),
        intercept=True,  # unpenalized (method.py)
    ),
    _peer(
        "sklearn.liblinear_l1",
        "scikit-learn LogisticRegression(solver='liblinear', l1_ratio=1)",
        "Fan et al. 2008 (LIBLINEAR); Yuan, Ho & Lin 2012 (newGLMNET, l1-regularized)",
        "liblinear_l1",
        losses=("logistic",),
        penalties=("l1",),  # liblinear's l1 form has no l2 term; primal (dual=False) only
        multiclass=("ovr",),  # no multinomial form; no intercept: liblinear penalizes it
        # random_state: newGLMNET's inner coordinate descent shuffles its coordinates
    ),
    _peer(
        "sklearn.ridge",
        "scikit-learn Ridge (squared loss, l2)",
        "scikit-learn Ridge: LSQR (Paige & Saunders 1982), SAG, SAGA, Cholesky",
        "ridge",
        losses=("squared",),
        penalties=("l2",),
        params=RidgeParams,
        extra_memory=_ridge_memory,
        seeded=SeedWhen("solver", ("sag", "saga")),  # random_state: sag and saga only
        multiclass=("ovr",),  # the K targets ±1 at once
    ),
    _peer(
        "sklearn.elastic_net",
        "scikit-learn ElasticNet / Lasso (cyclic coordinate descent)",
        "Friedman, Hastie & Tibshirani 2010 (glmnet's coordinate descent)",
        "elastic_net",
        losses=("squared",),
        penalties=("l2", "elastic_net", "l1"),  # l2 = 0: l1_ratio = 1, scikit-learn's Lasso
        seeded=False,  # random_state applies to selection="random"; the adapter keeps cyclic
        multiclass=("ovr",),  # the K targets ±1 at once
        intercept=True,  # unpenalized (method.py)
    ),
)
