"""SPDC (Zhang & Xiao; its convergence to the reference optimum is in test_reference): lazy
(§6) == dense iterates, weighted sampling (Algorithm 3) beating uniform on uneven rows, parameter
overrides and their validation; K-class problems: lazy == dense on K columns, one-vs-rest ==
the K binary runs, the multinomial dual step on the simplex, one run per seed."""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import pytest
import scipy.sparse as sp

from faceoff.data.synthetic import gaussian_spread
from faceoff.solvers.algorithms.spdc import Params
from faceoff.solvers.algorithms.spdc.method import SPDC, PartitionSampler, _dual_row, step_sizes
from faceoff.solvers.catalogue import get_spec
from faceoff.solvers.lazy_prox import RESCALE_BELOW
from faceoff.solvers.losses import make_loss, multinomial_conjs
from faceoff.solvers.penalties import ElasticNet
from faceoff.solvers.problem import Data, Problem
from faceoff.solvers.run import solve
from faceoff.solvers.trace import StopRules
from faceoff.solvers.vocabulary import STRONGLY_CONVEX
from tests.reference import reference_optimum
from tests.solvers.problems import make_k_problem, make_problem


def _params(**overrides) -> Params:
    return get_spec("spdc").parse_params(overrides)


@cache
def _very_sparse(loss: str, penalty: str) -> Problem:
    """300 × 2000 with 1-4 non-zeros a row (most coordinates idle for hundreds of
    iterations) and row norms spread over two decades (weighted sampling differs)."""
    rng = np.random.default_rng(7)
    n, d = 300, 2000
    rows = []
    for _ in range(n):
        cols = rng.choice(d, size=rng.integers(1, 5), replace=False)
        rows.append(
            sp.csr_matrix((rng.standard_normal(cols.size), ([0] * cols.size, cols)), (1, d))
        )
    A = sp.vstack(rows).tocsr()
    A = sp.diags(np.exp(rng.uniform(-2, 2, n))) @ A
    b = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    l1 = 3e-4 if penalty == "elastic_net" else 0.0
    return Problem(Data(A), b, make_loss(loss), ElasticNet(l1, 1e-2))


@pytest.mark.parametrize("batch_size", [1, 5])
@pytest.mark.parametrize("sampling", ["uniform", "weighted"])
@pytest.mark.parametrize("penalty", STRONGLY_CONVEX)
@pytest.mark.parametrize("loss", ["logistic", "smooth_hinge"])
def test_lazy_updates_match_dense(loss, penalty, sampling, batch_size):
    """Same seed, same iterates (x, y) to 1e-10 after every chunk of iterations; for l1 the
    run must exercise Cases I-III: coordinates that stay at 0, cross 0, and leave 0."""
    problem = _very_sparse(loss, penalty)
    params = {"batch_size": batch_size, "sampling": sampling}
    lazy = SPDC(problem, _params(**params, updates="lazy"), seed=11)
    dense = SPDC(problem, _params(**params, updates="dense"), seed=11)
    previous = np.zeros(problem.n_features)
    stayed_zero = crossed = left_zero = 0
    for chunk in (1, 10, 100, *[40] * 100):
        assert lazy.run(chunk) == dense.run(chunk)
        np.testing.assert_allclose(lazy.x, dense.x, rtol=0, atol=1e-10)
        np.testing.assert_allclose(lazy.y, dense.y, rtol=0, atol=1e-10)
        stayed_zero += np.count_nonzero((previous == 0) & (lazy.x == 0))
        crossed += np.count_nonzero(previous * lazy.x < 0)
        left_zero += np.count_nonzero((previous == 0) & (lazy.x != 0))
        previous = lazy.x.copy()
    assert np.count_nonzero(lazy.x) > 0
    if penalty == "elastic_net":
        assert stayed_zero > 0 and crossed > 0 and left_zero > 0, (stayed_zero, crossed, left_zero)
        assert 0 < np.count_nonzero(lazy.x) < problem.n_features


