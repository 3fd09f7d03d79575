"""The test problems of the acceptance criteria (dense and sparse synthetic, a9a, rcv1 subset)
and a small sparse one for methods too slow for the others."""

from __future__ import annotations

from functools import cache

from faceoff.data.svmlight import read_svmlight
from faceoff.data.synthetic import classification, multiclass, regression
from faceoff.data.transforms import normalize_rows
from faceoff.solvers.problem import Data, Problem, build_problem
from faceoff.solvers.vocabulary import PENALTY_NAMES, get_loss
from tests.datasets import dataset_file
from tests.reference import reference_optimum

# dataset -> (l2, l1 for elastic net and for the l1 penalty, whose l2 is 0)
WEIGHTS = {
    "dense": (1e-2, 1e-2),
    "sparse": (1e-3, 1e-3),
    "a9a": (1e-3, 1e-3),
    "rcv1": (1e-3, 2e-4),
    "small_sparse": (1e-2, 1e-2),
}
DATASETS = ("dense", "sparse", "a9a", "rcv1")  # every method must solve these
# K-class problems: (n, d, density, K, seed) of the synthetic ones, usps' first rows
MULTICLASS = {"dense_k": (300, 40, 1.0, 4, 11), "sparse_k": (800, 500, 0.02, 5, 12)}
K_WEIGHTS = {"dense_k": (1e-2, 1e-2), "sparse_k": (1e-3, 1e-3), "usps_k": (1e-3, 1e-3)}
K_DATASETS = ("dense_k", "sparse_k", "usps_k")  # every K-class form of every method
USPS_ROWS = 1000


@cache
def _matrix(name: str, regression_targets: bool):
    if name == "dense":
        make = regression if regression_targets else classification
        return make(n_samples=300, n_features=40, density=1.0, seed=1)
    if name == "sparse":
        make = regression if regression_targets else classification
        return make(n_samples=800, n_features=500, density=0.02, seed=2)
    if name == "small_sparse":
        make = regression if regression_targets else classification
        return make(n_samples=200, n_features=60, density=0.1, seed=5)
    if name == "a9a":
        return read_svmlight(dataset_file("a9a"), n_features=123)
    return read_svmlight(dataset_file("rcv1_small_vw"), n_features=47236)


@cache
def _data(name: str, regression_targets: bool) -> tuple[Data, object]:
    A, b = _matrix(name, regression_targets)
    return Data(A), b


def make_problem(name: str, loss: str, penalty: str, gamma: float = 1.0) -> Problem:
    """A test problem; a regression loss (one without binary labels: squared) uses
    regression targets on synthetic data and the ±1 labels as targets on real data;
    ``gamma`` smooths the smoothed hinge."""
    l2, l1 = WEIGHTS[name]
    synthetic = name in ("dense", "sparse", "small_sparse")
    data, b = _data(name, not get_loss(loss).needs_binary_labels and synthetic)
    l1, l2 = _weights(penalty, l1, l2)
    return build_problem(data, b, loss, gamma, l1=l1, l2=l2)


def _weights(penalty: str, l1: float, l2: float) -> tuple[float, float]:
    """(l1, l2) of ``penalty`` from a dataset's weights: l2 alone, both, or l1 alone."""
    if penalty not in PENALTY_NAMES:
        raise ValueError(f"penalty must be one of {', '.join(PENALTY_NAMES)}, got {penalty!r}")
    return (0.0 if penalty == "l2" else l1), (0.0 if penalty == "l1" else l2)


@cache
def reference(name: str, loss: str, penalty: str, gamma: float = 1.0) -> float:
    """P* of :func:`make_problem` by the L-BFGS reference, computed once per process."""
    return reference_optimum(make_problem(name, loss, penalty, gamma))[0]


@cache
def _classes(name: str) -> tuple[Data, object]:
    if name == "usps_k":
        A, b = read_svmlight(dataset_file("usps_zip_train"), n_features=256)
        A = normalize_rows(A[:USPS_ROWS])
        return Data(A), b[:USPS_ROWS]
    n, d, density, K, seed = MULTICLASS[name]
    A, b = multiclass(n, d, density, K, seed=seed)
    return Data(A), b


def make_k_problem(name: str, loss: str, penalty: str, form: str, gamma: float = 1.0) -> Problem:
    """A K-class test problem (``form``: "ovr" or "multinomial") on the labels as read."""
    l2, l1 = K_WEIGHTS[name]
    data, b = _classes(name)
    l1, l2 = _weights(penalty, l1, l2)
    return build_problem(data, b, loss, gamma, l1=l1, l2=l2, multiclass=form)


@cache
def k_reference(name: str, loss: str, penalty: str, form: str, gamma: float = 1.0) -> float:
    """P* of :func:`make_k_problem` by the L-BFGS reference on vec(X), once per process."""
    return reference_optimum(make_k_problem(name, loss, penalty, form, gamma))[0]
