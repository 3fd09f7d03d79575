"""faceoff.data.stats (dataset statistics, the Faceoff advisor) and data.faceoff_matrices (the
extremal matrices of Theorems 3 and 9), checked against hand computations, the paper's
closed forms and brute force over all tiny binary matrices."""

from __future__ import annotations

import itertools
import json
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

from faceoff.data.faceoff_matrices import (
    SIDES,
    binary_max_c,
    binary_min_c,
    theorem3_matrix,
    theorem9_ratio_bounds,
    worst_case_binary,
)
from faceoff.data.stats import advise, dataset_stats, total_complexity

# rows = examples: nnz (2, 1, 1), norms (5, 2, 1); columns: nnz (2, 1, 1), ‖·‖² (10, 16, 4)
TINY = np.array([[3.0, 4.0, 0.0], [0.0, 0.0, 2.0], [1.0, 0.0, 0.0]])
TINY_LABELS = np.array([1.0, -1.0, 1.0])


@pytest.fixture(params=["dense", "sparse"])
def tiny(request):
    return TINY.copy() if request.param == "dense" else sp.csr_matrix(TINY)


def test_dataset_stats_tiny(tiny):
    stats = dataset_stats(tiny, TINY_LABELS)
    json.dumps(stats)  # JSON-serializable
    assert (stats["n"], stats["d"], stats["nnz"]) == (3, 3, 4)
    assert stats["density"] == pytest.approx(4 / 9)
    expected_nnz = {"min": 1.0, "median": 1.0, "mean": 4 / 3, "max": 2.0}
    for key in ("row_nnz", "col_nnz"):
        assert stats[key] == pytest.approx(expected_nnz)
    assert stats["R"] == pytest.approx(5.0)
    assert stats["R_mean"] == pytest.approx(8 / 3)
    assert stats["R_ratio"] == pytest.approx(15 / 8)
    assert stats["label_counts"] == {"-1": 1, "1": 2}


def test_dataset_stats_ignores_explicit_zeros_and_needs_matching_labels():
    A = sp.csr_matrix((np.array([0.0, 1.0]), np.array([0, 1]), np.array([0, 1, 2])), (2, 2))
    stats = dataset_stats(A)
    assert stats["nnz"] == 1 and "label_counts" not in stats
    with pytest.raises(ValueError, match="expected \\(2,\\)"):
        dataset_stats(A, np.ones(3))


def test_advise_tiny(tiny):
    beta, l2, n = 1.0, 0.5, 3
    out = advise(tiny, beta, l2)
    json.dumps(out)
    scale = beta / (l2 * n)  # β/(λn)
    assert out["C_P"] == pytest.approx(2 * 10 + 16 + 4)  # Σ col_nnz·‖col‖², eq. (16)
    assert out["C_D"] == pytest.approx(2 * 25 + 4 + 1)  # Σ row_nnz·‖row‖²
    assert out["kappa"] == pytest.approx(25 * beta / l2)  # R²/(λγ)
    assert out["T_P"] == pytest.approx(4 + scale * 40)  # eq. (15)
    assert out["T_D"] == pytest.approx(4 + scale * 55)
    assert out["T_P_uniform"] == pytest.approx(4 * (1 + scale * 16))  # §5.1, max ‖col‖² = 16
    assert out["T_D_uniform"] == pytest.approx(4 * (1 + scale * 25))  # max ‖row‖² = 25
    assert out["ratio"] == pytest.approx((4 + scale * 40) / (4 + scale * 55))
    assert out["winner"] == "primal_cd"


def test_empty_columns_are_counted_not_stored():
    """TINY with 4 empty columns: the statistics and eqs. (12)–(15) are those computed over
    all 7 columns (each empty one: nnz 0, weight λn)."""
    wide = np.hstack([TINY, np.zeros((3, 4))])
    stats = dataset_stats(sp.csr_matrix(wide))
    assert stats["d"] == 7
    assert stats["col_nnz"] == pytest.approx({"min": 0.0, "median": 0.0, "mean": 4 / 7, "max": 2})
    assert dataset_stats(np.hstack([TINY, np.zeros((3, 1))]))["col_nnz"]["median"] == 1.0
    beta, l2, n = 1.0, 0.5, 3
    out = advise(wide, beta, l2)
    weights = beta * (wide**2).sum(axis=0) + l2 * n
    col_nnz = (wide != 0).sum(axis=0)
    uniform = total_complexity(weights, col_nnz, np.full(7, 1 / 7), l2 * n)
    importance = total_complexity(weights, col_nnz, weights / weights.sum(), l2 * n)
    assert out["T_P_uniform"] == pytest.approx(uniform)
    assert out["T_P"] == pytest.approx(importance)
    assert out["T_D"] == pytest.approx(advise(TINY, beta, l2)["T_D"])


