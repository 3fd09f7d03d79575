"""The smoothed hinge loss with smoothing γ (SPDC §7.2, Shalev-Shwartz & Zhang 2013):
with the margin m = b·z and labels b = ±1,

    φ(z, b) = 0 for m ≥ 1,   1 − m − γ/2 for m ≤ 1 − γ,   (1 − m)²/(2γ) between,

1/γ-smooth. Its conjugate, with t = −b·y, is φ*(y, b) = −t + γt²/2 on t ∈ [0, 1] (+∞
outside: the dual variable lives in that box, where it can sit at a bound), and the exact
dual step is the box's projection of the unconstrained maximizer,
t = (1 − b·z + inv_s·t₀)/(γ + inv_s) clipped to [0, 1].
"""

from __future__ import annotations

import math

from numba import njit

from faceoff.solvers.losses import CONJ_DOMAIN_TOL, LossInfo

INFO = LossInfo(
    name="smooth_hinge",
    code=2,
    title="smoothed hinge: 0 for bz ≥ 1, 1 − bz − γ/2 for bz ≤ 1 − γ, (1 − bz)²/(2γ) between",
    beta=1.0,
    smoothed=True,
    needs_binary_labels=True,
    penalties=("l2", "elastic_net", "l1"),
    warm_start=False,
    dual_box=True,
)


@njit(cache=True)
def value(gamma, z, b):
    """φ(z, b)."""
    m = b * z
    if m >= 1.0:
        return 0.0
    if m <= 1.0 - gamma:
        return 1.0 - m - 0.5 * gamma
    r = 1.0 - m
    return 0.5 * r * r / gamma


@njit(cache=True)
def deriv(gamma, z, b):
    """φ'(z, b): 0 for m ≥ 1, −b for m ≤ 1 − γ, −b(1 − m)/γ between, without branches."""
    m = b * z
    return -b * min(max((1.0 - m) / gamma, 0.0), 1.0)


@njit(cache=True)
def derivs12(gamma, z, b):
    """(φ'(z, b), φ''(z, b)); at the two kinks φ'' is taken as 0 (a generalized second
    derivative: callers safeguard their steps)."""
    m = b * z
    inside = 1.0 - gamma < m < 1.0
    return deriv(gamma, z, b), (1.0 / gamma if inside else 0.0)


@njit(cache=True)
def increment(gamma, z, b, t):
    """φ(z + t, b) − φ(z, b): piecewise, the plain difference."""
    return value(gamma, z + t, b) - value(gamma, z, b)


@njit(cache=True)
def curvature_growth(gamma, t):
    """+inf: φ'' jumps from 0 to 1/γ at the kinks, no bound from the curvature at z
    (callers fall back on β)."""
    return math.inf


@njit(cache=True)
def conj(gamma, y, b):
    """φ*(y, b) = −t + γt²/2, t = −b·y ∈ [0, 1] (up to CONJ_DOMAIN_TOL); +inf outside."""
    t = -b * y
    if t < -CONJ_DOMAIN_TOL or t > 1.0 + CONJ_DOMAIN_TOL:
        return math.inf
    t = min(max(t, 0.0), 1.0)
    return -t + 0.5 * gamma * t * t


@njit(cache=True)
def dual_step(gamma, y, z, b, inv_s, warm, tol):
    """The exact dual step in closed form: t = (1 − b·z + inv_s·t₀)/(γ + inv_s) clipped to
    [0, 1]; no warm start."""
    t0 = -b * y
    t = (1.0 - b * z + inv_s * t0) / (gamma + inv_s)
    return -b * min(max(t, 0.0), 1.0), warm, 0


@njit(cache=True, _nrt=False)
def dual_box_violation(gamma, y, z, b):
    """(g, side) for the dual coordinate y with z = aᵢᵀx: g is the derivative in t = −b·y of
    the coordinate's dual objective t − γt²/2 − t·b·z (before its coupling term) and side
    −1 when t sits at 0, +1 at 1, 0 inside. Shrinking (liblinear's) leaves out a coordinate
    at a bound whose g pushes it further out."""
    t = -b * y
    g = 1.0 - b * z - gamma * t
    return g, (-1 if t <= 0.0 else (1 if t >= 1.0 else 0))
