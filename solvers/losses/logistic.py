"""The logistic loss φ(z, b) = log(1 + exp(−b·z)), labels b = ±1 (1/4-smooth).

With the margin m = b·z and σ(t) = 1/(1 + e^{−t}): φ' = −b·σ(−m), φ'' = σ(m)σ(−m) ≤ 1/4.
Its conjugate, with t = −b·y, is φ*(y, b) = t log t + (1 − t) log(1 − t) on t ∈ [0, 1]
(+∞ outside). The exact dual step has no closed form: a safeguarded Newton solve on
u = logit(t) (:func:`dual_step`), warm-started from the coordinate's last u, which the
kernels keep (``warm_start``). The sums Σφ, Σφ with φ' and Σφ* take the exp, log1p and log
as numpy's vector loops (:func:`values`, :func:`values_derivs`, :func:`conjs`).

Its K-class form is the multinomial logistic loss (softmax cross-entropy) of a row's scores
zᵢ = Xᵀaᵢ ∈ R^K and class yᵢ:

    φ(zᵢ, yᵢ) = log Σₖ exp(zᵢₖ) − zᵢ_{yᵢ},        ∇φ = softmax(zᵢ) − e_{yᵢ}.

φ is lse(z) − ⟨e_y, z⟩, and lse's conjugate is the negative entropy on the simplex Δ, so

    φ*(v, y) = lse*(v + e_y) = Σₖ pₖ log pₖ   with p = v + e_y ∈ Δ,   +∞ otherwise

(0 log 0 = 0). In the saddle form L(X, Y) = g(X) + 1/n Σᵢ ⟨yᵢ, Xᵀaᵢ⟩ − 1/n Σᵢ φ*(yᵢ) the
dual point a primal X certifies with is yᵢ = softmax(Xᵀaᵢ) − e_{yᵢ} (a point of Δ − e_y:
φ*(yᵢ) is finite), and D(Y) = −1/n Σᵢ φ*(yᵢ) − Σₖ g*(−Aᵀy·ₖ/n): the binary problem's dual
with a row's K dual variables on a shifted simplex (:func:`multinomial_values`,
:func:`multinomial_derivs`, :func:`multinomial_conjs`).

The dual step of a row (prox-SDCA for the multiclass logistic, Shalev-Shwartz & Zhang
2014, §6) maximizes over p ∈ Δ

    h(p) = −Σₖ pₖ log pₖ + ⟨p, z⟩ − s/2 ‖p − p₀‖²,

p₀ the row's current p, s = ‖aᵢ‖²/(l2·n). Its optimality conditions, with ν the multiplier
of Σp = 1, are log pₖ + s·pₖ = cₖ − ν, cₖ = zₖ + s·p₀ₖ − 1: each pₖ(ν) is the root of
u + s·eᵘ = cₖ − ν in u = log pₖ (increasing and convex in u), and Σₖ pₖ(ν) = 1 fixes ν
(Σp decreases in ν). :func:`simplex_step` solves it by Newton's method on log Σₖ pₖ(ν)
(exact in one step as s → 0, where p = softmax(c)), kept in a bracket, each pₖ(ν) by
Newton from above (monotone).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from faceoff.solvers.class_rows import exp_lanes
from faceoff.solvers.losses import CONJ_DOMAIN_TOL, LossInfo

INFO = LossInfo(
    name="logistic",
    code=1,
    title="log(1 + exp(−b·z))",
    beta=0.25,
    smoothed=False,
    needs_binary_labels=True,
    penalties=("l2", "elastic_net", "l1"),
    warm_start=True,
    dual_box=False,
    multinomial=True,
)

# p = v + e_y may leave the simplex by this much (rounding) and still count as in it
SIMPLEX_TOL = 1e-9


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
def value(gamma, z, b):
    """φ(z, b)."""
    m = b * z
    return _log1pexp(-m)


@njit(cache=True)
def deriv(gamma, z, b):
    """φ'(z, b) = −b·σ(−b·z)."""
    m = b * z
    return -b * _sigmoid(-m)


@njit(cache=True, _nrt=False)
def deriv_lanes(gamma, z, b):
    """φ'(z, b) = −b·σ(−b·z) in code a loop over a row's K classes vectorizes: the exp is
    :func:`~faceoff.solvers.class_rows.exp_lanes` (within 2 ulp of libm's, which no loop
    vectorizes: primal_cd's one-vs-rest epoch on news20 in 60 ms against 151 ms)."""
    m = b * z
    e = exp_lanes(-abs(m))
    s = 1.0 / (1.0 + e)
    return -b * (e * s if m >= 0.0 else s)