def test_memory_does_not_grow_with_the_number_of_columns():
    """Two non-zeros in 10⁷ declared columns: statistics and advice in O(nnz + n) memory,
    not O(d) (the shape an upload may declare)."""
    A = sp.csr_matrix((np.ones(2), np.array([0, 9_999_999]), np.array([0, 1, 2])), (2, 10**7))
    tracemalloc.start()
    try:
        stats, out = dataset_stats(A, np.array([1.0, -1.0])), advise(A, 0.25, 1e-4)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000
    assert stats["col_nnz"] == {"min": 0.0, "median": 0.0, "mean": 2e-7, "max": 1.0}
    assert out["C_P"] == out["C_D"] == 2.0 and out["ratio"] == pytest.approx(1.0)


@pytest.mark.parametrize("A", [np.zeros((3, 4)), sp.csr_matrix((5, 10**6))], ids=["dense", "wide"])
def test_advise_refuses_a_matrix_without_non_zeros(A):
    """No work to compare (a synthetic source with density 1e-300): a ValueError saying so,
    never a ZeroDivisionError; the statistics themselves are defined."""
    assert dataset_stats(A)["nnz"] == 0
    with pytest.raises(ValueError, match="no non-zero entries"):
        advise(A, 1.0, 0.1)


@pytest.mark.parametrize(("smoothness", "l2"), [(0.0, 1.0), (1.0, 0.0), (1.0, float("nan"))])
def test_advise_rejects_bad_constants(smoothness, l2):
    with pytest.raises(ValueError, match="positive number"):
        advise(TINY, smoothness, l2)


@pytest.mark.parametrize(("d", "n"), [(2, 2), (5, 3), (4, 9)])
@pytest.mark.parametrize(("a", "b", "c"), [(1.0, 1.0, 1.0), (2.0, -0.5, 3.0), (1e-2, 7.0, 0.3)])
def test_theorem3_matrix_closed_forms(d, n, a, b, c):
    A = theorem3_matrix(d, n, a, b, c)
    assert A.shape == (n, d)
    assert A[0, 0] == c and np.all(A[0, 1:].toarray() == a) and np.all(A[1:, 0].toarray() == b)
    out = advise(A, 1.0, 1.0)
    assert out["C_P"] == pytest.approx((d - 1) * a**2 + n * (n - 1) * b**2 + n * c**2)
    assert out["C_D"] == pytest.approx(d * (d - 1) * a**2 + (n - 1) * b**2 + d * c**2)


@pytest.mark.parametrize(("d", "n"), [(5, 3), (20, 50), (100, 10)])
def test_theorem3_ratio_reaches_the_bounds(d, n):
    small = 1e-4
    low = advise(theorem3_matrix(d, n, 1.0, small, small), 1.0, 1.0)
    high = advise(theorem3_matrix(d, n, small, 1.0, small), 1.0, 1.0)
    assert low["C_P"] / low["C_D"] == pytest.approx(1 / d, rel=0.01)
    assert high["C_P"] / high["C_D"] == pytest.approx(n, rel=0.01)


def _random_matrix(seed: int) -> sp.csr_matrix:
    rng = np.random.default_rng(seed)
    n, d = rng.integers(5, 40, size=2)
    A = sp.random(n, d, density=0.3, random_state=rng, format="csr")
    A.data = rng.standard_normal(A.nnz) * np.exp(rng.uniform(-3, 3, A.nnz))
    return A


