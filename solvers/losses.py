"""Losses φ(z, b) of P(x) = 1/n Σ φ(aᵢᵀx, bᵢ) + g(x), with their conjugates.

A loss is a small Python object (name, integer code, smoothing parameter); kernels receive
its :class:`LossParams` (code, γ) and call the scalar jitted functions below with it.
Adding a loss means one entry in ``solvers.vocabulary`` (name, β, labels) and a code with a
branch in the scalar functions below; no solver kernel changes.

The exact dual coordinate step :func:`dual_step` owns the per-coordinate warm starts of the
losses that solve it iteratively (logistic): kernels keep an array from
:func:`warm_starts` and pass it along, whatever the loss.

Dual variables follow the saddle-point form shared by the three papers,
L(x, y) = g(x) + 1/n yᵀAx − 1/n Σ φ*(yᵢ): at the optimum yᵢ = φ'(aᵢᵀx).
For the classification losses (labels b = ±1) the dual domain is t = −b·y ∈ [0, 1].
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

import numpy as np
from numba import njit

from faceoff.solvers.prefetch import prefetch
from faceoff.solvers.vocabulary import get_loss

# kernel code of each loss of solvers.vocabulary.LOSSES
SQUARED = 0
LOGISTIC = 1
SMOOTH_HINGE = 2
_CODES = {"squared": SQUARED, "logistic": LOGISTIC, "smooth_hinge": SMOOTH_HINGE}


class LossParams(NamedTuple):
    """What kernels read of a loss: its ``code`` and smoothing ``gamma`` (a Numba tuple)."""

    code: int
    gamma: float


@dataclass(frozen=True)
class Loss:
    """A loss function: ``name``, kernel ``code`` and smoothing ``gamma`` (smoothed hinge)."""

    name: str
    code: int
    gamma: float = 1.0

    @property
    def smoothness(self) -> float:
        """β such that φ is β-smooth (φ'' ≤ β): 1 squared, 1/4 logistic, 1/γ smoothed hinge
        (solvers.vocabulary)."""
        return get_loss(self.name).smoothness(self.gamma)

    @property
    def needs_binary_labels(self) -> bool:
        return get_loss(self.name).needs_binary_labels

    @cached_property
    def params(self) -> LossParams:
        """The kernels' view of this loss."""
        return LossParams(int(self.code), float(self.gamma))


def make_loss(name: str, gamma: float = 1.0) -> Loss:
    """Build a loss by name, one of solvers.vocabulary.LOSS_NAMES (smoothed hinge: SPDC §7.2)."""
    get_loss(name)  # ValueError listing the accepted names
    if not (gamma > 0 and math.isfinite(gamma)):
        raise ValueError(f"smoothing gamma must be a positive number, got {gamma!r}")
    return Loss(name, _CODES[name], float(gamma))


@njit(cache=True)
def _log1pexp(t):
    """log(1 + exp(t)) without overflow (and without branches)."""
    return max(t, 0.0) + math.log1p(math.exp(-abs(t)))


@njit(cache=True)
def _sigmoid(t):
    """1 / (1 + exp(-t)) without overflow; a select, not a branch (margins of both signs
    come in random order in a coordinate loop, where a branch is mispredicted half the time)."""
    e = math.exp(-abs(t))
    s = 1.0 / (1.0 + e)
    return s if t >= 0.0 else e * s


@njit(cache=True)
def loss_value(loss, z, b):
    """φ(z, b)."""
    code, gamma = loss
    if code == SQUARED:
        r = z - b
        return 0.5 * r * r
    m = b * z
    if code == LOGISTIC:
        return _log1pexp(-m)
    # smoothed hinge, SPDC §7.2 with smoothing gamma
    if m >= 1.0:
        return 0.0
    if m <= 1.0 - gamma:
        return 1.0 - m - 0.5 * gamma
    r = 1.0 - m
    return 0.5 * r * r / gamma