@njit(cache=True)
def derivs12(gamma, z, b):
    """(φ'(z, b), φ''(z, b)): φ' = −b·σ(−m), φ'' = σ(m)σ(−m) = e/(1 + e)² with
    e = exp(−|m|): no 1 − σ, which cancels for m ≪ 0 (:func:`curvature_growth`'s bound
    holds to rounding only so)."""
    m = b * z
    e = math.exp(-abs(m))
    q = 1.0 / (1.0 + e)
    return -b * (e * q if m >= 0.0 else q), e * q * q


@njit(cache=True)
def increment(gamma, z, b, t):
    """φ(z + t, b) − φ(z, b) = log1p(σ(−bz)·expm1(−bt)), as
    (1 + e^{−b(z+t)})/(1 + e^{−bz}) = 1 + σ(−bz)(e^{−bt} − 1): no cancellation."""
    return math.log1p(_sigmoid(-b * z) * math.expm1(-b * t))


@njit(cache=True)
def curvature_growth(gamma, t):
    """e^t bounds φ''(z + s, b)/φ''(z, b) over |s| ≤ t: the logarithm of σ(m)(1 − σ(m))
    changes at rate |1 − 2σ(m)| ≤ 1 in m = bz, b = ±1."""
    return math.exp(t)


@njit(cache=True)
def conj(gamma, y, b):
    """φ*(y, b) = t log t + (1 − t) log(1 − t), t = −b·y ∈ [0, 1] (up to CONJ_DOMAIN_TOL);
    +inf outside."""
    t = -b * y
    if t < -CONJ_DOMAIN_TOL or t > 1.0 + CONJ_DOMAIN_TOL:
        return math.inf
    t = min(max(t, 0.0), 1.0)
    v = 0.0
    if t > 0.0:
        v += t * math.log(t)
    if t < 1.0:
        v += (1.0 - t) * math.log1p(-t)
    return v


@njit(cache=True)
def dual_step(gamma, y, z, b, inv_s, warm, tol):
    """argmax_β {β·z − φ*(β) − inv_s·(β − y)²/2}: a safeguarded (monotone) Newton solve.

    On u = logit(t), t = −b·β, it solves g(u) = u + inv_s·σ(u) − K = 0,
    K = −b·z + inv_s·t₀; g(u) is −h'(t), the coordinate's optimality violation, and g' ≥ 1.
    It stops once |g(u)| ≤ ``tol`` (so |u − u*| ≤ tol and |t − t*| ≤ tol/4) and returns
    β = −b·σ(u) for that u, which becomes the new ``warm``: the warm start is the exact
    logit of t₀, so g at the warm start is u + b·z, known without an exp. A coordinate
    already within ``tol`` is left as it is (β = y, no Newton step): liblinear's inexact
    inner solve (Yu, Huang and Lin 2011), whose tolerance its caller tightens. ``warm`` is
    NaN when unknown (it is recovered from t₀). Returns (β, new warm, Newton iterations).

    g is increasing, convex for u ≤ 0 and concave for u ≥ 0, with its root on the same side
    of ``bound`` as the region's far end: Newton from the warm start lands on the far side
    of the root (tangents of a convex function lie below it), and from there it is
    monotone; clamping to ``bound`` keeps it in the region. Near the optimum the warm start
    is within tol (no step) or one step from it.
    """
    t0 = -b * y
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
def dual_box_violation(gamma, y, z, b):
    """No box: t = −b·y never sits at 0 or 1 at a step's end (φ*' is infinite there)."""
    return 0.0, 0


# ------------------------------------------------------------------- the vector sums


def values(gamma, z, b, work=None):
    """Σᵢ φ(zᵢ, bᵢ) = Σ max(−m, 0) + log1p(e) with m = b·z and e = exp(−|m|), the exp and
    the log1p as numpy's vector loops (see :func:`values_derivs`). ``work``: scratch of
    shape (≥ 2, n), else allocated."""
    m, e = np.empty((2, z.shape[0])) if work is None else work[:2]
    _terms(z, b, m, e, e)  # log1p(e) over e: the sum needs no e
    return _values(m, e)


def values_derivs(gamma, z, b, out, work=None):
    """Σᵢ φ(zᵢ, bᵢ), with out ← φ'(z, b) elementwise. One exp serves both,
    e = exp(−|m|) with m = b·z: φ = max(−m, 0) + log1p(e) and φ' = −b·σ(−m), and the exp and
    the log1p run as numpy's loops over the whole vector, which are vectorized where the CPU
    allows (AVX-512: 0.9 ns an exp, against 5.6 ns a libm call from a compiled loop): a third
    of the scalar pass's time on w8a. The values agree with the scalar :func:`value` and
    :func:`deriv` to an ulp or so. ``work``: scratch of shape (3, n), else allocated."""
    m, e, log1pe = np.empty((3, z.shape[0])) if work is None else work
    _terms(z, b, m, e, log1pe)
    return _values_derivs(m, e, log1pe, b, out)


