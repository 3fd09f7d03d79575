"""Held-out metrics of an iterate: a test set scored at every trace point.

A :class:`HeldOut` is a :class:`~faceoff.solvers.trace.Recorder`'s ``observe`` hook: called
with the primal iterate of each point (off the solver clock), it returns the point's extras
``{"test": {"loss": ..., "accuracy": ...}}`` (``"r2"`` in place of ``"accuracy"`` for a
regression loss), from one product with the test matrix:

- loss: 1/m Σⱼ φ(aⱼᵀw + c, bⱼ) over the m test rows (the training objective's loss, no
  penalty);
- accuracy (a loss on ±1 labels): the share of rows with sign(aⱼᵀw + c) = bⱼ, a zero
  margin counted wrong;
- R² (regression): 1 − Σ(bⱼ − zⱼ)² / Σ(bⱼ − b̄)², None when the test targets are constant.

A value that is not finite (a diverged iterate) is None, as JSON stores it.
"""

from __future__ import annotations

import math

import numpy as np

from faceoff.solvers.losses import Loss, loss_values
from faceoff.solvers.problem import Data

# vectors of the test rows' length one scoring allocates: the margins, the loss's two rows
# of scratch, and R²'s residuals and their squares
SCORING_VECTORS = 5


def _finite(value: float) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


class HeldOut:
    """A test set for the problems of one loss: ``data`` (n_features columns, transformed as
    the training data), labels ``b`` mapped as the training labels (±1, or targets),
    ``loss`` and whether x ends with an intercept c.

    Parameters
    ----------
    data : Data, shape (n_test, n_features)
    b : array, shape (n_test,)
    loss : Loss
    intercept : bool, default False
    """

    def __init__(self, data: Data, b: np.ndarray, loss: Loss, intercept: bool = False) -> None:
        b = np.ascontiguousarray(b, dtype=np.float64)
        if data.n_samples == 0:
            raise ValueError("the test set has no rows")
        if b.shape != (data.n_samples,):
            raise ValueError(f"test labels have shape {b.shape}, expected ({data.n_samples},)")
        if loss.needs_binary_labels and not np.all(np.abs(b) == 1.0):
            raise ValueError(f"loss {loss.name!r} needs test labels -1/+1")
        self.data = data
        self.b = b
        self.loss = loss
        self.intercept = intercept

    @property
    def n_features(self) -> int:
        return self.data.n_features

    @property
    def nbytes(self) -> int:
        """The memory the test set takes beside the training data: its rows (the CSR arrays
        a dense view shares, the row norms and counts), its labels, and the
        :data:`SCORING_VECTORS` vectors a scoring allocates."""
        data = self.data
        arrays = (*data.csr, data.row_sq_norms, data.row_nnz, self.b)
        return sum(a.nbytes for a in arrays) + SCORING_VECTORS * 8 * data.n_samples

    def margins(self, x: np.ndarray) -> np.ndarray:
        """z = A_test·w (+ c with an intercept): the one pass over the test rows."""
        d = self.data.n_features
        expected = (d + 1,) if self.intercept else (d,)
        if x.shape != expected:
            raise ValueError(f"x has shape {x.shape}, the test set expects {expected}")
        if self.intercept:
            return self.data.matvec(x[:d]) + x[d]
        return self.data.matvec(x)

    def metrics(self, x: np.ndarray) -> dict[str, float | None]:
        """{"loss", "accuracy"} (±1 labels) or {"loss", "r2"} (targets) of iterate x."""
        z = self.margins(x)
        b = self.b
        out = {"loss": _finite(loss_values(self.loss.params, z, b) / b.size)}
        if self.loss.needs_binary_labels:
            out["accuracy"] = float(np.count_nonzero(z * b > 0)) / b.size
        else:
            total = float(np.square(b - b.mean()).sum())
            residual = float(np.square(b - z).sum())
            out["r2"] = _finite(1.0 - residual / total) if total > 0 else None
        return out

    def __call__(self, x: np.ndarray) -> dict[str, dict[str, float | None]]:
        """A trace point's extras: ``{"test": metrics(x)}``."""
        return {"test": self.metrics(x)}
