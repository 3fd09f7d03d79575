"""dual_cd's inexact logistic steps (liblinear's inner tolerance): loose while far from the
optimum, tightened to the exact step's, so a run still certifies a gap of 1e-12 and lands
on the reference optimum; the same for every sampling and penalty. Catalyst around it:
certified on ill-conditioned problems, faster there, plain dual_cd where κ = 0. Shrinking.
K-class problems: one-vs-rest is K binary runs in one, classes that do not move are not
touched, the multinomial rows stay on their simplex."""

from __future__ import annotations

import numpy as np
import pytest

from faceoff.solvers.algorithms.dual_cd.method import INNER_TOL_START, DualCD, catalyst_kappa
from faceoff.solvers.losses import EXACT_TOL
from faceoff.solvers.problem import build_problem
from faceoff.solvers.run import solve
from faceoff.solvers.trace import CONVERGED, StopRules
from tests.reference import reference_optimum
from tests.solvers.problems import _classes, _data, make_k_problem, make_problem, reference


@pytest.mark.parametrize("sampling", ["uniform", "importance", "permutation"])
@pytest.mark.parametrize("dataset,penalty", [("a9a", "l2"), ("sparse", "elastic_net")])
def test_inexact_logistic_steps_tighten_until_certified(dataset, penalty, sampling):
    problem = make_problem(dataset, "logistic", penalty)
    method = DualCD(problem, sampling, "exact", seed=2)
    n = problem.n_samples
    method.run(n)
    assert method.state.inner[0] == INNER_TOL_START  # every step moved: not yet tightened
    for _ in range(400):
        method.run(n)
        objective = problem.evaluate(y=method.y)
        if objective.gap <= 1e-12 * abs(objective.primal):
            break
    assert objective.gap <= 1e-12 * abs(objective.primal)
    assert EXACT_TOL <= method.state.inner[0] < INNER_TOL_START  # tightened on the way
    p_star = reference(dataset, "logistic", penalty)
    assert objective.primal == pytest.approx(p_star, rel=1e-9)
    # x is the one kept beside y: the skipped steps left no drift between them
    np.testing.assert_allclose(method.state.x, objective.x, rtol=0, atol=1e-12)


# ----------------------------------------------------------------------------- Catalyst


def _problem(name: str, loss: str, l1: float, l2: float):
    data, b = _data(name, loss == "squared" and name in ("dense", "sparse"))
    return build_problem(data, b, loss, 1.0, l1=l1, l2=l2)


def _run(problem, accelerate: str, tol: float, max_epochs: float = 3000.0, seed: int = 3):
    stop = StopRules(max_epochs=max_epochs, tol=tol)
    params = {"sampling": "permutation", "accelerate": accelerate, "shrinking": "off"}
    return solve(problem, "dual_cd", params, stop, seed=seed)


ILL_CONDITIONED = [
    *(
        ("a9a", l1, 1e-6, loss)
        for l1 in (0.0, 1e-5)
        for loss in ("logistic", "smooth_hinge", "squared")
    ),
    # without the residual restart, Catalyst's momentum (β = 0.94 here) blew this one up:
    # the gap reached 1e+255 (its reference costs 20 s, so the other losses are left out)
    ("rcv1", 1e-5, 1e-6, "squared"),
]


@pytest.mark.parametrize("name,l1,l2,loss", ILL_CONDITIONED)
def test_catalyst_certifies_ill_conditioned_problems(name, l1, l2, loss):
    problem = _problem(name, loss, l1, l2)
    assert catalyst_kappa(problem) > 0.0  # accelerated: κ > 0
    result = _run(problem, "catalyst", tol=1e-10)
    last = result.final
    assert result.stop_reason == CONVERGED, result.summary()
    assert -1e-12 <= last.gap <= 1e-10 * max(1.0, abs(last.primal))
    p_ref = reference_optimum(problem)[0]
    assert abs(last.primal - p_ref) <= 1e-8 * max(1.0, abs(p_ref)), (last.primal, p_ref)