@pytest.mark.parametrize("seed", range(8))
def test_importance_sampling_is_optimal(seed):
    """Theorem 2: importance sampling (14) minimizes T over serial samplings, so it beats
    the uniform one and random ones."""
    A = _random_matrix(seed)
    beta, l2 = [(1.0, 0.1), (0.25, 1e-3), (1.0, 10.0)][seed % 3]
    out = advise(A, beta, l2)
    assert out["T_P"] <= out["T_P_uniform"] * (1 + 1e-12)
    assert out["T_D"] <= out["T_D_uniform"] * (1 + 1e-12)
    n = A.shape[0]
    csc = A.tocsc()
    u = np.asarray(A.multiply(A).sum(axis=0)).ravel()
    weights = beta * u + l2 * n
    col_nnz = np.diff(csc.indptr)
    rng = np.random.default_rng(seed)
    for _ in range(20):
        p = rng.dirichlet(np.ones(A.shape[1]))
        assert out["T_P"] <= total_complexity(weights, col_nnz, p, l2 * n) * (1 + 1e-12)


def _binary_c(A) -> tuple[int, int]:
    """(C_P, C_D) of a binary matrix: Σ col_nnz², Σ row_nnz²."""
    A = np.asarray(A.toarray() if sp.issparse(A) else A) != 0
    return int((A.sum(axis=0) ** 2).sum()), int((A.sum(axis=1) ** 2).sum())


@pytest.mark.parametrize(("d", "n"), [(3, 3), (2, 4), (4, 2), (3, 4)])
def test_theorem9_bounds_by_brute_force(d, n):
    """Over every binary n×d matrix without empty rows or columns, the extremes of C_P, C_D
    and C_P/C_D at each nnz are Lemma 10's L, U and Theorem 9's bounds, and
    worst_case_binary attains the ratio bounds."""
    seen: dict[int, list[tuple[int, int]]] = {}
    for bits in itertools.product((0, 1), repeat=n * d):
        A = np.array(bits).reshape(n, d)
        if A.sum(axis=0).all() and A.sum(axis=1).all():
            seen.setdefault(int(A.sum()), []).append(_binary_c(A))
    for nnz, cs in seen.items():
        c_p, c_d = np.array(cs).T
        assert c_p.min() == binary_min_c(nnz, d) and c_d.min() == binary_min_c(nnz, n)
        assert c_p.max() == binary_max_c(nnz, d, n) and c_d.max() == binary_max_c(nnz, n, d)
        low, high = theorem9_ratio_bounds(d, n, nnz)
        ratios = c_p / c_d
        assert ratios.min() == pytest.approx(low) and ratios.max() == pytest.approx(high)
        assert np.divide(*_binary_c(worst_case_binary(d, n, nnz, "dual"))) == pytest.approx(low)
        assert np.divide(*_binary_c(worst_case_binary(d, n, nnz, "primal"))) == pytest.approx(high)


@pytest.mark.parametrize("side", SIDES)
@pytest.mark.parametrize(
    ("d", "n", "nnz"), [(300, 300, 3000), (200, 100, 1000), (7, 500, 600), (1, 5, 5), (9, 9, 81)]
)
def test_worst_case_binary_structure(d, n, nnz, side):
    A = worst_case_binary(d, n, nnz, side)
    assert sp.isspmatrix_csr(A) and A.shape == (n, d) and A.nnz == nnz
    assert np.all(A.data == 1.0)
    assert np.diff(A.indptr).min() >= 1 and np.diff(A.tocsc().indptr).min() >= 1
    low, high = theorem9_ratio_bounds(d, n, nnz)
    c_p, c_d = _binary_c(A)
    assert c_p / c_d == pytest.approx(low if side == "dual" else high)
    # rows (examples) as unequal as possible for "dual", columns (features) for "primal":
    # each such line holds one non-zero or is full, except one; the other side within one
    row_nnz, col_nnz = np.diff(A.indptr), np.diff(A.tocsc().indptr)
    bad, good, length = (row_nnz, col_nnz, d) if side == "dual" else (col_nnz, row_nnz, n)
    assert np.count_nonzero((bad != 1) & (bad != length)) <= 1
    assert good.max() - good.min() <= 1


def test_worst_case_binary_rejects_bad_input():
    with pytest.raises(ValueError, match="side must be one of primal, dual"):
        worst_case_binary(3, 3, 5, "both")
    with pytest.raises(ValueError, match="need max\\(d, n\\) = 4 <= nnz <= d·n = 12"):
        worst_case_binary(3, 4, 3, "dual")
    with pytest.raises(ValueError, match="non-zero"):
        theorem3_matrix(3, 3, 1.0, 0.0, 1.0)