def conjs(gamma, y, b, work=None):
    """Σᵢ φ*(yᵢ, bᵢ) = Σ t log t + (1 − t) log(1 − t) with t = −b·y (+∞ outside [0, 1]
    beyond :func:`conj`'s tolerance), the log and the log1p as numpy's vector loops. Agrees
    with the scalar sum to an ulp or so. ``work``: scratch of shape (≥ 3, n), else
    allocated."""
    t, log_t, log1m_t = np.empty((3, y.shape[0])) if work is None else work[:3]
    if not _conj_args(y, b, t, log_t, log1m_t):
        return np.inf
    np.log(log_t, out=log_t)
    np.log1p(log1m_t, out=log1m_t)
    return _conjs(t, log_t, log1m_t)


def _terms(z, b, m, e, log1pe):
    """m ← b·z, e ← exp(−|m|) and log1pe ← log1p(e) (may be ``e`` itself), the exp and the
    log1p as numpy's vector loops."""
    _margins(z, b, m, e)
    np.exp(e, out=e)
    np.log1p(e, out=log1pe)


@njit(cache=True)
def _margins(z, b, m, e):
    """m ← b·z and e ← −|m|, elementwise."""
    for i in range(z.shape[0]):
        m[i] = b[i] * z[i]
        e[i] = -abs(m[i])


@njit(cache=True)
def _values(m, log1pe):
    """Σ max(−m, 0) + log1p(e), the values from the margins m = b·z."""
    total = 0.0
    for i in range(m.shape[0]):
        total += max(-m[i], 0.0) + log1pe[i]
    return total


@njit(cache=True)
def _values_derivs(m, e, log1pe, b, out):
    """Σ max(−m, 0) + log1p(e), with out ← −b·σ(−m) (σ(−m) = 1/(1 + e) for m ≤ 0, e/(1 + e)
    above, e = exp(−|m|))."""
    total = 0.0
    for i in range(m.shape[0]):
        s = 1.0 / (1.0 + e[i])
        total += max(-m[i], 0.0) + log1pe[i]
        out[i] = -b[i] * (s if m[i] <= 0.0 else e[i] * s)
    return total


@njit(cache=True)
def _conj_args(y, b, t, log_arg, log1p_arg):
    """t ← −b·y clipped to [0, 1], and the arguments of log t and log1p(−t) (1 and 0 where
    the term's weight is 0, so that 0·log 0 counts 0); False if a t is outside the domain
    (as :func:`conj`: beyond CONJ_DOMAIN_TOL). A NaN t stays NaN."""
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
def _conjs(t, log_t, log1m_t):
    """Σ t log t + (1 − t) log(1 − t) from the logs of :func:`_conj_args`."""
    total = 0.0
    for i in range(t.shape[0]):
        total += t[i] * log_t[i] + (1.0 - t[i]) * log1m_t[i]
    return total


# ------------------------------------------------------- the K-class (multinomial) form


def multinomial_values(gamma, Z: np.ndarray, labels: np.ndarray) -> float:
    """Σᵢ log Σₖ exp(Zᵢₖ) − Z_{i,yᵢ} for scores Z, shape (n, K), and classes ``labels``."""
    top = Z.max(axis=1)
    lse = top + np.log(np.exp(Z - top[:, None]).sum(axis=1))
    return float(lse.sum() - Z[np.arange(Z.shape[0]), labels].sum())