def test_catalyst_takes_fewer_epochs_on_an_ill_conditioned_problem():
    """Dense synthetic logistic, l2 = 1e-5: plain dual ascent needs ~800 epochs to a gap of
    1e-9, Catalyst ~80 (measured); ask for a factor of 3."""
    problem = _problem("dense", "logistic", 0.0, 1e-5)
    plain = _run(problem, "none", tol=1e-9)
    fast = _run(problem, "catalyst", tol=1e-9)
    assert plain.stop_reason == fast.stop_reason == CONVERGED
    assert fast.final.epoch * 3 <= plain.final.epoch, (fast.final.epoch, plain.final.epoch)


def test_catalyst_is_plain_dual_cd_when_the_problem_is_well_conditioned():
    problem = make_problem("a9a", "logistic", "l2")  # l2 = 1e-3 ≥ β·mean‖aᵢ‖²/(n + 1)
    assert catalyst_kappa(problem) == 0.0
    runs = [DualCD(problem, "permutation", "exact", 5, accelerate=a) for a in ("none", "catalyst")]
    for method in runs:
        method.run(3 * problem.n_samples + 17)
    np.testing.assert_array_equal(runs[0].y, runs[1].y)
    np.testing.assert_array_equal(runs[0].state.x, runs[1].state.x)


def test_catalyst_runs_are_deterministic_for_a_seed():
    problem = _problem("sparse", "smooth_hinge", 1e-5, 1e-6)
    first, again, other = (_run(problem, "catalyst", 1e-9, 50.0, seed) for seed in (1, 1, 2))
    np.testing.assert_array_equal(first.y, again.y)
    assert [p.primal for p in first.trace] == [p.primal for p in again.trace]
    assert not np.array_equal(first.y, other.y)


# ----------------------------------------------------------------------------- shrinking


def _shrinking(problem, seed: int = 3) -> DualCD:
    return DualCD(problem, "permutation", "exact", seed, shrinking="on")


@pytest.mark.parametrize("name,l1", [("a9a", 0.0), ("a9a", 1e-5), ("sparse", 1e-5)])
def test_shrinking_certifies_the_full_problem_and_visits_fewer_rows(name, l1):
    """Smoothed hinge, l2 = 1e-5: rows held at a bound leave the passes (the active set
    shrinks), every row comes back to settle, and the run certifies the full problem's gap
    and lands on the reference optimum, in fewer non-zeros visited than without."""
    problem = _problem(name, "smooth_hinge", l1, 1e-5)
    stop = StopRules(max_epochs=3000.0, tol=1e-10)
    params = {"sampling": "permutation", "accelerate": "none", "shrinking": "on"}
    shrunk = solve(problem, "dual_cd", params, stop, seed=3)
    plain = solve(problem, "dual_cd", {**params, "shrinking": "off"}, stop, seed=3)
    assert shrunk.stop_reason == plain.stop_reason == CONVERGED, shrunk.summary()
    last = shrunk.final
    assert -1e-12 <= last.gap <= 1e-10 * max(1.0, abs(last.primal))
    p_ref = reference_optimum(problem)[0]
    assert abs(last.primal - p_ref) <= 1e-8 * max(1.0, abs(p_ref)), (last.primal, p_ref)
    active = [p.extras["active_rows"] for p in shrunk.trace]
    assert min(active) < problem.n_samples and max(active) <= problem.n_samples
    assert last.epoch < plain.final.epoch, (last.epoch, plain.final.epoch)


def test_shrinking_runs_the_same_however_they_are_chunked():
    problem = _problem("sparse", "smooth_hinge", 0.0, 1e-5)
    n = problem.n_samples
    whole, chunked = _shrinking(problem), _shrinking(problem)
    visited = whole.run(40 * n + 7)
    pieces = [17, n - 1, 3 * n, 1, 36 * n - 10]
    assert sum(pieces) == 40 * n + 7
    assert sum(chunked.run(k) for k in pieces) == visited
    np.testing.assert_array_equal(whole.y, chunked.y)
    np.testing.assert_array_equal(whole.state.x, chunked.state.x)
    np.testing.assert_array_equal(whole.active, chunked.active)
    np.testing.assert_array_equal(whole.shrink, chunked.shrink)
    assert whole.shrink[0] < n  # some rows were left out on the way
    other = _shrinking(problem, seed=4)
    other.run(40 * n + 7)
    assert not np.array_equal(whole.y, other.y)