@njit(cache=True)
def loss_deriv(loss, z, b):
    """φ'(z, b), the derivative in z."""
    code, gamma = loss
    if code == SQUARED:
        return z - b
    m = b * z
    if code == LOGISTIC:
        return -b * _sigmoid(-m)
    # smoothed hinge: 0 for m ≥ 1, −b for m ≤ 1 − γ, −b(1 − m)/γ between, without branches
    return -b * min(max((1.0 - m) / gamma, 0.0), 1.0)


@njit(cache=True)
def loss_increment(loss, z, b, t):
    """φ(z + t, b) − φ(z, b), without the cancellation of subtracting two losses where the
    loss is smooth: squared t·(z − b + t/2); logistic log1p(σ(−bz)·expm1(−bt)), as
    (1 + e^{−b(z+t)})/(1 + e^{−bz}) = 1 + σ(−bz)(e^{−bt} − 1). The smoothed hinge, piecewise,
    is the plain difference."""
    code, gamma = loss
    if code == SQUARED:
        return t * (z - b + 0.5 * t)
    if code == LOGISTIC:
        return math.log1p(_sigmoid(-b * z) * math.expm1(-b * t))
    return loss_value(loss, z + t, b) - loss_value(loss, z, b)


@njit(cache=True)
def curvature_growth(loss, t):
    """A bound on φ''(z + s, b) / φ''(z, b) over |s| ≤ t, for every z: logistic e^t (the
    logarithm of σ(m)(1 − σ(m)) changes at rate |1 − 2σ(m)| ≤ 1 in m = bz, b = ±1); squared
    1 (φ'' is constant); smoothed hinge +inf (φ'' jumps from 0 to 1/γ at its kinks: no bound
    from the curvature at z, callers fall back on β)."""
    code, gamma = loss
    if code == SQUARED:
        return 1.0
    if code == LOGISTIC:
        return math.exp(t)
    return math.inf


@njit(cache=True)
def loss_derivs12(loss, z, b):
    """(φ'(z, b), φ''(z, b)); at the smoothed hinge's two kinks φ'' is taken as 0 (a
    generalized second derivative: callers safeguard their steps)."""
    code, gamma = loss
    if code == SQUARED:
        return z - b, 1.0
    m = b * z
    if code == LOGISTIC:
        # φ' = −b·σ(−m), φ'' = σ(m)σ(−m) = e/(1 + e)² with e = exp(−|m|): no 1 − σ, which
        # cancels for m ≪ 0 (losses.curvature_growth's bound holds to rounding only so)
        e = math.exp(-abs(m))
        q = 1.0 / (1.0 + e)
        return -b * (e * q if m >= 0.0 else q), e * q * q
    inside = 1.0 - gamma < m < 1.0
    return loss_deriv(loss, z, b), (1.0 / gamma if inside else 0.0)


# φ*'s domain t = −b·y ∈ [0, 1] admits this much rounding on either side (t is then clipped)
CONJ_DOMAIN_TOL = 1e-12


@njit(cache=True)
def loss_conj(loss, y, b):
    """φ*(y, b) = sup_z {y·z − φ(z, b)}; +inf outside the domain."""
    code, gamma = loss
    if code == SQUARED:
        return 0.5 * y * y + b * y
    t = -b * y
    if t < -CONJ_DOMAIN_TOL or t > 1.0 + CONJ_DOMAIN_TOL:
        return np.inf
    t = min(max(t, 0.0), 1.0)
    if code == LOGISTIC:
        v = 0.0
        if t > 0.0:
            v += t * math.log(t)
        if t < 1.0:
            v += (1.0 - t) * math.log1p(-t)
        return v
    return -t + 0.5 * gamma * t * t


# The logistic step's default stopping tolerance on |h'(t)| (see loss_dual_step): the step is
# then exact to ≤ 2.5e-13 in t. Kernels that solve coordinates inexactly (dual_cd) pass more.
EXACT_TOL = 1e-12


