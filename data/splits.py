"""Test sets: a seeded random hold-out of a dataset's rows, a test matrix aligned to the
training columns, and test labels mapped as the training labels were.

A test set is read and transformed like the training data (``data.transforms.normalize_like``)
and its labels mapped by the training labels' rule (:func:`labels_like`), so that a model
fitted on the training rows is scored on the same features and classes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from faceoff.data.labels import LabelError, describe


def random_split(n_samples: int, fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(training rows, test rows), each increasing int64: ``round(fraction·n)`` rows drawn
    without replacement by ``numpy.random.default_rng(seed)`` (at least one, and at least
    one row left to train on).

    ValueError when fewer than 2 rows leave nothing to split."""
    if n_samples < 2:
        raise ValueError(f"a random hold-out needs at least 2 rows, the data has {n_samples}")
    if not 0 < fraction < 1:
        raise ValueError(f"the held-out fraction must be in (0, 1), got {fraction!r}")
    n_test = min(max(1, round(fraction * n_samples)), n_samples - 1)
    order = np.random.default_rng(seed).permutation(n_samples)
    test = np.sort(order[:n_test]).astype(np.int64)
    train = np.sort(order[n_test:]).astype(np.int64)
    return train, test


def align_columns(A: sp.spmatrix, n_features: int, what: str = "the test set") -> sp.csr_matrix:
    """A (CSR float64) with ``n_features`` columns: zero columns added at the end if it has
    fewer (an svmlight file whose last features never occur in it); ValueError naming both
    counts if it has more (features the model has no coefficient for)."""
    A = sp.csr_matrix(A, dtype=np.float64)
    n, d = A.shape
    if d > n_features:
        raise ValueError(
            f"{what} has {d} features, more than the {n_features} of the training data: "
            "the model has no coefficient for the others; give a test set with at most "
            f"{n_features} features"
        )
    if d < n_features:
        A = sp.csr_matrix((A.data, A.indices, A.indptr), shape=(n, n_features))
    return A


def labels_like(
    b_test: np.ndarray,
    b_train: np.ndarray,
    binary: bool,
    positive: Sequence[float] | None = None,
) -> np.ndarray:
    """Test labels mapped by the rule that mapped the training labels ``b_train``
    (``data.labels.prepare_labels``): the classes in ``positive`` → +1, the others −1; for
    a classification loss without it, the larger training class → +1, the smaller −1;
    targets as they are for regression. Unlike the training set, a test set may lack a
    class.

    LabelError for a test label that is not one of the two training classes."""
    b_test = np.asarray(b_test, dtype=np.float64)
    if positive is not None:
        return np.where(np.isin(b_test, np.asarray(positive, dtype=np.float64)), 1.0, -1.0)
    if not binary:
        return b_test
    classes = np.unique(np.asarray(b_train, dtype=np.float64))
    unknown = np.setdiff1d(np.unique(b_test), classes)
    if len(unknown):
        raise LabelError(
            f"the test labels take {describe(unknown)}, not among the training classes "
            f"{describe(classes)}"
        )
    return np.where(b_test == classes[-1], 1.0, -1.0)
