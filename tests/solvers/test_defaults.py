"""`auto` defaults (issue 34): each branch of each solver's choice, forced on small data,
reaches the reference optimum and is recorded in the trace's extras; a value given
explicitly always wins; K-class forms run with auto."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from faceoff.data.synthetic import classification
from faceoff.data.transforms import normalize_rows
from faceoff.solvers.algorithms.dual_cd import CATALYST_CONDITION
from faceoff.solvers.algorithms.dual_cd.method import condition
from faceoff.solvers.algorithms.dual_cd.method import resolve as resolve_dual
from faceoff.solvers.algorithms.primal_cd.method import resolve as resolve_primal
from faceoff.solvers.algorithms.saga.method import auto_step_scale
from faceoff.solvers.catalogue import get_spec
from faceoff.solvers.problem import Data, build_problem
from faceoff.solvers.run import solve
from faceoff.solvers.spec import AUTO_EXTRA
from faceoff.solvers.trace import StopRules
from tests.reference import reference_optimum
from tests.solvers.problems import k_reference, make_k_problem
from tests.solvers.test_reference import check_certified

STOP = StopRules(max_epochs=20000.0, max_seconds=60.0, tol=1e-10)


@cache
def _matrix(shape: str):
    """tall: n ≫ d, dense; wide: n < d, sparse; unit: tall with unit rows; long_row and
    longer_row: unit rows but one row 1.5 (2.25× the mean's squared norm) or 10 times longer
    (clipped to 3)."""
    if shape == "wide":
        return classification(n_samples=120, n_features=400, density=0.1, seed=7)
    A, b = classification(n_samples=300, n_features=40, density=1.0, seed=1)
    if shape == "tall":
        return A, b
    A = normalize_rows(A)
    if shape != "unit":
        A = np.asarray(A.todense()) if hasattr(A, "todense") else A.copy()
        A[0] *= 10.0 if shape == "longer_row" else 1.5
    return A, b


def problem_of(shape: str, loss: str, l2: float):
    A, b = _matrix(shape)
    return build_problem(Data(A), b, loss, 1.0, l2=l2)


def run_certified(problem, solver: str, params: dict):
    """The run's first point's auto choices, after checking it certified the reference."""
    result = solve(problem, solver, params, STOP, seed=3)
    check_certified(result, reference_optimum(problem)[0])
    chosen = [point.extras.get(AUTO_EXTRA, {}) for point in result.trace]
    assert all(c == chosen[0] for c in chosen)  # every point says the same
    return chosen[0]


# (shape, loss, l2, what dual_cd's auto chooses): each branch of each rule
DUAL_BRANCHES = [
    ("tall", "logistic", 1e-4, {"accelerate": "catalyst", "shrinking": "off"}),
    ("tall", "logistic", 1.0, {"accelerate": "none", "shrinking": "off"}),
    ("tall", "smooth_hinge", 1.0, {"accelerate": "none", "shrinking": "on"}),
    ("tall", "smooth_hinge", 1e-4, {"accelerate": "catalyst", "shrinking": "off"}),
    ("wide", "smooth_hinge", 1e-4, {"accelerate": "none", "shrinking": "on"}),  # n < d
    ("wide", "squared", 1e-3, {"accelerate": "none", "shrinking": "off"}),
]


@pytest.mark.parametrize(
    "shape,loss,l2,expected", DUAL_BRANCHES, ids=[f"{c[0]}-{c[1]}-{c[2]:g}" for c in DUAL_BRANCHES]
)
def test_dual_cd_auto_branches_reach_the_optimum(shape, loss, l2, expected):
    problem = problem_of(shape, loss, l2)
    if expected["accelerate"] == "catalyst" or shape == "wide":  # the rule's own inputs
        assert condition(problem) >= CATALYST_CONDITION
    chosen = run_certified(problem, "dual_cd", {})
    assert chosen == {"sampling": "permutation", **expected}


def test_dual_cd_explicit_values_win_over_auto():
    problem = problem_of("tall", "smooth_hinge", 1e-4)  # auto: Catalyst, no shrinking
    spec = get_spec("dual_cd")
    params, chosen = resolve_dual(problem, spec.parse_params({"shrinking": "on"}))
    assert (params.sampling, params.accelerate, params.shrinking) == ("permutation", "none", "on")
    assert chosen == {"sampling": "permutation", "accelerate": "none"}
    params, chosen = resolve_dual(problem, spec.parse_params({"accelerate": "none"}))
    assert (params.accelerate, params.shrinking) == ("none", "on")
    params, chosen = resolve_dual(problem, spec.parse_params({"sampling": "uniform"}))
    assert (params.sampling, params.accelerate, params.shrinking) == ("uniform", "catalyst", "off")
    assert "sampling" not in chosen
    params, chosen = resolve_dual(problem, spec.parse_params({"step": "fixed"}))
    assert params.shrinking == "off"  # shrinking needs the exact step
    given = {"sampling": "importance", "accelerate": "none", "shrinking": "off"}
    params, chosen = resolve_dual(problem, spec.parse_params(given))
    assert chosen == {} and (params.sampling, params.accelerate) == ("importance", "none")
    # nothing auto: nothing recorded
    result = solve(problem, "dual_cd", given, StopRules(max_epochs=2.0), seed=0)
    assert all(AUTO_EXTRA not in p.extras for p in result.trace)


@pytest.mark.parametrize(
    "form,loss,expected",
    [
        ("ovr", "smooth_hinge", "on"),  # a row leaves when its K classes sit at a bound
        ("multinomial", "logistic", "off"),  # the simplex: nothing to shrink
    ],
)
def test_dual_cd_auto_on_k_class_problems(form, loss, expected):
    problem = make_k_problem("dense_k", loss, "l2", form)
    result = solve(problem, "dual_cd", {}, STOP, seed=3)
    check_certified(result, k_reference("dense_k", loss, "l2", form))
    assert result.trace[0].extras[AUTO_EXTRA]["shrinking"] == expected


# (shape, loss, expected step_scale): unit rows 1; one row 1.5× longer ~2.24 (the ratio of
# its squared norm to the mean's), clipped to 2 but for the logistic; one 10× longer
# clipped to 3 for the logistic, 2 for the others
SAGA_BRANCHES = [
    ("unit", "logistic", 1.0, 1.0 + 1e-12),
    ("unit", "smooth_hinge", 1.0, 1.0 + 1e-12),
    ("long_row", "logistic", 2.2, 2.3),
    ("long_row", "squared", 2.0, 2.0),
    ("longer_row", "logistic", 3.0, 3.0),
    ("longer_row", "smooth_hinge", 2.0, 2.0),
    ("longer_row", "squared", 2.0, 2.0),
]


@pytest.mark.parametrize(
    "shape,loss,low,high", SAGA_BRANCHES, ids=[f"{c[0]}-{c[1]}" for c in SAGA_BRANCHES]
)
def test_saga_auto_step_scale_reaches_the_optimum(shape, loss, low, high):
    problem = problem_of(shape, loss, 1e-2)
    chosen = run_certified(problem, "saga", {})
    assert low <= chosen["step_scale"] <= high
    assert chosen["step_scale"] == auto_step_scale(problem)


def test_saga_explicit_step_scale_wins_and_records_nothing():
    problem = problem_of("longer_row", "logistic", 1e-2)
    result = solve(problem, "saga", {"step_scale": 1.0}, StopRules(max_epochs=2.0), seed=0)
    assert all(AUTO_EXTRA not in p.extras for p in result.trace)


@pytest.mark.parametrize(
    "loss,expected",
    [
        ("logistic", {"step": "newton", "sampling": "permutation"}),
        ("squared", {"step": "newton", "sampling": "permutation"}),
        ("smooth_hinge", {"step": "fixed", "sampling": "uniform"}),
    ],
)
def test_primal_cd_auto_branches_reach_the_optimum(loss, expected):
    chosen = run_certified(problem_of("tall", loss, 1e-2), "primal_cd", {})
    assert chosen == expected


def test_primal_cd_explicit_values_win_over_auto():
    problem = problem_of("tall", "logistic", 1e-2)
    spec = get_spec("primal_cd")
    params, chosen = resolve_primal(problem, spec.parse_params({"step": "fixed"}))
    assert (params.step, params.sampling) == ("fixed", "uniform") and chosen == {
        "sampling": "uniform"
    }
    params, chosen = resolve_primal(problem, spec.parse_params({"sampling": "importance"}))
    assert (params.step, params.sampling) == ("newton", "importance")
    assert chosen == {"step": "newton"}