@njit(cache=True)
def loss_dual_step(loss, y, z, b, inv_s, warm, tol):
    """argmax_β {β·z − φ*(β) − inv_s·(β − y)²/2}: the 1-D dual coordinate step.

    With ``inv_s = ‖aᵢ‖²/(μn)`` this is SDCA's coordinate maximization (Faceoff Algorithm 2,
    Quartz). Closed form for squared and smoothed hinge. For logistic, a safeguarded
    (monotone) Newton solve on u = logit(t), t = −b·β, of g(u) = u + inv_s·σ(u) − K = 0,
    K = −b·z + inv_s·t₀; g(u) is −h'(t), the coordinate's optimality violation, and g' ≥ 1.
    It stops once |g(u)| ≤ ``tol`` (so |u − u*| ≤ tol and |t − t*| ≤ tol/4) and returns
    β = −b·σ(u) for that u, which becomes the new ``warm``: the warm start is the exact
    logit of t₀, so g at the warm start is u + b·z, known without an exp. A coordinate
    already within ``tol`` is left as it is (β = y, no Newton step): liblinear's inexact
    inner solve (Yu, Huang and Lin 2011), whose tolerance its caller tightens
    (:data:`EXACT_TOL` for an exact step). ``warm`` is NaN when unknown (it is recovered
    from t₀). Returns (β, new warm, Newton iterations); kernels call :func:`dual_step`,
    which keeps the warm starts itself.
    """
    code, gamma = loss
    if code == SQUARED:
        return (z - b + inv_s * y) / (1.0 + inv_s), warm, 0
    t0 = -b * y
    if code == SMOOTH_HINGE:
        t = (1.0 - b * z + inv_s * t0) / (gamma + inv_s)
        return -b * min(max(t, 0.0), 1.0), warm, 0
    # logistic. g is increasing, convex for u ≤ 0 and concave for u ≥ 0, with its root on
    # the same side of ``bound`` as the region's far end: Newton from the warm start lands
    # on the far side of the root (tangents of a convex function lie below it), and from
    # there it is monotone; clamping to ``bound`` keeps it in the region. Near the optimum
    # the warm start is within tol (no step) or one step from it.
    K = -b * z + inv_s * t0
    convex = K <= 0.5 * inv_s
    bound = min(0.0, K) if convex else max(0.0, K - inv_s)
    if warm != warm and 0.0 < t0 < 1.0:  # no warm start kept: recover it from t0
        warm = math.log(t0) - math.log1p(-t0)
    if warm == warm:
        r = warm + b * z  # g(warm), as σ(warm) = t0
        if abs(r) <= tol:
            return y, warm, 0
        u, sig = warm, t0
        if (warm > bound) if convex else (warm < bound):  # beyond the region: restart
            u = bound
            sig = _sigmoid(u)
            r = u + inv_s * sig - K
    else:  # t0 at 0 or 1
        u = bound
        sig = _sigmoid(u)
        r = u + inv_s * sig - K
    for iteration in range(1, 101):
        step = -r / (1.0 + inv_s * sig * (1.0 - sig))
        u_new = min(u + step, bound) if convex else max(u + step, bound)
        sig = _sigmoid(u_new)
        r = u_new + inv_s * sig - K
        # g carries rounding errors of a few ulps of its terms: below that, stop
        if abs(r) <= tol or abs(r) <= 1e-15 * (abs(u_new) + abs(K) + inv_s) or u_new == u:
            return -b * sig, u_new, iteration
        u = u_new
    return -b * sig, u, 100


@njit(cache=True, _nrt=False)
def dual_box_violation(loss, y, z, b):
    """(g, side) for the dual coordinate y with z = aᵢᵀx: g is the derivative in t = −b·y of
    the coordinate's dual objective t − γt²/2 − t·b·z (before its coupling term) and side
    −1 when t sits at 0, +1 at 1, 0 inside. Only the smoothed hinge's dual has this box
    (t ∈ [0, 1]); other losses return (0, 0). Shrinking (liblinear's) leaves out a
    coordinate at a bound whose g pushes it further out."""
    code, gamma = loss
    if code != SMOOTH_HINGE:
        return 0.0, 0
    t = -b * y
    g = 1.0 - b * z - gamma * t
    return g, (-1 if t <= 0.0 else (1 if t >= 1.0 else 0))


