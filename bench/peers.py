"""Peer solvers for the part-1 benchmark: scikit-learn and lightning behind one interface.

Every peer minimizes our objective P(x) = 1/n Σ φ(aᵢᵀx, bᵢ) + l2/2‖x‖² (no intercept) once
its weights are mapped:

- ``LogisticRegression`` (liblinear dual, saga): C Σ log(1 + exp(−bᵢaᵢᵀw)) + ½‖w‖², so
  C = 1/(n·l2), ``l1_ratio=0`` (``penalty`` is deprecated since scikit-learn 1.8);
- lightning ``SDCAClassifier``: 1/n Σ loss + alpha/2‖w‖², so alpha = l2, ``l1_ratio=0``;
- lightning ``CDClassifier``: C Σ loss + alpha/2‖w‖², so C = 1/n, alpha = l2,
  ``penalty="l2"``.

lightning's smooth hinge (SDCA and CD, γ = 1) is ours with γ = 1; its ``"log"`` loss (CD only)
is our logistic loss. The run checks each mapping numerically (see ``run_part1``).

None of these peers reports a trace, so a peer is run from scratch with an iteration budget
``max_iter`` (epochs: passes over the samples, or over the features for CDClassifier) and a
tolerance so small that its own stopping test never fires first.
"""

from __future__ import annotations

import gc
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

#: tolerance handed to every peer: small enough that the iteration budget decides when it stops
PEER_TOL = 1e-15

LIGHTNING_INSTALL = (
    ".venv/bin/pip install numpy cython setuptools wheel && "
    ".venv/bin/pip install --no-build-isolation sklearn-contrib-lightning"
)


@dataclass(frozen=True)
class Peer:
    """A peer solver: its column ``name``, the ``package`` it comes from, the losses it
    supports (our names), the sparse ``layout`` it works on and what its budget counts."""

    name: str
    package: str
    losses: tuple[str, ...]
    layout: str  # "csr" or "csc": handed over ready, so fit() does not pay a conversion
    budget: str
    _make: Callable[[str, float, int, int], object]

    def supports(self, loss: str) -> bool:
        return loss in self.losses

    def fit(
        self, A: sp.spmatrix, b: np.ndarray, loss: str, l2: float, max_iter: int
    ) -> tuple[float, np.ndarray]:
        """Fit from scratch with budget ``max_iter``; returns (wall seconds of fit(), coef).

        As in ``timeit``, the garbage collector is off while the clock runs.
        """
        estimator = self._make(loss, l2, A.shape[0], int(max_iter))
        gc.collect()
        gc.disable()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # ConvergenceWarning on every budgeted fit
                started = time.perf_counter()
                estimator.fit(A, b)
                seconds = time.perf_counter() - started
        finally:
            gc.enable()
        return seconds, np.asarray(estimator.coef_, dtype=np.float64).ravel().copy()


def _logistic_regression(solver: str, **extra):
    """A scikit-learn LogisticRegression peer factory for ``solver``."""

    def make(loss: str, l2: float, n_samples: int, max_iter: int):
        from sklearn.linear_model import LogisticRegression

        return LogisticRegression(
            solver=solver,
            C=1.0 / (n_samples * l2),
            l1_ratio=0.0,
            fit_intercept=False,
            tol=PEER_TOL,
            max_iter=max_iter,
            random_state=0,
            **extra,
        )

    return make


_liblinear = _logistic_regression("liblinear", dual=True)
_saga = _logistic_regression("saga")


def _sdca(loss: str, l2: float, n_samples: int, max_iter: int):
    from lightning.classification import SDCAClassifier

    return SDCAClassifier(
        loss={"smooth_hinge": "smooth_hinge"}[loss],
        gamma=1.0,
        alpha=l2,
        l1_ratio=0.0,
        tol=PEER_TOL,
        max_iter=max_iter,
        random_state=0,
    )


def _cd(loss: str, l2: float, n_samples: int, max_iter: int):
    from lightning.classification import CDClassifier

    return CDClassifier(
        loss={"logistic": "log", "smooth_hinge": "smooth_hinge"}[loss],
        penalty="l2",
        C=1.0 / n_samples,
        alpha=l2,
        tol=PEER_TOL,
        max_iter=max_iter,
        random_state=0,
    )


PEERS: tuple[Peer, ...] = (
    Peer(
        "liblinear",
        "scikit-learn",
        ("logistic",),
        "csr",
        "outer iterations (passes over the samples)",
        _liblinear,
    ),
    Peer("sk_saga", "scikit-learn", ("logistic",), "csr", "epochs", _saga),
    Peer("lt_sdca", "sklearn-contrib-lightning", ("smooth_hinge",), "csr", "epochs", _sdca),
    Peer(
        "lt_cd",
        "sklearn-contrib-lightning",
        ("logistic", "smooth_hinge"),
        "csc",
        "outer iterations (passes over the features)",
        _cd,
    ),
)

PEER_TITLES = {
    "liblinear": 'sklearn LogisticRegression(solver="liblinear", dual=True)',
    "sk_saga": 'sklearn LogisticRegression(solver="saga")',
    "lt_sdca": "lightning SDCAClassifier",
    "lt_cd": "lightning CDClassifier",
}


def missing_packages() -> list[str]:
    """Messages for the peer packages that cannot be imported (empty when all are there)."""
    missing = []
    try:
        import sklearn.linear_model  # noqa: F401
    except ImportError as exc:
        missing.append(
            f"scikit-learn is missing ({exc}); install it with `.venv/bin/pip install scikit-learn`"
        )
    try:
        import lightning.classification  # noqa: F401
    except ImportError as exc:
        missing.append(
            f"lightning (PyPI: sklearn-contrib-lightning) is missing ({exc}); it has "
            f"no wheels, build it with `{LIGHTNING_INSTALL}`"
        )
    return missing


def layouts(csr: sp.spmatrix) -> dict[str, sp.spmatrix]:
    """A in both layouts as scipy ``*_matrix`` objects with int32 indices (what liblinear and
    lightning's Cython datasets read), so no peer converts its input inside the clock."""
    csr = sp.csr_matrix(csr, dtype=np.float64)
    csc = csr.tocsc()
    out = {}
    for name, mat in (("csr", csr), ("csc", csc)):
        mat.sort_indices()
        cls = sp.csr_matrix if name == "csr" else sp.csc_matrix
        out[name] = cls(
            (mat.data, mat.indices.astype(np.int32), mat.indptr.astype(np.int32)), shape=mat.shape
        )
    return out
