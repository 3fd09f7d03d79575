"""The multinomial logistic loss (softmax cross-entropy) of a K-class problem, with its
conjugate and the exact dual step of a row.

A row's scores zᵢ = Xᵀaᵢ ∈ R^K and its class yᵢ give

    φ(zᵢ, yᵢ) = log Σₖ exp(zᵢₖ) − zᵢ_{yᵢ},        ∇φ = softmax(zᵢ) − e_{yᵢ}.

φ is lse(z) − ⟨e_y, z⟩, and lse's conjugate is the negative entropy on the simplex Δ, so

    φ*(v, y) = lse*(v + e_y) = Σₖ pₖ log pₖ   with p = v + e_y ∈ Δ,   +∞ otherwise

(0 log 0 = 0). In the saddle form L(X, Y) = g(X) + 1/n Σᵢ ⟨yᵢ, Xᵀaᵢ⟩ − 1/n Σᵢ φ*(yᵢ) the
dual point a primal X certifies with is yᵢ = softmax(Xᵀaᵢ) − e_{yᵢ} (a point of Δ − e_y,
so φ*(yᵢ) is finite), and D(Y) = −1/n Σᵢ φ*(yᵢ) − Σₖ g*(−Aᵀy·ₖ/n): the binary
problem's dual with a row's K dual variables on a shifted simplex.

The dual coordinate step of a row (prox-SDCA for the multiclass logistic, Shalev-Shwartz &
Zhang 2014, §6) maximizes over p ∈ Δ

    h(p) = −Σₖ pₖ log pₖ + ⟨p, z⟩ − s/2 ‖p − p₀‖²,

p₀ the row's current p, s = ‖aᵢ‖²/(l2·n). Its optimality conditions, with ν the multiplier
of Σp = 1, are log pₖ + s·pₖ = cₖ − ν, cₖ = zₖ + s·p₀ₖ − 1: each pₖ(ν) is the root of
u + s·eᵘ = cₖ − ν in u = log pₖ (increasing and convex in u), and Σₖ pₖ(ν) = 1 fixes ν
(Σp decreases in ν). :func:`simplex_step` solves it by Newton's method on log Σₖ pₖ(ν)
(exact in one step when s → 0, where p = softmax(c)), kept in a bracket, each pₖ(ν) by
Newton from above (monotone).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

# p = v + e_y may leave the simplex by this much (rounding) and still count as in it
SIMPLEX_TOL = 1e-9


def values(Z: np.ndarray, labels: np.ndarray) -> float:
    """Σᵢ log Σₖ exp(Zᵢₖ) − Z_{i,yᵢ} for scores Z, shape (n, K), and classes ``labels``."""
    top = Z.max(axis=1)
    lse = top + np.log(np.exp(Z - top[:, None]).sum(axis=1))
    return float(lse.sum() - Z[np.arange(Z.shape[0]), labels].sum())


def derivs(Z: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """∇φ of every row: softmax(Zᵢ) − e_{yᵢ}, shape (n, K)."""
    P = np.exp(Z - Z.max(axis=1)[:, None])
    P /= P.sum(axis=1)[:, None]
    P[np.arange(Z.shape[0]), labels] -= 1.0
    return P


def values_derivs(Z: np.ndarray, labels: np.ndarray) -> tuple[float, np.ndarray]:
    """(Σᵢ φ(Zᵢ, yᵢ), ∇φ of every row), one exp a score."""
    rows = np.arange(Z.shape[0])
    E = np.exp(Z - Z.max(axis=1)[:, None])
    total = E.sum(axis=1)
    value = float((Z.max(axis=1) + np.log(total)).sum() - Z[rows, labels].sum())
    E /= total[:, None]
    E[rows, labels] -= 1.0
    return value, E


def conjs(Y: np.ndarray, labels: np.ndarray) -> float:
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
def simplex_step(z, p, s, u, tol):
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
    for iterations in range(1, 200):
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