def warm_starts(n: int) -> np.ndarray:
    """The per-coordinate warm starts :func:`dual_step` keeps, none yet (NaN)."""
    return np.full(n, np.nan)


@njit(cache=True, _nrt=False)
def dual_step(loss, warm, i, y, z, b, inv_s, tol=EXACT_TOL):
    """:func:`loss_dual_step` for coordinate i, warm-started from ``warm[i]`` and storing
    the new warm start there when the loss keeps one (logistic); returns (β, Newton
    iterations).

    Compiled without reference counting (``_nrt=False``: it allocates nothing), so the call,
    which LLVM inlines, costs nothing; with it (or inlined by Numba), the reference counting
    of ``warm`` cost ~15 % of a dual_cd step on a9a."""
    if loss.code == LOGISTIC:
        beta, warm[i], iterations = loss_dual_step(loss, y, z, b, inv_s, warm[i], tol)
        return beta, iterations
    return loss_dual_step(loss, y, z, b, inv_s, 0.0, tol)[0], 0


@njit(cache=True, _nrt=False)
def prefetch_warm(loss, warm, i):
    """Prefetch ``warm[i]`` for a coming :func:`dual_step`, when the loss reads it."""
    if loss.code == LOGISTIC:
        prefetch(warm, i)


def loss_values(loss, z, b, work=None):
    """Σᵢ φ(zᵢ, bᵢ). For the logistic, φ = max(−m, 0) + log1p(e) with m = b·z and
    e = exp(−|m|), the exp and the log1p as numpy's vector loops (see
    :func:`loss_values_derivs`); other losses in one compiled pass. ``work``: scratch of
    shape (≥ 2, n), else allocated."""
    if loss.code != LOGISTIC:
        return _values(loss, z, b)
    m, e = np.empty((2, z.shape[0])) if work is None else work[:2]
    _logistic_terms(z, b, m, e, e)  # log1p(e) over e: the sum needs no e
    return _logistic_values(m, e)


@njit(cache=True)
def _values(loss, z, b):
    """Σᵢ φ(zᵢ, bᵢ) in one pass of the scalar :func:`loss_value`."""
    total = 0.0
    for i in range(z.shape[0]):
        total += loss_value(loss, z[i], b[i])
    return total


@njit(cache=True)
def _logistic_values(m, log1pe):
    """Σ max(−m, 0) + log1p(e), the logistic's values from its margins m = b·z."""
    total = 0.0
    for i in range(m.shape[0]):
        total += max(-m[i], 0.0) + log1pe[i]
    return total


@njit(cache=True)
def loss_derivs(loss, z, b, out):
    """out ← φ'(z, b) elementwise."""
    for i in range(z.shape[0]):
        out[i] = loss_deriv(loss, z[i], b[i])
    return out


def loss_values_derivs(loss, z, b, out, work=None):
    """Σᵢ φ(zᵢ, bᵢ), with out ← φ'(z, b) elementwise. For the logistic one exp serves both,
    e = exp(−|m|) with m = b·z: φ = max(−m, 0) + log1p(e) and φ' = −b·σ(−m), and the exp and
    the log1p run as numpy's loops over the whole vector, which are vectorized where the CPU
    allows (AVX-512: 0.9 ns an exp, against 5.6 ns a libm call from a compiled loop): a third
    of the scalar pass's time on w8a. The values agree with :func:`loss_values` and
    :func:`loss_derivs` to an ulp or so. ``work``: scratch of shape (3, n), else allocated."""
    if loss.code != LOGISTIC:
        return _values_derivs(loss, z, b, out)
    m, e, log1pe = np.empty((3, z.shape[0])) if work is None else work
    _logistic_terms(z, b, m, e, log1pe)
    return _logistic_values_derivs(m, e, log1pe, b, out)


