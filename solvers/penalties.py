"""Penalty g(x) = l1·‖x‖₁ + l2/2·‖x‖² (elastic net; l1 = 0 gives plain l2, l2 = 0 the l1).

With l2 > 0, g is l2-strongly convex and its conjugate g*(v) = Σⱼ (|vⱼ| − l1)₊² / (2·l2)
is finite everywhere, so the duality gap is always a valid certificate, and
∇g*(v) = soft(v, l1)/l2 maps a dual point to a primal one (the dual methods need both).

With l2 = 0 (the Lasso, l1-logistic regression; l1 > 0), g* is the indicator of the box
‖v‖∞ ≤ l1: D(y) is finite only where ‖Aᵀy‖∞ ≤ n·l1. A primal iterate's dual point
y = φ'(Ax) is scaled into it, y·min(1, l1/‖Aᵀy/n‖∞) (:meth:`ElasticNet.dual_scale`; the
rescaling of El Ghaoui et al. 2012 that scikit-learn, celer and skglm certify with): every
loss's dual domain is an interval holding 0 for each sample, so the scaled point stays in
it, and at the optimum the factor is 1, so the gap still goes to 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

import numpy as np
from numba import njit

from faceoff.solvers.vocabulary import penalty_name

# relative slack of the l1 box ‖v‖∞ ≤ l1 that g* of the l1 penalty admits: a point scaled
# onto its boundary by ElasticNet.dual_scale is inside, whatever the rounding of the scaling
BOX_SLACK = 1e-12


class PenaltyParams(NamedTuple):
    """What kernels read of the penalty: the weights ``l1`` and ``l2`` (a Numba tuple)."""

    l1: float
    l2: float


@dataclass(frozen=True)
class ElasticNet:
    """g(x) = l1·‖x‖₁ + l2/2·‖x‖²; ``name`` is ``"l2"`` when l1 = 0."""

    l1: float
    l2: float

    def __post_init__(self) -> None:
        # plain floats: an int weight would make Numba compile another kernel specialization
        object.__setattr__(self, "l1", float(self.l1))
        object.__setattr__(self, "l2", float(self.l2))
        if not (math.isfinite(self.l2) and self.l2 >= 0):
            raise ValueError(f"l2 weight must be a number >= 0, got {self.l2!r}")
        if not (math.isfinite(self.l1) and self.l1 >= 0):
            raise ValueError(f"l1 weight must be a number >= 0, got {self.l1!r}")
        if self.l1 == 0 and self.l2 == 0:
            raise ValueError(
                "l1 and l2 are both 0: the problem has no penalty (and may have no minimizer); "
                "give l2 > 0, or l1 > 0 with l2 = 0 for the Lasso or l1-logistic regression"
            )

    @property
    def name(self) -> str:
        """ "l1" when l2 = 0, "l2" when l1 = 0, else "elastic_net"."""
        return penalty_name(self.l1, self.l2)

    @property
    def strongly_convex(self) -> bool:
        """Whether l2 > 0 (g is l2-strongly convex, g* finite and smooth)."""
        return self.l2 > 0

    @cached_property
    def params(self) -> PenaltyParams:
        """The kernels' view of this penalty."""
        return PenaltyParams(self.l1, self.l2)

    def value(self, x: np.ndarray) -> float:
        """g(x)."""
        x = x.reshape(-1)  # the K columns of a K-class problem: g is separable
        return self.l1 * float(np.abs(x).sum()) + 0.5 * self.l2 * float(x @ x)

    def conjugate(self, v: np.ndarray) -> float:
        """g*(v) = Σⱼ (|vⱼ| − l1)₊² / (2·l2); for l2 = 0, 0 on the box ‖v‖∞ ≤ l1 (with a
        relative slack of BOX_SLACK for the rounding of a rescaled point), +∞ outside."""
        if self.l2 == 0:
            inside = v.size == 0 or float(np.abs(v).max()) <= self.l1 * (1.0 + BOX_SLACK)
            return 0.0 if inside else math.inf
        r = np.maximum(np.abs(v.reshape(-1)) - self.l1, 0.0)
        return float(r @ r) / (2.0 * self.l2)

    def dual_scale(self, v: np.ndarray, columns: bool = False) -> np.ndarray | float:
        """The factor s ∈ (0, 1] that brings v = −Aᵀy/n into g*'s domain (y·s certifies
        instead of y): 1 for l2 > 0, min(1, l1/‖v‖∞) for l2 = 0. ``columns``: one factor a
        column of v (shape (d, K): the K independent duals of a one-vs-rest problem)."""
        if self.l2 > 0 or v.size == 0:
            return np.ones(v.shape[1]) if columns else 1.0
        peak = np.abs(v).max(axis=0) if columns else float(np.abs(v).max())
        return np.minimum(1.0, self.l1 / np.maximum(peak, np.finfo(float).tiny))

    def conjugate_grad(self, v: np.ndarray) -> np.ndarray:
        """∇g*(v) = soft(v, l1) / l2 (l2 > 0: with l2 = 0, g* is not differentiable and a
        dual point gives no primal one)."""
        if self.l2 == 0:
            raise ValueError("with l2 = 0, g* is an indicator: x(y) = ∇g*(v) does not exist")
        return np.sign(v) * np.maximum(np.abs(v) - self.l1, 0.0) / self.l2

    def prox(self, v: np.ndarray, step: float) -> np.ndarray:
        """prox_{step·g}(v) = soft(v, step·l1) / (1 + step·l2)."""
        return np.sign(v) * np.maximum(np.abs(v) - step * self.l1, 0.0) / (1.0 + step * self.l2)


@njit(cache=True)
def soft_threshold(v, threshold):
    """sign(v)·max(|v| − threshold, 0), without branches (coordinates of random sign defeat
    branch prediction: measured 3× faster in SAGA's update loop)."""
    return v - min(max(v, -threshold), threshold)
