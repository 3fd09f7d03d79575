"""Where a registered dataset's matrix comes from, and loading it (NumPy/SciPy only).

A dataset's ``source`` is one of

- ``{"kind": "registry", "name": "a9a"}`` — a public dataset of :mod:`data.registry`
  (mirror, cache, then download);
- ``{"kind": "upload", "file": "<sha256>.svm", "n_features": 123 | None}`` — an uploaded
  svmlight file kept in the service's upload folder;
- ``{"kind": "synthetic", "generator": "classification", "n_samples": ..., "n_features":
  ..., "density": ..., "seed": ...}`` — :mod:`data.synthetic`, regenerated identically;
- ``{"kind": "sklearn", "name": "breast_cancer"}`` — shipped with scikit-learn.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

GENERATORS = ("classification", "regression")
SKLEARN = ("breast_cancer",)


def load_matrix(source: dict[str, Any], upload_dir: Path) -> tuple[sp.csr_matrix, np.ndarray]:
    """(A, b) of a dataset source: A as CSR float64, b as stored (labels or targets).

    Raises ``data.registry.DatasetError`` (or ``ValueError`` for a malformed source) with a
    message a person can act on.
    """
    kind = source.get("kind")
    if kind == "registry":
        from data.cache import load_dataset

        A, b, _ = load_dataset(source["name"], progress=False)
        return A, b
    if kind == "upload":
        from data.svmlight import read_svmlight

        path = (upload_dir / source["file"]).resolve()
        if path.parent != upload_dir.resolve():
            raise ValueError(f"upload file name {source['file']!r} leaves the upload folder")
        A, b = read_svmlight(path, n_features=source.get("n_features"))
        return sp.csr_matrix(A, dtype=np.float64), b
    if kind == "synthetic":
        from data import synthetic

        if source["generator"] not in GENERATORS:
            raise ValueError(f"unknown generator {source['generator']!r}; accepted: {GENERATORS}")
        A, b = getattr(synthetic, source["generator"])(
            int(source["n_samples"]),
            int(source["n_features"]),
            float(source["density"]),
            seed=int(source.get("seed", 0)),
        )
        return sp.csr_matrix(A, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if kind == "sklearn":
        if source["name"] != "breast_cancer":
            raise ValueError(
                f"unknown scikit-learn dataset {source['name']!r}; accepted: {SKLEARN}"
            )
        from sklearn.datasets import load_breast_cancer

        from data.transforms import standardize

        X, y = load_breast_cancer(return_X_y=True)
        return sp.csr_matrix(standardize(X)), np.where(y == 1, 1.0, -1.0)
    raise ValueError(f"unknown dataset source kind {kind!r}")