def multinomial_derivs(gamma, Z: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """∇φ of every row: softmax(Zᵢ) − e_{yᵢ}, shape (n, K)."""
    P = np.exp(Z - Z.max(axis=1)[:, None])
    P /= P.sum(axis=1)[:, None]
    P[np.arange(Z.shape[0]), labels] -= 1.0
    return P


def multinomial_values_derivs(gamma, Z: np.ndarray, labels: np.ndarray) -> tuple[float, np.ndarray]:
    """(Σᵢ φ(Zᵢ, yᵢ), ∇φ of every row), one exp a score."""
    rows = np.arange(Z.shape[0])
    E = np.exp(Z - Z.max(axis=1)[:, None])
    total = E.sum(axis=1)
    value = float((Z.max(axis=1) + np.log(total)).sum() - Z[rows, labels].sum())
    E /= total[:, None]
    E[rows, labels] -= 1.0
    return value, E


def multinomial_conjs(gamma, Y: np.ndarray, labels: np.ndarray) -> float:
    """Σᵢ φ*(yᵢ, yᵢ) = Σᵢ Σₖ pᵢₖ log pᵢₖ with P = Y + onehot(labels); +∞ when a row of P is
    off the simplex by more than :data:`SIMPLEX_TOL` (it is clipped to it within)."""
    P = np.array(Y, dtype=np.float64, copy=True)
    P[np.arange(P.shape[0]), labels] += 1.0
    if not np.isfinite(P).all():
        return math.nan if np.isnan(P).any() else math.inf
    if P.min(initial=0.0) < -SIMPLEX_TOL or np.abs(P.sum(axis=1) - 1.0).max(initial=0.0) > (
        SIMPLEX_TOL
    ):
        return math.inf
    np.clip(P, 0.0, 1.0, out=P)
    safe = np.where(P > 0.0, P, 1.0)
    return float((P * np.log(safe)).sum())


@njit(cache=True, _nrt=False)
def _root(r, s, u):
    """The root of u + s·eᵘ = r by Newton's method from ``u``, an upper bound of it (the
    function is increasing and convex: the iterates decrease to the root)."""
    for _ in range(100):
        e = s * math.exp(u)
        g = u + e - r
        if g <= 1e-15 * (abs(u) + e + abs(r)):
            return u
        u_new = u - g / (1.0 + e)
        if u_new >= u:
            return u
        u = u_new
    return u


@njit(cache=True, _nrt=False)
def _start(r, s):
    """An upper bound of the root of u + s·eᵘ = r: u* ≤ r, and u* ≤ log(r/s) when u* ≥ 0."""
    return min(r, max(0.0, math.log(r / s))) if r > 0.0 else r


@njit(cache=True, _nrt=False)
def simplex_step(gamma, z, p, s, u, tol):
    """argmax over p ∈ Δ of −Σ p log p + ⟨p, z⟩ − s/2‖p − p₀‖² (see the module docstring),
    p₀ = ``p`` on entry, the maximizer in ``p`` on return; ``u`` is scratch of length K.
    Returns the Newton iterations on ν."""
    K = z.shape[0]
    cmax = -np.inf
    for k in range(K):
        cmax = max(cmax, z[k] + s * p[k] - 1.0)
    nu = cmax - s  # the best class alone has p ≥ 1 there: Σp(ν) ≥ 1
    for k in range(K):
        r = z[k] + s * p[k] - 1.0 - nu
        u[k] = _root(r, s, _start(r, s))
    lo, hi = nu, np.inf  # Σp(lo) ≥ 1 ≥ Σp(hi)
    iterations = 0
    for iterations in range(1, 200):  # noqa: B007 (returned)
        total = slope = 0.0
        for k in range(K):
            q = math.exp(u[k])
            total += q
            slope += q / (1.0 + s * q)
        if abs(total - 1.0) <= tol:
            break
        if total > 1.0:
            lo = nu
        else:
            hi = nu
        # Newton on log Σp(ν) = 0, whose slope is −Σ p/(1 + s·p) / Σp
        step = math.log(total) * total / slope if total > 0.0 else np.inf
        if abs(step) <= 1e-15 * (abs(nu) + 1.0):
            break
        new = nu + step
        if not lo < new < hi:
            new = 0.5 * (lo + hi) if hi < np.inf else lo + 2.0 * (nu - lo) + 1.0
        back = new < nu
        nu = new
        for k in range(K):
            r = z[k] + s * p[k] - 1.0 - nu
            # ν grew: r fell and the last root bounds the new one from above
            u[k] = _root(r, s, _start(r, s) if back else u[k])
    total = 0.0
    for k in range(K):
        p[k] = math.exp(u[k])
        total += p[k]
    for k in range(K):
        p[k] /= total
    return iterations


@njit(cache=True, _nrt=False, fastmath=True, error_model="numpy")
def softmax_row(gamma, Z, i, p):
    """p ← softmax(Z[i]), the row's probabilities (shifted by its largest score: no
    overflow; fastmath and :func:`~faceoff.solvers.class_rows.exp_lanes` let the loops over
    the K classes vectorize — a kernel's own iterate follows it, a certificate never does)."""
    K = Z.shape[1]
    top = Z[i, 0]
    for c in range(1, K):
        top = max(top, Z[i, c])
    total = 0.0
    for c in range(K):
        p[c] = exp_lanes(Z[i, c] - top)
        total += p[c]
    inv = 1.0 / total
    for c in range(K):
        p[c] *= inv


@njit(cache=True, _nrt=False, error_model="numpy")
def multinomial_row_increment(gamma, Z, i, v, d, label, p):
    """φ(zᵢ + v·d, yᵢ) − φ(zᵢ, yᵢ) = log Σₖ pₖ·exp(v·dₖ) − v·d_{yᵢ}, p = softmax(zᵢ) (shifted
    by the largest exponent: no overflow, no cancellation of two log-sum-exps; ``p`` scratch
    of length K): a block step's change of the loss on row i."""
    softmax_row(gamma, Z, i, p)
    K = Z.shape[1]
    top = v * d[0]
    for c in range(1, K):
        top = max(top, v * d[c])
    total = 0.0
    for c in range(K):
        total += p[c] * exp_lanes(v * d[c] - top)
    return top + math.log(total) - v * d[label]