def test_a_shrunk_row_is_held_at_a_bound_and_pushed_outward():
    """liblinear's test, checked on the state: every row outside the active set sits at 0 or
    1 (in t = −b·y) and its dual gradient pushes it out (g < 0 at 0, g > 0 at 1)."""
    problem = _problem("a9a", "smooth_hinge", 0.0, 1e-5)
    method = _shrinking(problem)
    method.run(20 * problem.n_samples + 5)
    size = int(method.shrink[0])
    assert 0 < size < problem.n_samples
    out = method.active[size:]
    t = -problem.b[out] * method.y[out]
    margins = problem.data.matvec(method.state.x)[out]
    g = 1.0 - problem.b[out] * margins - problem.loss.gamma * t
    assert np.all((t == 0.0) | (t == 1.0))
    assert np.all(np.where(t == 0.0, g < 0.0, g > 0.0))
    assert sorted(method.active) == list(range(problem.n_samples))  # a permutation


def test_shrinking_leaves_losses_without_a_dual_box_as_plain_permutation():
    problem = make_problem("sparse", "logistic", "l2")
    runs = [DualCD(problem, "permutation", "exact", 5, shrinking=s) for s in ("off", "on")]
    for method in runs:
        method.run(3 * problem.n_samples + 17)
    np.testing.assert_array_equal(runs[0].y, runs[1].y)
    assert "active_rows" not in runs[1].extras()


@pytest.mark.parametrize(
    "params,other",
    [
        ({"sampling": "uniform"}, "sampling=permutation"),
        ({"sampling": "permutation", "step": "fixed"}, "step=exact"),
        ({"sampling": "permutation", "accelerate": "catalyst"}, "accelerate=none"),
    ],
)
def test_shrinking_is_refused_outside_exact_permutation_passes(params, other):
    problem = make_problem("sparse", "smooth_hinge", "l2")
    with pytest.raises(ValueError, match=f"shrinking=on applies to {other} only"):
        solve(problem, "dual_cd", {**params, "shrinking": "on"}, StopRules(max_epochs=1.0))


# ----------------------------------------------------------------------------- K classes


def _binary_of_class(problem, c: int):
    """The binary problem of class c of a one-vs-rest problem: its labels ±1."""
    labels = np.where(problem.b == c, 1.0, -1.0)
    l1, l2 = problem.penalty.params
    return build_problem(problem.data, labels, problem.loss.name, problem.loss.gamma, l1=l1, l2=l2)


@pytest.mark.parametrize("step", ["exact", "fixed"])
@pytest.mark.parametrize("sampling", ["uniform", "importance", "permutation"])
@pytest.mark.parametrize(
    "loss,penalty",
    [("smooth_hinge", "l2"), ("logistic", "elastic_net"), ("squared", "l2"), ("logistic", "l2")],
)
def test_one_vs_rest_is_k_binary_runs_bitwise(loss, penalty, sampling, step):
    """One draw serves the K classes: with the same seed, each column of Y and X is the
    binary kernel's run on that class's ±1 labels, to the last bit (the logistic's inexact
    steps tighten their tolerance per class, as a binary run does)."""
    problem = make_k_problem("sparse_k", loss, penalty, "ovr")
    n, steps = problem.n_samples, 7 * problem.n_samples + 13
    method = DualCD(problem, sampling, step, seed=4)
    method.run(steps)
    for c in range(problem.n_classes):
        binary = DualCD(_binary_of_class(problem, c), sampling, step, seed=4)
        binary.run(steps)
        np.testing.assert_array_equal(method.y[:, c], binary.y)
        np.testing.assert_array_equal(method.state.x[:, c], binary.state.x)
        if penalty == "elastic_net":
            np.testing.assert_array_equal(method.state.z[:, c], binary.state.z)
    assert method.y.shape == (n, problem.n_classes)


