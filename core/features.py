"""Random features of a registered dataset as a dataset source (Rahimi & Recht 2007; the
DGPD paper's Mnist-RF and Mnist-RB, §5: :mod:`faceoff.data.random_features`).

A request names its base dataset and the map::

    {"kind": "random_features", "base": "mnist", "map": "fourier", "n_components": 1000,
     "gamma": 0.02, "seed": 0}
    {"kind": "random_features", "base": "mnist", "map": "binning", "n_grids": 100,
     "sigma": 20, "seed": 0}

and the dataset's stored source adds the base's own source (``base_source``: the features
are made of that data whatever becomes of the name) and shape (``base_shape``: [n, d]), so
that the size caps are checked before anything is built, at registration and by every
worker that loads it (:func:`check_features`):

- Fourier: an n × D dense matrix (n·D non-zeros, D features) from a d × D Gaussian W
  (d·D numbers, checked as non-zeros too);
- binning: n·P non-zeros (one a grid and sample); it reads the base as a dense n × d array
  (n·d, checked as non-zeros), and its number of features, the bins the data occupies, is
  known once built (then checked against ``MAX_FEATURES`` by ``load_matrix``).

The labels are the base's. Features of an upload are private to the upload's team, like
the upload; features of features are refused (give the base they were made from).

Building them costs minutes at the paper's sizes (Mnist-RB: 10,000 × 784 → 100 grids,
400,225 features), so each machine builds them once (:func:`load_features`): the matrix and
labels go to its data cache folder (:func:`faceoff.data.cache.built_matrix`) under the
digest of :func:`features_key` — the base's data, the map, its parameters and seed, and the
code that builds them — and every later job reads them back.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np
import scipy.sparse as sp
from sqlalchemy.orm import Session

from faceoff.core.datasets import Caps, Loc, check_source, resolve_dataset
from faceoff.core.models import Dataset
from faceoff.core.specs import SpecError
from faceoff.data import random_features, synthetic
from faceoff.data.cache import built_matrix
from faceoff.data.fetch import locate
from faceoff.data.random_features import random_binning_features, random_fourier_features
from faceoff.data.registry import get_spec
from faceoff.data.transforms import as_csr

MAPS = {"fourier": ("n_components", "gamma"), "binning": ("n_grids", "sigma")}


def expand_source(
    session: Session, source: dict[str, Any], *, team_id: int | None, caps: Caps
) -> tuple[dict[str, Any], Dataset]:
    """(the stored source, the base dataset) of a validated request ``source``; SpecError
    at ``("source", "base")`` for an unknown or unusable base, DatasetTooLarge for a base
    or features over ``caps``."""
    loc = ("source", "base")
    base = resolve_dataset(session, source["base"], loc, team_id=team_id, caps=caps)
    if base.source.get("kind") == "random_features":
        raise SpecError(
            loc,
            f"dataset {base.name!r} is itself random features of "
            f"{base.source['base']!r}; give the dataset they were made from",
        )
    if base.n_samples is None or base.n_features is None:
        raise SpecError(
            loc,
            f"the shape of dataset {base.name!r} is not known yet; read its statistics "
            "(GET /datasets/{id}/stats) first",
        )
    stored = {
        **source,
        "base_source": base.source,
        "base_shape": [base.n_samples, base.n_features],
    }
    check_features(stored, caps)
    return stored, base


def feature_shape(source: dict[str, Any]) -> tuple[int, int | None, int]:
    """(n_samples, n_features or None while not built, non-zeros) of the features."""
    n, _ = source["base_shape"]
    if source["map"] == "fourier":
        return n, int(source["n_components"]), n * int(source["n_components"])
    return n, None, n * int(source["n_grids"])


def check_features(source: dict[str, Any], caps: Caps, loc: Loc = ("source",)) -> None:
    """Refuse features (and their base) over ``caps`` before anything is built
    (DatasetTooLarge at the field that sets the size)."""
    check_source(source["base_source"], caps, (*loc, "base"))
    n, d = source["base_shape"]
    size, _ = MAPS[source["map"]]
    base = repr(source["base"])
    if source["map"] == "fourier":
        D = int(source["n_components"])
        subject = f"random Fourier features of {base} (n_samples·n_components, dense)"
        caps.check(subject, {"nnz": (*loc, size)}, nnz=n * D)
        caps.check("n_components", {"n_features": (*loc, size)}, n_features=D)
        weights = f"their weights W (the base's {d} features × n_components)"
        caps.check(weights, {"nnz": (*loc, size)}, nnz=d * D)
        return
    P = int(source["n_grids"])
    caps.check(
        f"random binning features of {base} (n_samples·n_grids)", {"nnz": (*loc, size)}, nnz=n * P
    )
    dense = f"binning reads {base} as a dense {n} × {d} array"
    caps.check(dense, {"nnz": (*loc, "base")}, nnz=n * d)


def build_features(A: sp.spmatrix, source: dict[str, Any]) -> sp.csr_matrix:
    """The features of the base's matrix ``A`` (seeded: the same source, the same matrix)."""
    seed = int(source.get("seed", 0))
    if source["map"] == "fourier":
        features = random_fourier_features(
            A, int(source["n_components"]), float(source["gamma"]), seed
        )[0]
        return as_csr(features)
    return random_binning_features(A, int(source["n_grids"]), float(source["sigma"]), seed)[0]


def load_features(
    source: dict[str, Any], load_base: Callable[[dict[str, Any]], tuple[sp.spmatrix, np.ndarray]]
) -> tuple[sp.csr_matrix, np.ndarray]:
    """(features, labels) of a stored ``source``: read from this machine's data cache when
    built before under the same :func:`features_key`, else built from the base
    (``load_base(source["base_source"])``: (A, b)) and stored there first."""

    def build() -> tuple[sp.csr_matrix, np.ndarray]:
        A, b = load_base(source["base_source"])
        return build_features(A, source), b

    return built_matrix(features_key(source), build)


def features_key(source: dict[str, Any]) -> str:
    """The file name the features of ``source`` are cached under: a sha256 of the base's
    data (its source, and the sha256 of a registry file or the code of a synthetic
    generator), the map, its parameters and seed (as :func:`build_features` reads them)
    and the code that builds them, so that a change of any of them builds anew."""
    base = source["base_source"]
    size, width = MAPS[source["map"]]
    described = {
        "base": base,
        "base_data": _base_data(base),
        "map": source["map"],
        size: int(source[size]),
        width: float(source[width]),
        "seed": int(source.get("seed", 0)),
        "code": _code_version(),
    }
    digest = hashlib.sha256(json.dumps(described, sort_keys=True).encode()).hexdigest()
    return f"features-{source['map']}-{digest}"


def _base_data(base: dict[str, Any]) -> str | None:
    """What identifies a base's data beyond its source: the sha256 of a registry dataset's
    file (checked, as loading it checks it), the code of the synthetic generators; None
    for an upload (its file is named by its sha256) and scikit-learn's data."""
    if base.get("kind") == "registry":
        return locate(get_spec(base["name"]), progress=False).sha256
    if base.get("kind") == "synthetic":
        return _code_digest(synthetic)
    return None


def _code_version() -> str:
    """A digest of the code that builds features: the maps and :func:`build_features`."""
    return _code_digest(random_features) + _code_digest(build_features)


@cache
def _code_digest(code: Any) -> str:
    """The sha256 of the source of a module or function (read once per process)."""
    return hashlib.sha256(inspect.getsource(code).encode()).hexdigest()
