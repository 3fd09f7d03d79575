"""faceoff.data.transforms (row normalization, mean-norm scaling) and faceoff.data.labels
(the label rule)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from faceoff.data.labels import LabelError, prepare_labels
from faceoff.data.transforms import (
    as_csr,
    normalize,
    normalize_rows,
    row_norms,
    scale_by_mean_row_norm,
    standardize,
)
from tests.memory import traced_peak

DENSE = np.array([[3.0, 4.0, 0.0], [0.0, 0.0, 0.0], [1.0, -1.0, 1.0], [0.0, 2.0, 0.0]])


@pytest.fixture(params=["dense", "sparse"])
def matrix(request):
    return DENSE.copy() if request.param == "dense" else sp.csr_matrix(DENSE)


def _array(A) -> np.ndarray:
    return A.toarray() if sp.issparse(A) else np.asarray(A)


def test_row_norms(matrix):
    np.testing.assert_allclose(row_norms(matrix), [5.0, 0.0, np.sqrt(3.0), 2.0])


def test_normalize_rows(matrix):
    before = _array(matrix).copy()
    out = normalize_rows(matrix)
    assert sp.issparse(out) == sp.issparse(matrix)
    np.testing.assert_allclose(row_norms(out), [1.0, 0.0, 1.0, 1.0])
    # aᵢ / ‖aᵢ‖; the all-zero row stays zero
    np.testing.assert_allclose(_array(out)[0], [0.6, 0.8, 0.0])
    np.testing.assert_array_equal(_array(out)[1], 0.0)
    np.testing.assert_allclose(_array(out)[2], np.array([1.0, -1.0, 1.0]) / np.sqrt(3.0))
    np.testing.assert_array_equal(_array(matrix), before)  # input untouched


def test_normalize_rows_keeps_the_sparsity_pattern():
    A = sp.random(50, 30, density=0.1, format="csr", random_state=np.random.default_rng(0))
    out = normalize_rows(A)
    assert out.format == "csr" and out.nnz == A.nnz
    nonempty = np.diff(A.indptr) > 0
    np.testing.assert_allclose(row_norms(out)[nonempty], 1.0)


def test_scale_by_mean_row_norm(matrix):
    out = scale_by_mean_row_norm(matrix)
    mean_norm = (5.0 + 0.0 + np.sqrt(3.0) + 2.0) / 4
    assert sp.issparse(out) == sp.issparse(matrix)
    np.testing.assert_allclose(_array(out), DENSE / mean_norm)
    assert row_norms(out).mean() == pytest.approx(1.0)
    # one scale for all entries: the ratio R / R̄ is kept
    ratio = row_norms(matrix).max() / row_norms(matrix).mean()
    assert row_norms(out).max() / row_norms(out).mean() == pytest.approx(ratio)


def test_scale_of_zero_matrix_is_identity():
    np.testing.assert_array_equal(scale_by_mean_row_norm(np.zeros((3, 2))), 0.0)


def test_normalize_by_name(matrix):
    assert normalize(matrix, "none") is matrix
    np.testing.assert_allclose(_array(normalize(matrix, "rows")), _array(normalize_rows(matrix)))
    np.testing.assert_allclose(
        _array(normalize(matrix, "mean")), _array(scale_by_mean_row_norm(matrix))
    )
    accepted = "unknown normalization 'cols'; accepted: none, rows, mean"
    with pytest.raises(ValueError, match=accepted):
        normalize(matrix, "cols")


# labels: two values -> the larger is +1; multiclass needs `positive`


@pytest.mark.parametrize("pair", [(0.0, 1.0), (1.0, 2.0), (-1.0, 1.0), (3.0, 7.5)])
def test_two_classes_larger_is_positive(pair):
    low, high = pair
    b = np.array([high, low, low, high, high])
    np.testing.assert_array_equal(prepare_labels(b, binary=True), [1, -1, -1, 1, 1])


def test_regression_targets_unchanged():
    b = np.array([0.3, -2.0, 5.0])
    np.testing.assert_array_equal(prepare_labels(b, binary=False), b)


def test_multiclass_needs_positive():
    b = np.arange(12.0) % 10
    with pytest.raises(LabelError) as info:
        prepare_labels(b, binary=True)
    message = str(info.value)
    assert "10 values: 0, 1, 2, 3, 4, 5, 6, 7, ..." in message
    assert "--positive" in message


def test_single_class_is_an_error():
    with pytest.raises(LabelError, match="two label classes, found 1 value: 1"):
        prepare_labels(np.ones(4), binary=True)


@pytest.mark.parametrize("binary", [True, False])
def test_positive_classes(binary):
    b = np.array([1.0, 2.0, 3.0, 2.0, 4.0])
    np.testing.assert_array_equal(prepare_labels(b, binary, positive=[2, 4]), [-1, 1, -1, 1, 1])


def test_positive_on_binary_file_can_flip_the_classes():
    b = np.array([1.0, 2.0, 2.0])
    np.testing.assert_array_equal(prepare_labels(b, True, positive=[1]), [1, -1, -1])


def test_positive_class_not_found():
    with pytest.raises(LabelError, match=r"--positive class 5 does not occur .* 2 values: 1, 2"):
        prepare_labels(np.array([1.0, 2.0]), True, positive=[1, 5])


def test_positive_covering_everything():
    with pytest.raises(LabelError, match="covers every label"):
        prepare_labels(np.array([1.0, 2.0]), True, positive=[1, 2])


# standardize: dense columns to mean 0, std 1


def test_standardize():
    A = np.array([[1.0, 0.1, 5.0], [3.0, 0.1, -1.0], [5.0, 0.1, 2.0], [7.0, 0.1, 0.0]])
    out = standardize(A)
    np.testing.assert_allclose(out.mean(axis=0), 0.0, atol=1e-15)
    np.testing.assert_allclose(out.std(axis=0)[[0, 2]], 1.0)
    np.testing.assert_array_equal(out[:, 1], 0.0)  # the constant column
    np.testing.assert_allclose(out[:, 0], (A[:, 0] - 4.0) / np.sqrt(5.0))


def test_standardize_refuses_sparse_data():
    with pytest.raises(TypeError, match="dense.*normalize_rows or scale_by_mean_row_norm"):
        standardize(sp.csr_matrix(DENSE))


@pytest.mark.parametrize("transform", [normalize_rows, scale_by_mean_row_norm])
def test_sparse_transforms_share_the_indices_and_keep_the_input(transform):
    A = sp.random(20_000, 2_000, density=0.025, format="csr", random_state=1)  # 1M nnz
    before = A.copy()
    scaled, peak = traced_peak(lambda: transform(A))
    assert np.shares_memory(scaled.indices, A.indices)
    np.testing.assert_array_equal(A.data, before.data)  # the input is left as it was
    # only new values (8 bytes a non-zero) and one temporary of the same size
    assert peak < 1.6 * A.data.nbytes
    norms = np.sqrt(np.asarray(before.multiply(before).sum(axis=1)).ravel())
    np.testing.assert_array_equal(row_norms(A), norms)


def test_unsorted_input_is_sorted_in_a_copy():
    A = sp.csr_matrix(([3.0, 4.0], [1, 0], [0, 2]), shape=(1, 2))
    A.has_sorted_indices = False
    scaled = normalize_rows(A)
    np.testing.assert_allclose(scaled.toarray(), [[0.8, 0.6]])
    assert list(A.indices) == [1, 0]  # not sorted in place: it shares nothing with A


def test_as_csr_views_a_dense_array_without_zeros():
    dense = np.arange(1.0, 13.0).reshape(4, 3)
    csr = as_csr(dense)
    assert np.shares_memory(csr.data, dense)
    np.testing.assert_array_equal(csr.toarray(), dense)
    dense[1, 1] = 0.0  # a zero: stored as scipy does, without it
    assert as_csr(dense).nnz == 11
    np.testing.assert_array_equal(as_csr(dense).toarray(), dense)
