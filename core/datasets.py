"""Where a registered dataset's matrix comes from, and loading it (NumPy/SciPy only).

A dataset's ``source`` is one of

- ``{"kind": "registry", "name": "a9a"}`` — a public dataset of :mod:`faceoff.data.registry`
  (mirror, cache, then download);
- ``{"kind": "upload", "file": "<sha256>.svm", "n_features": 123 | None}`` — an uploaded
  svmlight file kept in the service's upload folder;
- ``{"kind": "synthetic", "generator": "classification", "n_samples": ..., "n_features":
  ..., "density": ..., "seed": ...}`` — :mod:`faceoff.data.synthetic`, regenerated identically;
- ``{"kind": "sklearn", "name": "breast_cancer"}`` — shipped with scikit-learn.

Size caps. Memory is bounded by the caps of :class:`Caps` (``FACEOFF_MAX_SAMPLES``,
``FACEOFF_MAX_FEATURES``, ``FACEOFF_MAX_NNZ``): a source's declared shape is checked when it
is registered (:func:`check_source`, the registry entry's shape, the synthetic parameters, an
upload's declared ``n_features`` and, once parsed, the file's shape), when a job is submitted
(:func:`check_dataset`) and again by :func:`load_matrix` before and after loading, so a
dataset registered under larger caps is refused by the worker too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from faceoff.core.settings import Settings, get_settings
from faceoff.core.specs import SpecError

GENERATORS = ("classification", "regression")
SKLEARN = ("breast_cancer",)
SKLEARN_SHAPE = {"n_samples": 569, "n_features": 30, "nnz": 569 * 30}  # dense, standardized
# each capped field: its setting and what it counts
LIMITS = {
    "n_samples": ("MAX_SAMPLES", "samples"),
    "n_features": ("MAX_FEATURES", "features"),
    "nnz": ("MAX_NNZ", "non-zeros"),
}
Loc = tuple[str | int, ...]


class DatasetTooLarge(SpecError):
    """A dataset over one of the caps: ``loc`` is the field, the message names the limit."""


@dataclass(frozen=True)
class Caps:
    """The largest dataset the service registers or loads."""

    n_samples: int
    n_features: int
    nnz: int

    @classmethod
    def of(cls, settings: Settings) -> Caps:
        return cls(settings.MAX_SAMPLES, settings.MAX_FEATURES, settings.MAX_NNZ)

    def check(self, subject: str, locs: Mapping[str, Loc], **shape: int | None) -> None:
        """DatasetTooLarge at ``locs[field]`` for the first field of ``shape`` (``n_samples``,
        ``n_features``, ``nnz``; None: not known) over its cap."""
        for field, value in shape.items():
            cap = getattr(self, field)
            if value is not None and value > cap:
                setting, noun = LIMITS[field]
                raise DatasetTooLarge(
                    locs[field],
                    f"{subject}: {value} {noun}, more than this server's limit of {cap} "
                    f"(FACEOFF_{setting})",
                )


def _every(loc: Loc) -> dict[str, Loc]:
    return dict.fromkeys(LIMITS, loc)


def check_source(source: dict[str, Any], caps: Caps, loc: Loc = ("source",)) -> None:
    """Refuse a source whose declared shape exceeds ``caps`` (DatasetTooLarge), or a
    synthetic one that would hold no non-zero (SpecError), before anything is loaded.

    ``loc`` is where the source is in the request; an upload's declared ``n_features`` is
    the form field ``("n_features",)``. Raises ``faceoff.data.registry.UnknownDatasetError`` for an
    unknown registry name.
    """
    kind = source.get("kind")
    if kind == "registry":
        from faceoff.data.registry import get_spec

        entry = get_spec(source["name"])
        shape = {"n_samples": entry.n_samples, "n_features": entry.n_features, "nnz": entry.nnz}
        caps.check(f"dataset {entry.name!r}", _every((*loc, "name")), **shape)
    elif kind == "synthetic":
        n, d = int(source["n_samples"]), int(source["n_features"])
        nnz = n * d * float(source["density"])
        locs = {field: (*loc, field) for field in ("n_samples", "n_features")}
        caps.check("synthetic source", locs, n_samples=n, n_features=d)
        if round(nnz) < 1:
            raise SpecError(
                (*loc, "density"),
                f"n_samples·n_features·density = {nnz:.3g} rounds to no non-zero; "
                "raise density (at least one non-zero is needed)",
            )
        product = "n_samples·n_features·density"
        caps.check(product, {"nnz": (*loc, "density")}, nnz=round(nnz))
    elif kind == "upload":
        caps.check(
            "n_features", {"n_features": ("n_features",)}, n_features=source.get("n_features")
        )
    elif kind == "sklearn":
        caps.check(f"dataset {source['name']!r}", _every((*loc, "name")), **SKLEARN_SHAPE)


def check_dataset(dataset: Any, caps: Caps, loc: Loc) -> None:
    """Refuse a registered dataset (``faceoff.core.models.Dataset``) whose recorded shape exceeds
    ``caps``, e.g. one registered before the caps were lowered (DatasetTooLarge at ``loc``)."""
    shape = {field: getattr(dataset, field) for field in ("n_samples", "n_features", "nnz")}
    caps.check(f"dataset {dataset.name!r}", _every(loc), **shape)


def check_matrix(A: sp.spmatrix, caps: Caps, subject: str, loc: Loc = ()) -> None:
    """Refuse a loaded matrix over ``caps`` (DatasetTooLarge at ``loc``)."""
    n, d = A.shape
    caps.check(subject, _every(loc), n_samples=n, n_features=d, nnz=int(A.nnz))


def load_matrix(
    source: dict[str, Any], upload_dir: Path, caps: Caps | None = None
) -> tuple[sp.csr_matrix, np.ndarray]:
    """(A, b) of a dataset source: A as CSR float64, b as stored (labels or targets).

    The source's declared shape is checked against ``caps`` (default: those of the
    environment's settings) before loading, and the loaded matrix after. Raises
    ``faceoff.data.registry.DatasetError``, ``ValueError`` for a malformed source or
    :class:`DatasetTooLarge` (a ValueError), with a message a person can act on.
    """
    caps = caps or Caps.of(get_settings())
    check_source(source, caps)
    A, b = _load(source, upload_dir)
    check_matrix(A, caps, "the data")
    return A, b


def _load(source: dict[str, Any], upload_dir: Path) -> tuple[sp.csr_matrix, np.ndarray]:
    kind = source.get("kind")
    if kind == "registry":
        from faceoff.data.cache import load_dataset

        A, b, _ = load_dataset(source["name"], progress=False)
        return A, b
    if kind == "upload":
        from faceoff.data.svmlight import read_svmlight

        path = (upload_dir / source["file"]).resolve()
        if path.parent != upload_dir.resolve():
            raise ValueError(f"upload file name {source['file']!r} leaves the upload folder")
        A, b = read_svmlight(path, n_features=source.get("n_features"))
        return sp.csr_matrix(A, dtype=np.float64), b
    if kind == "synthetic":
        from faceoff.data import synthetic

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

        from faceoff.data.transforms import standardize

        X, y = load_breast_cancer(return_X_y=True)
        return sp.csr_matrix(standardize(X)), np.where(y == 1, 1.0, -1.0)
    raise ValueError(f"unknown dataset source kind {kind!r}")