def test_one_vs_rest_optimum_is_the_sum_of_the_binary_optima():
    problem = make_k_problem("dense_k", "smooth_hinge", "elastic_net", "ovr")
    stop = StopRules(max_epochs=3000.0, tol=1e-11)
    result = solve(problem, "dual_cd", {"sampling": "permutation"}, stop, seed=1)
    assert result.stop_reason == CONVERGED
    parts = [
        solve(_binary_of_class(problem, c), "dual_cd", {"sampling": "permutation"}, stop, seed=1)
        for c in range(problem.n_classes)
    ]
    assert all(part.stop_reason == CONVERGED for part in parts)
    assert result.final.primal == pytest.approx(sum(p.final.primal for p in parts), rel=1e-10)
    # P is l2-strongly convex: ‖x − x*‖² ≤ 2·gap/l2, for the K-class run and each binary one
    gaps = result.final.gap + sum(p.final.gap for p in parts)
    distance = np.linalg.norm(result.x - np.stack([p.x for p in parts], axis=1))
    assert distance <= 2.0 * np.sqrt(2.0 * gaps / problem.penalty.l2)


@pytest.mark.parametrize("penalty", ["l2", "elastic_net"])
@pytest.mark.parametrize("shrinking", ["off", "on"])
def test_classes_whose_dual_variable_does_not_move_are_never_touched(penalty, shrinking):
    """Smoothed hinge, γ = 1: a class whose dual variables all sit at t = 1 with its margins
    0 stays there (t = (1 + s)/(1 + s) = 1), so its column of X must keep its −0.0 entries
    (adding 0 to −0.0 gives +0.0, and soft(−0.0) is +0.0: a write would show)."""
    problem = make_k_problem("sparse_k", "smooth_hinge", penalty, "ovr")
    held = 2
    method = DualCD(problem, "permutation", "exact", seed=0, shrinking=shrinking)
    signs = np.where(problem.b == held, 1.0, -1.0)
    method.y[:, held] = -signs  # t = −b·y = 1 in every row
    method.state.x[:, held] = -0.0
    if penalty == "elastic_net":
        method.state.z[:, held] = -0.0
    method.run(3 * problem.n_samples)
    np.testing.assert_array_equal(method.y[:, held], -signs)
    assert np.all(np.signbit(method.state.x[:, held]))
    moved = np.delete(method.state.x, held, axis=1)
    assert np.count_nonzero(moved) > 0 and not np.all(np.signbit(moved))


@pytest.mark.parametrize(
    "form,loss,params",
    [
        ("ovr", "logistic", {"sampling": "importance"}),
        (
            "ovr",
            "smooth_hinge",
            {"sampling": "permutation", "accelerate": "none", "shrinking": "on"},
        ),
        ("ovr", "squared", {"accelerate": "catalyst"}),
        ("multinomial", "logistic", {}),
        ("multinomial", "logistic", {"step": "fixed", "sampling": "permutation"}),
    ],
)
def test_k_class_runs_are_deterministic_for_a_seed(form, loss, params):
    problem = make_k_problem("sparse_k", loss, "elastic_net", form)
    stop = StopRules(max_epochs=20.0)
    first, again, other = (solve(problem, "dual_cd", params, stop, seed=s) for s in (5, 5, 6))
    np.testing.assert_array_equal(first.y, again.y)
    np.testing.assert_array_equal(first.x, again.x)
    assert [p.primal for p in first.trace] == [p.primal for p in again.trace]
    assert not np.array_equal(first.y, other.y)