@pytest.mark.parametrize("batch_size", [1, 5])
def test_l2_scaled_form_rescales_and_matches_dense(batch_size):
    """The l2 kernel holds x = S·v − u/λ with S = rᵗ; where r = 1/(1 + τλ) is small S passes
    RESCALE_BELOW within a run many times and v is rescaled: iterates still equal the dense
    reference's, and v stays finite."""
    base = _very_sparse("smooth_hinge", "l2")
    problem = Problem(base.data, base.b, base.loss, ElasticNet(0.0, 1.0))
    tau = 10.0  # r = 1/11: S < 1e-100 after 97 iterations
    sigma = 1.0 / (4.0 * tau * float(problem.data.row_sq_norms.max()))
    params = {"batch_size": batch_size, "tau": tau, "sigma": sigma}
    lazy = SPDC(problem, _params(**params, updates="lazy"), seed=3)
    dense = SPDC(problem, _params(**params, updates="dense"), seed=3)
    assert lazy.scaled and not dense.scaled
    iterations = 1000
    assert iterations * math.log1p(tau) > 5 * -math.log(RESCALE_BELOW)  # ≥ 5 rescales
    for chunk in (iterations, 7, iterations):
        assert lazy.run(chunk) == dense.run(chunk)
        np.testing.assert_allclose(lazy.x, dense.x, rtol=0, atol=1e-10)
        np.testing.assert_allclose(lazy.y, dense.y, rtol=0, atol=1e-10)
    assert np.all(np.isfinite(lazy.state.primal))
    assert np.count_nonzero(lazy.x) > 0


def _passes_to(problem: Problem, sampling: str, seed: int, target: float, p_star: float) -> float:
    result = solve(
        problem, "spdc", {"sampling": sampling}, StopRules(max_epochs=400, tol=0.0), seed=seed
    )
    for point in result.trace:
        if point.primal - p_star <= target * abs(p_star):
            return point.epoch
    return np.inf


def test_weighted_sampling_needs_fewer_passes_on_uneven_rows():
    """§7.3: with R/R̄ = 10, Algorithm 3 (α of eq. (25)) reaches 1e-6 relative
    suboptimality in at most half the passes of uniform sampling (median of 3 seeds)."""
    A, b = gaussian_spread(n_samples=400, n_features=40, norm_spread=10.0, seed=1)
    problem = Problem(Data(A), b, make_loss("smooth_hinge"), ElasticNet(0.0, 1e-4))
    norms = np.sqrt(problem.data.row_sq_norms)
    assert norms.max() / norms.mean() >= 5
    p_star = reference_optimum(problem)[0]
    uniform = np.median([_passes_to(problem, "uniform", s, 1e-6, p_star) for s in range(3)])
    weighted = np.median([_passes_to(problem, "weighted", s, 1e-6, p_star) for s in range(3)])
    assert np.isfinite(weighted)
    assert weighted <= 0.5 * uniform, (weighted, uniform)


def test_default_parameters_follow_eqs_12_24_25():
    norms = np.array([1.0, 1.0, 1.0, 9.0])  # R = 9, R̄ = 3
    tau, sigma, theta, alpha = step_sizes(norms, 0.01, 4.0, 2, False, None)
    assert tau == pytest.approx(np.sqrt(2 * 4.0 / (4 * 0.01)) / 18)
    assert sigma == pytest.approx(np.sqrt(4 * 0.01 / (2 * 4.0)) / 18)
    assert theta == pytest.approx(1 - 1 / (2 + 18 * np.sqrt(4 / (2 * 0.01 * 4.0))))
    assert alpha == 0.0
    tau, sigma, theta, alpha = step_sizes(norms, 1e-4, 1.0, 1, True, None)
    rho, kappa = 9 / 3 - 1, 81 / 1e-4
    s = np.sqrt(rho) * (kappa / 4) ** 0.25
    assert alpha == pytest.approx((s - 1) / (s + rho))
    r_alpha = 1 / ((1 - alpha) / 9 + alpha / 3)
    assert tau == pytest.approx(np.sqrt(1.0 / (4 * 1e-4)) / (2 * r_alpha))
    assert theta == pytest.approx(1 - 1 / (4 / (1 - alpha) + r_alpha * np.sqrt(4 / 1e-4)))


