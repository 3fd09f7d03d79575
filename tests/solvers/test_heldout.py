"""Held-out metrics along a trace: solvers.heldout.HeldOut as a Recorder's ``observe`` hook.

Each point's ``extras["test"]`` is checked against numpy on the iterate the point was
evaluated at (captured through the hook itself), on dense and sparse data, with and
without an intercept, for a loss on ±1 labels (accuracy) and the squared loss (R²); the
hook runs off the solver clock. The data helpers a test set goes through (data.splits,
data.transforms.normalize_like) are checked here too.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
import scipy.sparse as sp

from faceoff.data.labels import LabelError
from faceoff.data.splits import align_columns, labels_like, random_split
from faceoff.data.transforms import normalize, normalize_like
from faceoff.solvers.heldout import HeldOut
from faceoff.solvers.losses import make_loss
from faceoff.solvers.problem import Data, build_problem
from faceoff.solvers.run import solve
from faceoff.solvers.trace import Recorder, StopRules


def make(layout: str, loss: str, n: int, d: int = 30, seed: int = 0):
    rng = np.random.default_rng(seed)
    if layout == "dense":
        A = rng.standard_normal((n, d))
    else:
        A = sp.random(n, d, density=0.2, random_state=seed, format="csr")
        A.data = rng.standard_normal(A.nnz)
    truth = rng.standard_normal(d)
    b = A @ truth + 1.5 + 0.3 * rng.standard_normal(n)
    if loss != "squared":
        b = np.where(b > np.quantile(b, 0.3), 1.0, -1.0)
    return A, b


def numpy_metrics(A, b: np.ndarray, loss: str, x: np.ndarray, intercept: bool) -> dict:
    """The held-out metrics, from their definitions."""
    A = A.toarray() if sp.issparse(A) else np.asarray(A)
    d = A.shape[1]
    z = A @ x[:d] + (x[d] if intercept else 0.0)
    if loss == "squared":
        r2 = 1 - np.sum((b - z) ** 2) / np.sum((b - b.mean()) ** 2)
        return {"loss": np.mean(0.5 * (z - b) ** 2), "r2": r2}
    accuracy = np.mean(np.sign(z) == b)  # sign(0) = 0: a tie is wrong
    return {"loss": np.mean(np.logaddexp(0.0, -b * z)), "accuracy": accuracy}


CASES = [
    ("logistic", "lbfgs"),
    ("logistic", "dual_cd"),  # a dual method: the primal x(y) is scored
    ("squared", "agd"),
    ("squared", "saga"),
]


@pytest.mark.parametrize("layout", ["dense", "sparse"])
@pytest.mark.parametrize("intercept", [False, True])
@pytest.mark.parametrize(("loss", "solver"), CASES)
def test_every_point_s_metrics_are_numpy_s_at_its_iterate(layout, intercept, loss, solver):
    if intercept and solver in ("dual_cd", "saga"):
        solver = "lbfgs" if loss == "logistic" else "agd"  # the primal methods fit c
    A, b = make(layout, loss, n=300)
    train, test = slice(0, 200), slice(200, 300)
    problem = build_problem(A[train], b[train], loss, l2=1e-2, fit_intercept=intercept)
    heldout = HeldOut(Data(A[test]), b[test], problem.loss, intercept)
    seen: list[np.ndarray] = []

    def observe(x):
        seen.append(x.copy())
        return heldout(x)

    result = solve(problem, solver, None, StopRules(max_epochs=20, tol=1e-9), observe=observe)
    assert len(result.trace) == len(seen) >= 3
    for point, x in zip(result.trace, seen, strict=True):
        assert point.primal == pytest.approx(problem.primal_value(x), rel=1e-12, abs=1e-14)
        expected = numpy_metrics(A[test], b[test], loss, x, intercept)
        got = point.extras["test"]
        assert set(got) == set(expected)
        for name, value in expected.items():
            assert got[name] == pytest.approx(value, rel=1e-10, abs=1e-12), name
    first, last = result.trace[0].extras["test"], result.trace[-1].extras["test"]
    assert last["loss"] < first["loss"]  # the fit generalizes on this planted model
    if loss != "squared":
        assert last["accuracy"] > 0.65
    else:
        assert last["r2"] > 0.5


def test_a_zero_margin_is_a_wrong_prediction_and_constant_targets_have_no_r2():
    A = sp.csr_matrix(np.eye(4))
    b = np.array([1.0, -1.0, 1.0, -1.0])
    logistic = HeldOut(Data(A), b, make_loss("logistic"))
    assert logistic(np.zeros(4)) == {"test": {"loss": pytest.approx(np.log(2)), "accuracy": 0.0}}
    # margins 1, -1, 0, 1 against labels 1, -1, 1, -1: two right, a tie and a wrong one
    assert logistic(np.array([1.0, -1.0, 0.0, 1.0]))["test"]["accuracy"] == 0.5
    squared = HeldOut(Data(A), np.full(4, 2.0), make_loss("squared"), intercept=True)
    assert squared(np.array([0.0, 0.0, 0.0, 0.0, 2.0])) == {"test": {"loss": 0.0, "r2": None}}
    with pytest.raises(ValueError, match=r"x has shape \(4,\), the test set expects \(5,\)"):
        squared(np.zeros(4))
    with pytest.raises(ValueError, match="needs test labels -1/\\+1"):
        HeldOut(Data(A), np.arange(4.0), make_loss("logistic"))


def test_a_diverged_iterate_s_metrics_are_none_not_nan():
    heldout = HeldOut(Data(np.eye(2)), np.array([1.0, 2.0]), make_loss("squared"))
    with np.errstate(invalid="ignore", over="ignore"):  # inf·0 in the product
        metrics = heldout(np.array([np.inf, 0.0]))
    assert metrics == {"test": {"loss": None, "r2": None}}


def test_the_metrics_run_off_the_solver_clock():
    A, b = make("sparse", "logistic", n=100)
    problem = build_problem(A[:80], b[:80], "logistic", l2=1e-2)
    heldout = HeldOut(Data(A[80:]), b[80:], problem.loss)
    pause = 0.05

    def slow(x):
        time.sleep(pause)
        return heldout(x)

    recorder = Recorder(problem, StopRules(max_epochs=10), observe=slow)
    recorder.start()
    x = np.zeros(problem.n_features)
    for k in range(3):
        recorder.checkpoint(k, float(k), x=x, extras={"step": k})
    assert recorder.solver_time < pause
    assert recorder.evaluation_seconds >= 3 * pause
    assert [p.extras["step"] for p in recorder.points] == [0, 1, 2]  # the method's kept
    assert all("test" in p.extras for p in recorder.points)


def test_a_random_split_is_seeded_and_leaves_rows_on_both_sides():
    train, test = random_split(10, 0.2, seed=3)
    again = random_split(10, 0.2, seed=3)
    assert np.array_equal(train, again[0]) and np.array_equal(test, again[1])
    assert np.array_equal(test, np.sort(np.random.default_rng(3).permutation(10)[:2]))
    assert np.array_equal(np.sort(np.concatenate([train, test])), np.arange(10))
    assert not np.array_equal(test, random_split(10, 0.2, seed=4)[1])
    assert [len(part) for part in random_split(3, 0.01, 0)] == [2, 1]  # at least one
    assert [len(part) for part in random_split(3, 0.9, 0)] == [1, 2]  # one left to train
    with pytest.raises(ValueError, match="at least 2 rows"):
        random_split(1, 0.5, 0)


def test_a_narrower_test_matrix_is_padded_and_a_wider_one_refused():
    A = sp.csr_matrix(np.array([[1.0, 0.0, 2.0]]))
    padded = align_columns(A, 5)
    assert padded.shape == (1, 5)
    np.testing.assert_array_equal(padded.toarray(), [[1.0, 0.0, 2.0, 0.0, 0.0]])
    assert align_columns(A, 3).shape == (1, 3)
    with pytest.raises(ValueError, match="has 3 features, more than the 2 of the training"):
        align_columns(A, 2)


def test_test_labels_follow_the_training_mapping():
    zero_one = np.array([0.0, 1.0, 1.0, 0.0])
    assert labels_like(np.array([1.0, 1.0]), zero_one, binary=True).tolist() == [1.0, 1.0]
    assert labels_like(np.array([0.0, 1.0]), zero_one, True).tolist() == [-1.0, 1.0]
    with pytest.raises(LabelError, match="not among the training classes"):
        labels_like(np.array([2.0]), zero_one, True)
    classes = np.array([1.0, 2.0, 3.0])
    assert labels_like(np.array([3.0, 2.0]), classes, True, positive=[3.0]).tolist() == [1, -1]
    targets = np.array([0.5, 7.0])
    assert labels_like(targets, classes, binary=False).tolist() == [0.5, 7.0]


@pytest.mark.parametrize("how", ["none", "rows", "mean"])
def test_a_test_matrix_is_normalized_as_fitted_on_the_training_rows(how):
    A, _ = make("sparse", "logistic", n=60)
    train, test = A[:40], A[40:]
    got = normalize_like(test, how, train)
    if how == "mean":  # the training rows' R̄, not the test rows'
        mean_norm = np.linalg.norm(train.toarray(), axis=1).mean()
        np.testing.assert_allclose(got.toarray(), test.toarray() / mean_norm, rtol=1e-14)
    else:
        np.testing.assert_array_equal(got.toarray(), normalize(test, how).toarray())


def test_the_test_set_s_bytes_count_its_rows_labels_and_one_scoring():
    # 40 rows × 30 columns, 20% stored: CSR values 8, indices 4 bytes a non-zero, 41 row
    # pointers of 8; row norms, row counts and labels 8 bytes a row; 5 scoring vectors
    A, b = make("sparse", "logistic", 40)
    held = HeldOut(Data(A), b, make_loss("logistic"))
    nnz = held.data.nnz
    assert held.nbytes == 12 * nnz + 8 * 41 + 3 * 8 * 40 + 5 * 8 * 40
    dense = HeldOut(Data(np.ones((40, 30))), b, make_loss("logistic"))
    assert dense.nbytes == 12 * 1200 + 8 * 41 + 3 * 8 * 40 + 5 * 8 * 40
