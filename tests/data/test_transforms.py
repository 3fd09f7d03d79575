"""faceoff.data.transforms (row normalization, mean-norm scaling) and faceoff.data.labels
(the label rule)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from faceoff.data.labels import LabelError, prepare_labels
from faceoff.data.transforms import (
    normalize,
    normalize_rows,
    row_norms,
    scale_by_mean_row_norm,
    standardize,
)

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