def _logistic_terms(z, b, m, e, log1pe):
    """m ← b·z, e ← exp(−|m|) and log1pe ← log1p(e) (may be ``e`` itself), the exp and the
    log1p as numpy's vector loops."""
    _logistic_margins(z, b, m, e)
    np.exp(e, out=e)
    np.log1p(e, out=log1pe)


@njit(cache=True)
def _values_derivs(loss, z, b, out):
    """Σᵢ φ(zᵢ, bᵢ), with out ← φ'(z, b), in one pass (losses without a transcendental)."""
    total = 0.0
    for i in range(z.shape[0]):
        total += loss_value(loss, z[i], b[i])
        out[i] = loss_deriv(loss, z[i], b[i])
    return total


@njit(cache=True)
def _logistic_margins(z, b, m, e):
    """m ← b·z and e ← −|m|, elementwise."""
    for i in range(z.shape[0]):
        m[i] = b[i] * z[i]
        e[i] = -abs(m[i])


@njit(cache=True)
def _logistic_values_derivs(m, e, log1pe, b, out):
    """Σ max(−m, 0) + log1p(e), with out ← −b·σ(−m) (σ(−m) = 1/(1 + e) for m ≤ 0, e/(1 + e)
    above, e = exp(−|m|))."""
    total = 0.0
    for i in range(m.shape[0]):
        s = 1.0 / (1.0 + e[i])
        total += max(-m[i], 0.0) + log1pe[i]
        out[i] = -b[i] * (s if m[i] <= 0.0 else e[i] * s)
    return total


def loss_conjs(loss, y, b, work=None):
    """Σᵢ φ*(yᵢ, bᵢ). For the logistic, φ*(y) = t log t + (1 − t) log(1 − t) with t = −b·y
    (+∞ outside [0, 1] beyond :func:`loss_conj`'s tolerance), the log and the log1p as
    numpy's vector loops; other losses in one compiled pass. Agrees with the scalar sum to
    an ulp or so. ``work``: scratch of shape (≥ 3, n), else allocated."""
    if loss.code != LOGISTIC:
        return _conjs(loss, y, b)
    t, log_t, log1m_t = np.empty((3, y.shape[0])) if work is None else work[:3]
    if not _logistic_conj_args(y, b, t, log_t, log1m_t):
        return np.inf
    np.log(log_t, out=log_t)
    np.log1p(log1m_t, out=log1m_t)
    return _logistic_conjs(t, log_t, log1m_t)


@njit(cache=True)
def _conjs(loss, y, b):
    """Σᵢ φ*(yᵢ, bᵢ) in one pass of the scalar :func:`loss_conj`."""
    total = 0.0
    for i in range(y.shape[0]):
        total += loss_conj(loss, y[i], b[i])
    return total


@njit(cache=True)
def _logistic_conj_args(y, b, t, log_arg, log1p_arg):
    """t ← −b·y clipped to [0, 1], and the arguments of log t and log1p(−t) (1 and 0 where
    the term's weight is 0, so that 0·log 0 counts 0); False if a t is outside the domain
    (as :func:`loss_conj`: beyond CONJ_DOMAIN_TOL). A NaN t stays NaN."""
    for i in range(y.shape[0]):
        ti = -b[i] * y[i]
        if ti < -CONJ_DOMAIN_TOL or ti > 1.0 + CONJ_DOMAIN_TOL:
            return False
        if ti == ti:
            ti = min(max(ti, 0.0), 1.0)
        t[i] = ti
        log_arg[i] = ti if not ti <= 0.0 else 1.0
        log1p_arg[i] = -ti if not ti >= 1.0 else 0.0
    return True


@njit(cache=True)
def _logistic_conjs(t, log_t, log1m_t):
    """Σ t log t + (1 − t) log(1 − t) from the logs of :func:`_logistic_conj_args`."""
    total = 0.0
    for i in range(t.shape[0]):
        total += t[i] * log_t[i] + (1.0 - t[i]) * log1m_t[i]
    return total
