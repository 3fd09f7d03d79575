"""core.references.data_digest: the identity of a problem's data, stable across releases."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from faceoff.core import references
from faceoff.core.references import data_digest

A = sp.csr_matrix(np.array([[1.0, 0.0, 2.5], [0.0, -3.0, 0.0]]))
B = np.array([1.0, -1.0])
# Stored references are keyed by this digest: a new format needs a new DIGEST_VERSION.
KNOWN = "d0d6f7f4cc6aee596d40238135330d0a1b31d79ef82834793442794bc7cdaded"


def test_the_digest_of_a_known_matrix_does_not_change():
    assert data_digest(A, B) == KNOWN


def test_index_dtypes_and_label_dtypes_do_not_change_the_digest():
    wide = A.copy()  # scipy would narrow the indices of a new matrix: set them afterwards
    wide.indices, wide.indptr = A.indices.astype(np.int64), A.indptr.astype(np.int64)
    assert wide.indices.dtype == np.int64
    assert data_digest(wide, B.astype(np.float32)) == KNOWN


def test_a_non_canonical_matrix_has_the_digest_of_its_canonical_form():
    # (0, 2) stored as 1.0 + 1.5, and row 0's entries out of order
    messy = sp.csr_matrix(
        (np.array([1.5, 1.0, 1.0, -3.0]), np.array([2, 0, 2, 1]), np.array([0, 3, 4])), A.shape
    )
    assert not messy.has_canonical_format
    assert data_digest(messy, B) == KNOWN


@pytest.mark.parametrize("chunk", [1, 2, 3, 1 << 20])
def test_the_digest_does_not_depend_on_the_cast_chunk(monkeypatch, chunk):
    rng = np.random.default_rng(0)
    M = sp.random(50, 40, density=0.3, random_state=rng, format="csr")
    b = rng.standard_normal(50)
    expected = data_digest(M, b)
    monkeypatch.setattr(references, "_CHUNK", chunk)
    assert data_digest(M, b) == expected
    assert data_digest(M, b) == data_digest(M, b)


@pytest.mark.parametrize(
    "change",
    [
        lambda M, b: (M * 2.0, b),
        lambda M, b: (M, -b),
        lambda M, b: (sp.csr_matrix(np.array([[1.0, 2.5, 0.0], [0.0, -3.0, 0.0]])), b),
        lambda M, b: (sp.csr_matrix((M.data, M.indices, M.indptr), (2, 4)), b),
    ],
    ids=["values", "labels", "pattern", "shape"],
)
def test_any_change_of_the_data_changes_the_digest(change):
    assert data_digest(*change(A, B)) != KNOWN
