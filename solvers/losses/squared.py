"""The squared loss φ(z, b) = (z − b)²/2 (least squares, ridge regression).

φ'(z) = z − b and φ'' = 1; φ*(y, b) = y²/2 + b·y on all of ℝ; the exact dual step
argmax_β {β·z − φ*(β) − inv_s·(β − y)²/2} is (z − b + inv_s·y)/(1 + inv_s).
"""

from __future__ import annotations

from numba import njit

from faceoff.solvers.losses import LossInfo

INFO = LossInfo(
    name="squared",
    code=0,
    title="(z − b)²/2",
    beta=1.0,
    smoothed=False,
    needs_binary_labels=False,
    penalties=("l2", "elastic_net", "l1"),
    warm_start=False,
    dual_box=False,
)


@njit(cache=True)
def value(gamma, z, b):
    """φ(z, b)."""
    r = z - b
    return 0.5 * r * r


@njit(cache=True)
def deriv(gamma, z, b):
    """φ'(z, b)."""
    return z - b


@njit(cache=True)
def derivs12(gamma, z, b):
    """(φ'(z, b), φ''(z, b))."""
    return z - b, 1.0


@njit(cache=True)
def increment(gamma, z, b, t):
    """φ(z + t, b) − φ(z, b) = t·(z − b + t/2), without cancellation."""
    return t * (z - b + 0.5 * t)


@njit(cache=True)
def curvature_growth(gamma, t):
    """φ'' is constant: 1."""
    return 1.0


@njit(cache=True)
def conj(gamma, y, b):
    """φ*(y, b) = y²/2 + b·y."""
    return 0.5 * y * y + b * y


@njit(cache=True)
def dual_step(gamma, y, z, b, inv_s, warm, tol):
    """The exact dual step in closed form, (z − b + inv_s·y)/(1 + inv_s); no warm start."""
    return (z - b + inv_s * y) / (1.0 + inv_s), warm, 0


@njit(cache=True, _nrt=False)
def dual_box_violation(gamma, y, z, b):
    """No box: the dual variable ranges over ℝ."""
    return 0.0, 0