def test_partition_sampler_probabilities():
    weights = np.array([5.0, 1.0, 1.0, 1.0, 2.0, 2.0, 3.0])
    sampler = PartitionSampler(weights, 3, seed=0)
    blocks = np.split(sampler.members, sampler.offsets[1:-1])
    assert sorted(np.concatenate(blocks)) == list(range(7))
    assert [len(block) for block in blocks] in ([3, 2, 2], [2, 3, 2], [2, 2, 3])
    for block in blocks:
        assert sampler.probabilities[block].sum() == pytest.approx(1.0)
    assert sampler.probabilities.sum() == pytest.approx(3.0)


def test_overrides_are_honoured():
    problem = make_problem("sparse", "smooth_hinge", "l2")
    stop = StopRules(max_epochs=30, tol=0.0)
    default = solve(problem, "spdc", {}, stop, seed=0)
    method = SPDC(problem, _params(), seed=0)
    explicit = {"tau": method.tau, "sigma": method.sigma, "theta": method.theta}
    same = solve(problem, "spdc", explicit, stop, seed=0)
    assert [p.primal for p in same.trace] == [p.primal for p in default.trace]
    tiny = solve(problem, "spdc", {**explicit, "tau": method.tau / 1000}, stop, seed=0)
    assert tiny.final.gap > 100 * default.final.gap
    no_momentum = solve(problem, "spdc", {"theta": 0.0}, stop, seed=0)
    assert [p.primal for p in no_momentum.trace] != [p.primal for p in default.trace]
    weighted = SPDC(problem, _params(sampling="weighted", alpha=0.7), seed=0)
    assert weighted.alpha == 0.7


@pytest.mark.parametrize(
    "raw,match",
    [
        ({"tau": 0}, "outside"),
        ({"sigma": -1.0}, "outside"),
        ({"theta": 1.5}, "outside"),
        ({"alpha": 2.0}, "outside"),
        ({"batch_size": 0}, "outside"),
        ({"batch_size": 2.5}, "integer"),
        ({"sampling": "importance"}, "not one of uniform, weighted"),
        ({"updates": "eager"}, "not one of lazy, dense"),
    ],
)
def test_invalid_parameters_are_rejected(raw, match):
    with pytest.raises(ValueError, match=match):
        get_spec("spdc").parse_params(raw)


def test_inconsistent_parameters_are_rejected():
    problem = make_problem("dense", "squared", "l2")
    with pytest.raises(ValueError, match="batch_size 301 exceeds the number of samples 300"):
        SPDC(problem, _params(batch_size=301), seed=0)
    # the rule between parameters is checked once, by the spec: a run given raw values
    # refuses what the API refuses, in the same words
    with pytest.raises(ValueError, match="alpha applies to sampling=weighted only") as submitted:
        _params(alpha=0.5)
    with pytest.raises(ValueError, match="alpha applies to sampling=weighted only") as run:
        solve(problem, "spdc", {"alpha": 0.5}, StopRules(max_epochs=1.0))
    assert str(run.value) == str(submitted.value)


# ------------------------------------------------------------------------ K-class problems


@cache
def _very_sparse_k(loss: str, penalty: str, form: str) -> Problem:
    """:func:`_very_sparse` with 4 classes (labels as class indices)."""
    base = _very_sparse(loss, penalty)
    labels = np.random.default_rng(8).integers(0, 4, base.n_samples)
    return Problem(base.data, labels, base.loss, base.penalty, form, classes=np.arange(4.0))


@pytest.mark.parametrize("batch_size", [1, 5])
@pytest.mark.parametrize("penalty", STRONGLY_CONVEX)
@pytest.mark.parametrize(
    "form,loss", [("ovr", "logistic"), ("ovr", "smooth_hinge"), ("multinomial", "logistic")]
)
def test_k_class_lazy_updates_match_dense(form, loss, penalty, batch_size):
    """The K-column lazy kernels (Cases I-III on each column, one `last` a feature; the l2
    scaled form with its pending classes) give the dense kernel's X and Y to 1e-10."""
    problem = _very_sparse_k(loss, penalty, form)
    params = {"batch_size": batch_size}
    lazy = SPDC(problem, _params(**params, updates="lazy"), seed=11)
    dense = SPDC(problem, _params(**params, updates="dense"), seed=11)
    assert lazy.scaled == (penalty == "l2")
    for chunk in (1, 10, 100, *[40] * 50):
        assert lazy.run(chunk) == dense.run(chunk)
        np.testing.assert_allclose(lazy.x, dense.x, rtol=0, atol=1e-10)
        np.testing.assert_allclose(lazy.y, dense.y, rtol=0, atol=1e-10)
    assert lazy.x.shape == (problem.n_features, 4) and np.count_nonzero(lazy.x) > 0
    if penalty == "elastic_net":
        assert 0 < np.count_nonzero(lazy.x) < lazy.x.size


