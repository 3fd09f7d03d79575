"""Reading LIBSVM/svmlight files (plain or .bz2) with scikit-learn's parser."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_file


def read_svmlight(path: str | Path, n_features: int | None = None) -> tuple[sp.csr_matrix, np.ndarray]:
    """Parse an svmlight file; returns (A as CSR float64, labels)."""
    A, b = load_svmlight_file(str(path), n_features=n_features, dtype=np.float64)
    return sp.csr_matrix(A), np.asarray(b, dtype=np.float64)