@pytest.mark.parametrize("step", ["exact", "fixed"])
def test_multinomial_rows_stay_on_the_shifted_simplex(step):
    """Every row of Y is a point of Δ − e_{bᵢ} after any number of steps (the exact step's
    maximizer and Quartz's convex combination both stay there), and X = ∇g*(−AᵀY/n)."""
    problem = make_k_problem("usps_k", "logistic", "l2", "multinomial")
    method = DualCD(problem, "uniform", step, seed=2)
    method.run(5 * problem.n_samples + 3)
    P = method.y.copy()
    P[np.arange(problem.n_samples), problem.b] += 1.0
    assert P.min() >= 0.0
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(
        method.state.x, problem.primal_from_dual(method.y), rtol=0, atol=1e-12
    )


def test_multinomial_shrinking_runs_as_off():
    """The multinomial form's row of dual variables has no box: shrinking=on is plain
    permutation passes, as for the binary logistic."""
    problem = make_k_problem("sparse_k", "logistic", "l2", "multinomial")
    runs = [DualCD(problem, "permutation", "exact", 5, shrinking=s) for s in ("off", "on")]
    for method in runs:
        method.run(3 * problem.n_samples + 17)
    np.testing.assert_array_equal(runs[0].y, runs[1].y)
    assert "active_rows" not in runs[1].extras()


@pytest.mark.parametrize("l1", [0.0, 1e-5])
def test_one_vs_rest_shrinking_leaves_out_rows_held_in_every_class(l1):
    """usps, l2 = 1e-5: a row leaves the passes only when each of its K pairs sits at a bound
    and is pushed outward; the run certifies the full problem at the reference optimum in
    fewer non-zeros visited than without shrinking."""
    data, labels = _classes("usps_k")
    problem = build_problem(data, labels, "smooth_hinge", l1=l1, l2=1e-5, multiclass="ovr")
    method = DualCD(problem, "permutation", "exact", 3, shrinking="on")
    method.run(20 * problem.n_samples + 5)
    size = int(method.shrink[0])
    assert 0 < size < problem.n_samples
    out = method.active[size:]
    signs = np.where(problem.b[out, None] == np.arange(problem.n_classes), 1.0, -1.0)
    t = -signs * method.y[out]
    margins = problem.data.matvec(method.state.x)[out]
    g = 1.0 - signs * margins - problem.loss.gamma * t
    assert np.all((t == 0.0) | (t == 1.0))
    assert np.all(np.where(t == 0.0, g < 0.0, g > 0.0))
    stop = StopRules(max_epochs=3000.0, tol=1e-10)
    params = {"sampling": "permutation", "accelerate": "none", "shrinking": "on"}
    shrunk = solve(problem, "dual_cd", params, stop, seed=3)
    plain = solve(problem, "dual_cd", {**params, "shrinking": "off"}, stop, seed=3)
    assert shrunk.stop_reason == plain.stop_reason == CONVERGED
    assert shrunk.final.epoch < plain.final.epoch, (shrunk.final.epoch, plain.final.epoch)
    p_ref = reference_optimum(problem)[0]
    assert abs(shrunk.final.primal - p_ref) <= 1e-8 * abs(p_ref), (shrunk.final.primal, p_ref)


@pytest.mark.parametrize(
    "form,loss,l1",
    [("ovr", "smooth_hinge", 0.0), ("ovr", "logistic", 1e-5), ("multinomial", "logistic", 0.0)],
)
def test_catalyst_certifies_ill_conditioned_k_class_problems(form, loss, l1):
    """Catalyst's outer step on the whole X (κ > 0 here: l2 = 1e-5): certified at the
    reference optimum of the K-class problem."""
    data, labels = _classes("dense_k")
    problem = build_problem(data, labels, loss, l1=l1, l2=1e-5, multiclass=form)
    assert catalyst_kappa(problem) > 0.0
    result = _run(problem, "catalyst", tol=1e-10)
    last = result.final
    assert result.stop_reason == CONVERGED, result.summary()
    assert -1e-12 <= last.gap <= 1e-10 * max(1.0, abs(last.primal))
    p_ref = reference_optimum(problem)[0]
    assert abs(last.primal - p_ref) <= 1e-8 * max(1.0, abs(p_ref)), (last.primal, p_ref)