@pytest.mark.parametrize("updates", ["lazy", "dense"])
@pytest.mark.parametrize("penalty", STRONGLY_CONVEX)
def test_ovr_run_is_the_k_binary_runs(penalty, updates):
    """One-vs-rest draws a row and steps its K dual coordinates with the binary step: column
    k of X is the binary run on class k against the rest (same seed, same draws), to
    rounding; so is the objective, P(X) = Σₖ Pₖ(xₖ), at every point."""
    problem = make_k_problem("sparse_k", "smooth_hinge", penalty, "ovr")
    ovr = SPDC(problem, _params(updates=updates), seed=5)
    ovr.run(20 * problem.n_samples)
    total = 0.0
    for k in range(problem.n_classes):
        labels = np.where(problem.b == k, 1.0, -1.0)
        binary = Problem(problem.data, labels, problem.loss, problem.penalty)
        run = SPDC(binary, _params(updates=updates), seed=5)
        run.run(20 * problem.n_samples)
        np.testing.assert_allclose(ovr.x[:, k], run.x, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(ovr.y[:, k], run.y, rtol=1e-9, atol=1e-12)
        total += binary.primal_value(run.x)
    assert problem.primal_value(ovr.x) == pytest.approx(total, rel=1e-10)


def _dual_objective(problem, row, label, z, s, before):
    """⟨y, ū⟩ − φ*(y) − s/2‖y − yᵢ‖² of a multinomial row."""
    conj = multinomial_conjs(problem.loss.params, row[None, :], np.array([label]))
    return row @ z - conj - 0.5 * s * np.sum((row - before) ** 2)


def test_multinomial_dual_step_is_the_entropy_prox():
    """SPDC's dual step (5) of a multinomial row, argmax_y ⟨y, ū⟩ − φ*(y) − s/2‖y − yᵢ‖²,
    solved as losses.simplex_step on p = y + e_label: p lies on the simplex, satisfies the
    optimality condition (−log p + ū − s(p − p₀) constant across classes), and no point of
    the shifted simplex nearby does better."""
    problem = make_k_problem("dense_k", "logistic", "l2", "multinomial")
    K = problem.n_classes
    rng = np.random.default_rng(0)
    y = np.zeros((3, K))
    y[1] = rng.dirichlet(np.ones(K))
    y[1, 2] -= 1.0  # row 1: a point of Δ − e₂, class 2
    labels = np.array([0, 2, 1])
    for i, s in [(0, 4.0), (1, 0.3), (2, 50.0)]:
        z = rng.normal(size=K) * 3
        before = y[i].copy()
        delta, work = np.zeros(K), np.zeros((2, K))
        _dual_row(problem.loss.params, True, np.zeros(0), y, i, labels[i], z, s, delta, work)
        np.testing.assert_allclose(delta, y[i] - before, atol=1e-15)
        p = y[i].copy()
        p[labels[i]] += 1.0
        assert p.min() > 0 and p.sum() == pytest.approx(1.0, abs=1e-12)
        p0 = before.copy()
        p0[labels[i]] += 1.0
        grad = -np.log(p) + z - s * (p - p0)
        assert np.ptp(grad) <= 1e-9 * (1 + np.abs(grad).max())

        best = _dual_objective(problem, y[i], labels[i], z, s, before)
        for _ in range(200):  # moves along the simplex (Σ = 0), staying in it
            move = rng.normal(size=K) * 1e-3
            move -= move.mean()
            if (p + move).min() > 0:
                moved = _dual_objective(problem, y[i] + move, labels[i], z, s, before)
                assert moved <= best + 1e-12


@pytest.mark.parametrize("form", ["ovr", "multinomial"])
def test_k_class_runs_are_deterministic_per_seed(form):
    problem = make_k_problem("sparse_k", "logistic", "elastic_net", form)
    stop = StopRules(max_epochs=5, tol=0.0)
    first, again = (solve(problem, "spdc", {}, stop, seed=4) for _ in range(2))
    other = solve(problem, "spdc", {}, stop, seed=5)
    assert np.array_equal(first.x, again.x)
    assert [p.primal for p in first.trace] == [p.primal for p in again.trace]
    assert not np.array_equal(first.x, other.x)


def test_multinomial_steps_follow_eq_12_with_gamma_2():
    """The multinomial form's φ* is 2-strongly convex (β = 1/2): τ, σ, θ are eq. (12)'s
    with γ = 2, where one-vs-rest logistic takes the binary γ = 4."""
    ovr = SPDC(make_k_problem("dense_k", "logistic", "l2", "ovr"), _params(), seed=0)
    multinomial = make_k_problem("dense_k", "logistic", "l2", "multinomial")
    method = SPDC(multinomial, _params(), seed=0)
    norms = np.sqrt(multinomial.data.row_sq_norms)
    expected = step_sizes(norms, multinomial.penalty.l2, 2.0, 1, False, None)[:3]
    assert (method.tau, method.sigma, method.theta) == expected
    assert (ovr.tau, ovr.sigma) == step_sizes(norms, multinomial.penalty.l2, 4.0, 1, False, None)[
        :2
    ]


# ------------------------------------------------------------- lazy state between runs


def _lazy_state(method: SPDC) -> list[np.ndarray]:
    """Copies of every array of the lazy kernels' primal state (planes, per-feature
    iteration)."""
    state = method.state
    arrays = [state.primal]
    if method.k_class:
        arrays.append(state.last)
    return [a.copy() for a in arrays]


def _changed_features(before: list[np.ndarray], after: list[np.ndarray], k_class: bool):
    """The features whose state differs between two :func:`_lazy_state` copies."""
    changed = np.zeros(before[0].shape[1] if k_class else before[0].shape[0], bool)
    if k_class:
        changed |= np.any(before[0] != after[0], axis=(0, 2))
        changed |= before[1] != after[1]
    else:
        changed |= np.any(before[0] != after[0], axis=1)
    return set(np.flatnonzero(changed).tolist())


@pytest.mark.parametrize("batch_size", [1, 5])
@pytest.mark.parametrize("k_class", [False, True], ids=["binary", "k_class"])
def test_elastic_net_run_touches_only_the_rows_it_reads(k_class, batch_size):
    """A run of the lazy l1 + l2 kernels costs O(nnz of its rows) (§6), not O(d): it writes
    the state of the features of the rows it draws and of no other, and reading x brings a
    copy up to date without writing the state. So a run without reads in between gives the
    dense kernel's iterates, to 1e-10, as one read after every chunk does (above)."""
    problem = (
        _very_sparse_k("smooth_hinge", "elastic_net", "ovr")
        if k_class
        else _very_sparse("smooth_hinge", "elastic_net")
    )
    params = {"batch_size": batch_size, "updates": "lazy"}
    method = SPDC(problem, _params(**params), seed=5)
    method.run(200)
    state = method.state
    last = state.last if k_class else state.primal[:, 3]
    assert np.count_nonzero(last < state.done[0]) > 100  # most features are behind
    before = _lazy_state(method)
    x = method.x
    assert _changed_features(before, _lazy_state(method), k_class) == set()
    assert np.count_nonzero(x != (state.primal[0] if k_class else state.primal[:, 0])) > 0
    A = problem.data.csr_matrix
    rows = [set(A.indices[A.indptr[i] : A.indptr[i + 1]].tolist()) for i in range(A.shape[0])]
    longest = max(map(len, rows))
    for _ in range(20):  # an iteration reads one row of each block of the partition
        before = _lazy_state(method)
        method.run(1)
        changed = _changed_features(before, _lazy_state(method), k_class)
        assert len(changed) <= batch_size * longest
        if batch_size == 1:
            assert any(changed <= row for row in rows)
    quiet = SPDC(problem, _params(**params), seed=11)
    dense = SPDC(problem, _params(batch_size=batch_size, updates="dense"), seed=11)
    for chunk in (1, 10, 100, *[40] * 20):
        assert quiet.run(chunk) == dense.run(chunk)
    np.testing.assert_allclose(quiet.x, dense.x, rtol=0, atol=1e-10)
    np.testing.assert_allclose(quiet.y, dense.y, rtol=0, atol=1e-10)
