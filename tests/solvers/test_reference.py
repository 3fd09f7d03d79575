"""Every solver × loss × penalty it supports, on dense and sparse synthetic data, a9a and the
rcv1 subset: the final P matches an independent L-BFGS reference to 1e-8 (relative) and
the duality gap certifies optimality to 1e-9·max(1, |P|) within the budget."""

from __future__ import annotations

import numpy as np
import pytest

from faceoff.solvers.catalogue import CATALOGUE, LOSSES, PENALTIES
from faceoff.solvers.run import solve
from faceoff.solvers.trace import CONVERGED, StopRules
from tests.solvers.problems import DATASETS, make_problem, reference

CONFIGS = [
    ("primal_cd", {"sampling": "uniform"}),
    ("primal_cd", {"sampling": "importance"}),
    ("dual_cd", {"sampling": "uniform"}),
    ("dual_cd", {"sampling": "importance"}),
    ("dual_cd", {"sampling": "permutation"}),
    ("dual_cd", {"step": "fixed"}),
    ("agd", {}),
    ("lbfgs", {}),
    ("saga", {}),
]


def _cases():
    for solver, params in CONFIGS:
        spec = CATALOGUE[solver]
        for loss in LOSSES:
            for penalty in PENALTIES:
                if loss in spec.losses and penalty in spec.penalties:
                    for dataset in DATASETS:
                        label = "-".join(
                            [solver, *map(str, params.values()), loss, penalty, dataset]
                        )
                        yield pytest.param(solver, params, loss, penalty, dataset, id=label)


@pytest.mark.parametrize("solver,params,loss,penalty,dataset", list(_cases()))
def test_matches_reference_and_certifies(solver, params, loss, penalty, dataset):
    problem = make_problem(dataset, loss, penalty)
    result = solve(
        problem, solver, params, StopRules(max_epochs=6000, max_seconds=90, tol=1e-10), seed=3
    )
    last = result.final
    p_ref = reference(dataset, loss, penalty)
    assert result.stop_reason == CONVERGED, result.summary()
    assert last.gap <= 1e-9 * max(1.0, abs(last.primal))
    assert last.gap >= -1e-12 * max(1.0, abs(last.primal)), "weak duality violated"
    assert abs(last.primal - p_ref) <= 1e-8 * abs(p_ref), (last.primal, p_ref)


@pytest.mark.parametrize(
    "solver,params",
    CONFIGS,
    ids=lambda v: v if isinstance(v, str) else "-".join(map(str, v.values())) or "default",
)
def test_ridge_matches_closed_form(solver, params):
    """Squared loss + l2: x* = (AᵀA/n + l2·I)⁻¹ Aᵀb/n; P is l2-strongly convex, so the
    gap bounds the distance: ‖x − x*‖² ≤ 2·gap/l2."""
    problem = make_problem("dense", "squared", "l2")
    A, b, n = problem.data.csr_matrix.toarray(), problem.b, problem.n_samples
    x_star = np.linalg.solve(A.T @ A / n + problem.penalty.l2 * np.eye(A.shape[1]), A.T @ b / n)
    result = solve(problem, solver, params, StopRules(max_epochs=5000, tol=1e-12), seed=0)
    gap = result.final.gap
    assert result.stop_reason == CONVERGED
    assert np.linalg.norm(result.x - x_star) <= np.sqrt(2 * gap / problem.penalty.l2) + 1e-12
    assert 0 <= result.final.primal - problem.primal_value(x_star) <= gap + 1e-15
