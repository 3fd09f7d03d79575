"""Primal randomized coordinate descent: NSync, Faceoff Algorithm 1 (serial sampling).

Coordinate j steps by −∇ⱼP(x)/u'ⱼ with u'ⱼ = β·uⱼ/n + l2, uⱼ = ‖A_:ⱼ‖² (Faceoff eq. (7)),
and a soft-threshold (proximal coordinate step) when l1 > 0. Ax is maintained, so a step
costs O(nnz of column j). Sampling: uniform, or importance pⱼ ∝ β·uⱼ + l2·n (eq. (14)).

``step="newton"`` replaces the global bound u'ⱼ by the coordinate's curvature at x,
hⱼ = 1/n Σᵢ φ''(aᵢᵀx)·A_ij² + l2 (a proximal Newton coordinate step, as CDN and lightning's
CD take; Tseng & Yun 2009), kept only if it passes Armijo's test
P(x + d·eⱼ) − P(x) ≤ σ·Δ, Δ = ∇ⱼ·d + l1(|xⱼ + d| − |xⱼ|) (one more pass over the column,
the loss increments computed without cancellation). A rejected step falls back to
eq. (7)'s, which always descends.

The pass is skipped when a bound already proves the test (CDN's sufficient condition,
Yuan et al. 2010, §6, made local): by Taylor's theorem
P(x + d·eⱼ) − P(x) ≤ Δ + d²/2·(c + l2), where c bounds 1/n Σᵢ φ''·A_ij² along the step:
c = min(β‖A_:ⱼ‖²/n, (hⱼ − l2)·ρ(|d|·maxᵢ|A_ij|)) with ρ the loss's curvature growth
(``losses.curvature_growth``: e^t for the logistic). So (1 − σ)·Δ + d²/2·(c + l2) ≤ 0
accepts the step as the test would; for the logistic that holds whenever no margin moves
by more than log 1.98 ≈ 0.68, which is every step once the iterate settles.

An intercept c (binary and regression problems) takes one step after every d coordinate
steps (:func:`intercept_step`: Newton's on 1/n Σᵢ φ(aᵢᵀx + c) with Armijo's test, else
the 1/β step, which always descends), as celer and skglm update theirs once an epoch.

K-class problems (X of shape (d, K), A·X of shape (n, K)) move a feature's K coefficients
together (:func:`_primal_cd_classes`): K steps one-vs-rest, one block step multinomial.
"""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple

import numpy as np
from numba import njit

from faceoff.solvers.algorithms.primal_cd import Params
from faceoff.solvers.class_rows import class_axpy
from faceoff.solvers.driver import PrimalMethod, run_chunked
from faceoff.solvers.losses import (
    curvature_growth,
    get_loss,
    loss_deriv,
    loss_derivs12,
    loss_increment,
    multinomial_row_increment,
    ovr_row_gradient,
    softmax_row,
)
from faceoff.solvers.penalties import soft_threshold
from faceoff.solvers.prefetch import prefetch, prefetch_span
from faceoff.solvers.problem import Problem
from faceoff.solvers.sampling import Sampler, next_coordinate
from faceoff.solvers.spec import AUTO, AUTO_EXTRA
from faceoff.solvers.trace import Recorder


class PrimalState(NamedTuple):
    """The iterate of a primal_cd run and its steps (a Numba tuple).

    x : array, shape (n_features,)
    Ax : array, shape (n_samples,)
    lipschitz : array, shape (n_features,)
        u'ⱼ = β·‖A_:ⱼ‖²/n + l2 of eq. (7).
    newton : bool
        Newton coordinate steps with Armijo's test instead of eq. (7)'s.
    loss_bound : array, shape (n_features,)
        β·‖A_:ⱼ‖²/n, the bound of the loss's curvature on column j (newton only; else empty).
    col_max : array, shape (n_features,)
        maxᵢ |A_ij| (newton only; else empty).
    """

    x: np.ndarray
    Ax: np.ndarray
    lipschitz: np.ndarray
    newton: bool
    loss_bound: np.ndarray
    col_max: np.ndarray


SIGMA = 0.01  # Armijo's sufficient-decrease fraction (CDN's, and lightning's)


@njit(cache=True)
def _newton_accepted(data, loss, penalty, Ax, start, end, xj, d, grad):
    """Armijo's test for the step d on coordinate j: P(x + d·eⱼ) − P(x) ≤ σ·Δ with
    Δ = ∇ⱼ·d + l1(|xⱼ + d| − |xⱼ|) < 0, the losses' increments summed without cancellation
    (:func:`~faceoff.solvers.losses.loss_increment`); the column is A's [start, end)."""
    _, indices, values = data.csc
    b = data.b
    l1, l2 = penalty
    change = 0.0
    for k in range(start, end):
        i = indices[k]
        change += loss_increment(loss, Ax[i], b[i], d * values[k])
    x_new = xj + d
    change = change / b.shape[0] + l2 * d * (xj + 0.5 * d) + l1 * (abs(x_new) - abs(xj))
    return change <= SIGMA * (grad * d + l1 * (abs(x_new) - abs(xj)))


@njit(cache=True)
def _surely_accepted(loss, penalty, xj, d, grad, curvature, loss_bound, col_max):
    """Whether the bound of the module docstring proves Armijo's test for the step d
    (``curvature`` = 1/n Σᵢ φ''(aᵢᵀx)·A_ij², the column's without l2)."""
    l1, l2 = penalty
    local = curvature * curvature_growth(loss, abs(d) * col_max)
    c = local if local < loss_bound else loss_bound  # inf or NaN (no local bound): β's
    decrease = grad * d + l1 * (abs(xj + d) - abs(xj))
    return (1.0 - SIGMA) * decrease + 0.5 * d * d * (c + l2) <= 0.0


@njit(cache=True)
def _primal_cd(data, loss, penalty, sampler, state, n_updates):
    """Run ``n_updates`` steps of Algorithm 1 on the CSC arrays of A; returns nnz visited."""
    indptr, indices, values = data.csc
    b = data.b
    l1, l2 = penalty
    x, Ax, lipschitz, newton, loss_bound, col_max = state
    n_samples = b.shape[0]
    inv_n = 1.0 / n_samples
    visited = 0
    draws = sampler.ring[0]  # the sampler's step counter, kept in a register
    for _ in range(n_updates):
        j, ahead, half = next_coordinate(sampler, draws)
        draws += 1
        prefetch(indptr, ahead)
        col = indptr[half]
        prefetch(indices, col)
        prefetch(values, col)
        prefetch(x, half)
        prefetch(lipschitz, half)
        start, end = indptr[j], indptr[j + 1]
        xj = x[j]
        grad = curvature = 0.0
        if newton:
            for k in range(start, end):  # ∇ⱼ and ∇²ⱼⱼ of 1/n Σ φ(Ax)
                i = indices[k]
                d1, d2 = loss_derivs12(loss, Ax[i], b[i])
                grad += d1 * values[k]
                curvature += d2 * values[k] * values[k]
        else:
            for k in range(start, end):  # ∇ⱼ (1/n Σ φ(Ax)) = 1/n Σᵢ φ'(aᵢᵀx) A_ij
                i = indices[k]
                grad += loss_deriv(loss, Ax[i], b[i]) * values[k]
        grad = grad * inv_n + l2 * xj
        delta = 0.0
        h = curvature * inv_n + l2
        if newton and h > 0.0:  # h = 0 (l2 = 0, no curvature on the column): eq. (7)'s step
            x_new = soft_threshold(xj - grad / h, l1 / h) if l1 > 0.0 else xj - grad / h
            delta = x_new - xj
            if delta != 0.0 and not _surely_accepted(
                loss, penalty, xj, delta, grad, curvature * inv_n, loss_bound[j], col_max[j]
            ):
                visited += end - start
                if not _newton_accepted(data, loss, penalty, Ax, start, end, xj, delta, grad):
                    delta = 0.0  # eq. (7)'s step below
        if delta == 0.0:
            x_new = xj - grad / lipschitz[j]
            if l1 > 0.0:
                x_new = soft_threshold(x_new, l1 / lipschitz[j])
            delta = x_new - xj
        if delta != 0.0:
            x[j] = x_new
            for k in range(start, end):  # Ax += delta · A_:j
                Ax[indices[k]] += delta * values[k]
        visited += end - start
    sampler.ring[0] = draws
    return visited


@njit(cache=True)
def intercept_step(loss, b, Ax, x, beta):
    """One step on the intercept c = x[−1] (Ax holds the margins aᵢᵀx + c): Newton's,
    −g/h with g, h = 1/n Σᵢ φ', φ'' at the margins, kept if Armijo's test passes, else
    −g/β (β-smooth in c). Returns the entries visited and |g| before the step (c's
    optimality violation; ws_cd's subproblems read it)."""
    n = b.shape[0]
    g = h = 0.0
    for i in range(n):
        d1, d2 = loss_derivs12(loss, Ax[i], b[i])
        g += d1
        h += d2
    g, h = g / n, h / n
    if g == 0.0:
        return n, 0.0
    step = -g / beta
    visited = n
    if h > 0.0:
        change = 0.0
        for i in range(n):
            change += loss_increment(loss, Ax[i], b[i], -g / h)
        visited += n
        if change / n <= SIGMA * g * (-g / h):
            step = -g / h
    x[x.shape[0] - 1] += step
    for i in range(n):
        Ax[i] += step
    return visited + n, abs(g)


# ---------------------------------------------------------------- K-class problems
#
# X (d, K) and A·X (n, K) are C-ordered: the K coefficients of feature j are one read, and so
# are the K margins of sample i. A step draws a column j and moves its K coefficients
# together, from one pass over the column for the K partial derivatives (∇φ at a row's K
# margins computed as the row is read: the loss's loss_deriv_lanes, whose loop over the classes
# vectorizes) and one pass updating A·X
# (solvers.class_rows.class_axpy). Keeping ∇φ(A·X) beside A·X instead, updated along the
# rows a step moves, took 45 ms an epoch on news20 (K = 20, smoothed hinge) against 34 ms:
# one more (n, K) array to read and write for the same number of derivatives.


class ClassState(NamedTuple):
    """The iterate of a K-class primal_cd run and its steps (a Numba tuple).

    x : array, shape (n_features, K)
    Ax : array, shape (n_samples, K)
    multinomial : bool
        The multinomial form (else one-vs-rest).
    lipschitz, newton, loss_bound, col_max
        As :class:`PrimalState`'s (β = 1/2 for the multinomial form).
    """

    x: np.ndarray
    Ax: np.ndarray
    multinomial: bool
    lipschitz: np.ndarray
    newton: bool
    loss_bound: np.ndarray
    col_max: np.ndarray


@njit(cache=True, _nrt=False, error_model="numpy")
def _ovr_gradient(data, loss, newton, start, end, Ax, grad, curvature):
    """grad[k] = Σᵢ Aᵢⱼ·φ'(Ax[i, k], bᵢₖ) over column j = A's CSC [start, end), bᵢₖ = +1 if
    sample i is of class k, −1 otherwise, and with ``newton`` curvature[k] =
    Σᵢ φ''·Aᵢⱼ², each summed as the binary kernel sums it. The loop over a row's K classes
    vectorizes: the loss's ``ovr_row_gradient`` (its φ' as ``deriv_lanes``, the logistic's exp
    as arithmetic, not libm's, which no loop vectorizes: 151 ms an epoch on news20 against
    60 ms)."""
    _, indices, values = data.csc
    labels = data.b
    K = Ax.shape[1]
    for c in range(K):
        grad[c] = 0.0
        curvature[c] = 0.0
    if newton:
        for k in range(start, end):
            i, v = indices[k], values[k]
            label = labels[i]
            for c in range(K):
                d1, d2 = loss_derivs12(loss, Ax[i, c], 1.0 if c == label else -1.0)
                grad[c] += d1 * v
                curvature[c] += d2 * v * v
    else:
        for k in range(start, end):
            i, v = indices[k], values[k]
            ovr_row_gradient(loss, Ax, i, labels[i], v, grad)


@njit(cache=True, _nrt=False, error_model="numpy")
def _softmax_gradient(data, loss, newton, start, end, Ax, grad, curvature, p):
    """The multinomial form's :func:`_ovr_gradient`: grad = Σᵢ Aᵢⱼ·(pᵢ − e_{bᵢ}) and
    curvature = Σᵢ Aᵢⱼ²·pᵢ∘(1 − pᵢ) (the diagonal of the softmax Hessian), pᵢ =
    softmax(Ax[i]) computed per row read by the loss's ``softmax_row`` (``p``: scratch of
    length K)."""
    _, indices, values = data.csc
    labels = data.b
    K = Ax.shape[1]
    for c in range(K):
        grad[c] = 0.0
        curvature[c] = 0.0
    for k in range(start, end):
        i, v = indices[k], values[k]
        softmax_row(loss, Ax, i, p)
        for c in range(K):
            grad[c] += p[c] * v
            if newton:
                curvature[c] += p[c] * (1.0 - p[c]) * v * v
        grad[labels[i]] -= v


@njit(cache=True)
def _class_newton_accepted(data, loss, penalty, Ax, c, start, end, xj, d, grad):
    """:func:`_newton_accepted` for class c of a one-vs-rest problem (bᵢ꜀ = ±1 from the
    class indices)."""
    _, indices, values = data.csc
    labels = data.b
    l1, l2 = penalty
    change = 0.0
    for k in range(start, end):
        i = indices[k]
        b = 1.0 if labels[i] == c else -1.0
        change += loss_increment(loss, Ax[i, c], b, d * values[k])
    x_new = xj + d
    change = change / labels.shape[0] + l2 * d * (xj + 0.5 * d) + l1 * (abs(x_new) - abs(xj))
    return change <= SIGMA * (grad * d + l1 * (abs(x_new) - abs(xj)))


@njit(cache=True)
def _block_newton_accepted(data, loss, penalty, Ax, start, end, xj, d, grad, p):
    """Armijo's test for the multinomial block step d (length K) on feature j (row ``xj``
    of X):
    P(X + eⱼdᵀ) − P(X) ≤ σ·Δ, Δ = ⟨∇ⱼ, d⟩ + l1(‖xⱼ + d‖₁ − ‖xⱼ‖₁), the loss's change along the
    column summed by the loss's ``multinomial_row_increment`` (``p`` scratch of length K)."""
    _, indices, values = data.csc
    labels = data.b
    l1, l2 = penalty
    K = Ax.shape[1]
    change = 0.0
    for k in range(start, end):
        i = indices[k]
        change += multinomial_row_increment(loss, Ax, i, values[k], d, labels[i], p)
    change /= labels.shape[0]
    decrease = 0.0
    for c in range(K):
        xc, dc = xj[c], d[c]
        shrink = l1 * (abs(xc + dc) - abs(xc))
        change += l2 * dc * (xc + 0.5 * dc) + shrink
        decrease += grad[c] * dc + shrink
    return change <= SIGMA * decrease


@njit(cache=True, _nrt=False, error_model="numpy")
def _bound_steps(X, j, grad, lipschitz, l1, delta):
    """Eq. (7)'s steps on feature j's K coefficients, xⱼ ← prox(xⱼ − ∇ⱼ/u'ⱼ) coordinatewise,
    their changes in ``delta``, as one loop over the classes that vectorizes (the binary
    kernel's arithmetic); returns whether any coefficient moved."""
    K = X.shape[1]
    for c in range(K):
        xj = X[j, c]
        x_new = xj - grad[c] / lipschitz
        if l1 > 0.0:
            x_new = soft_threshold(x_new, l1 / lipschitz)
        delta[c] = x_new - xj
        X[j, c] = x_new if delta[c] != 0.0 else xj
    moved = False
    for c in range(K):
        moved |= delta[c] != 0.0
    return moved


@njit(cache=True)
def _primal_cd_classes(data, loss, penalty, sampler, state, n_updates):
    """``n_updates`` steps of Algorithm 1 on a K-class problem: feature j's K coefficients
    xⱼ move together. Its K partial derivatives are one pass over column j of A,
    ∇ⱼ = 1/n Σᵢ Aᵢⱼ·∇φᵢ + l2·xⱼ; then K steps, one a class, each eq. (7)'s with the same
    u'ⱼ = β·‖A_:ⱼ‖²/n + l2 and the elastic net's prox per coordinate, or with ``newton``
    Newton steps and Armijo's test; then one pass over the column updating A·X.

    One-vs-rest (∇φᵢ = φ'(Ax[i, k], bᵢₖ)ₖ): each class runs the binary kernel's steps on its
    ±1 labels, Newton's with its own test; the same numbers as the binary kernel but for
    the logistic's fixed step, whose exp differs (by an ulp or two).

    Multinomial (∇φᵢ = softmax(Ax[i]) − e_{bᵢ}): the K steps are one block step on xⱼ, a
    proximal gradient step on the block with u'ⱼ = ‖A_:ⱼ‖²/(2n) + l2, which bounds the
    block's Hessian 1/n Σᵢ Aᵢⱼ²·(diag(pᵢ) − pᵢpᵢᵀ) + l2·I ≼ u'ⱼ·I (the softmax Hessian's
    eigenvalues are at most 1/2): the quadratic model it minimizes lies above P along the
    block, so the step decreases P as eq. (7)'s does along one coordinate (block
    coordinate descent with a separable penalty, Tseng & Yun 2009). ``newton``: the block
    Hessian's diagonal 1/n Σᵢ Aᵢⱼ²·pᵢₖ(1 − pᵢₖ) + l2 in place of u'ⱼ, with Armijo's test on
    the block (:func:`_block_newton_accepted`); a rejected block takes the bound's step.

    Returns nnz visited: a column once, whatever K, and once more for each Armijo pass."""
    indptr, indices, values = data.csc
    l1, l2 = penalty
    X, Ax, multinomial, lipschitz, newton, loss_bound, col_max = state
    n_samples, K = Ax.shape
    inv_n = 1.0 / n_samples
    x_flat, ax_flat = X.reshape(-1), Ax.reshape(-1)
    grad = np.empty(K)
    curvature = np.empty(K)
    p = np.empty(K)
    target = np.empty(K)  # the Newton block's new xⱼ
    delta = np.empty(K)
    visited = 0
    draws = sampler.ring[0]  # the sampler's step counter, kept in a register
    for _ in range(n_updates):
        j, ahead, half = next_coordinate(sampler, draws)
        draws += 1
        prefetch(indptr, ahead)
        col = indptr[half]
        prefetch(indices, col)
        prefetch(values, col)
        prefetch_span(x_flat, half * K, (half + 1) * K)
        prefetch(lipschitz, half)
        start, end = indptr[j], indptr[j + 1]
        if multinomial:
            _softmax_gradient(data, loss, newton, start, end, Ax, grad, curvature, p)
        else:
            _ovr_gradient(data, loss, newton, start, end, Ax, grad, curvature)
        for c in range(K):
            grad[c] = grad[c] * inv_n + l2 * X[j, c]
        block = False  # the multinomial Newton block, accepted
        if newton and multinomial:
            for c in range(K):
                h = curvature[c] * inv_n + l2
                target[c] = X[j, c] - grad[c] / h if h > 0.0 else X[j, c]  # h = 0: no step
                if l1 > 0.0 and h > 0.0:
                    target[c] = soft_threshold(target[c], l1 / h)
                delta[c] = target[c] - X[j, c]
                block = block or delta[c] != 0.0
            if block:
                visited += end - start
                block = _block_newton_accepted(
                    data, loss, penalty, Ax, start, end, X[j], delta, grad, p
                )
        if newton:
            moved = False
            for c in range(K):
                xj = X[j, c]
                x_new = target[c] if block else xj
                h = curvature[c] * inv_n + l2
                if not multinomial and h > 0.0:  # the binary kernel's Newton step, class c
                    x_new = xj - grad[c] / h
                    if l1 > 0.0:
                        x_new = soft_threshold(x_new, l1 / h)
                    d = x_new - xj
                    local = curvature[c] * inv_n
                    if d != 0.0 and not _surely_accepted(
                        loss, penalty, xj, d, grad[c], local, loss_bound[j], col_max[j]
                    ):
                        visited += end - start
                        if not _class_newton_accepted(
                            data, loss, penalty, Ax, c, start, end, xj, d, grad[c]
                        ):
                            x_new = xj
                if x_new == xj and not block:  # eq. (7)'s step
                    x_new = xj - grad[c] / lipschitz[j]
                    if l1 > 0.0:
                        x_new = soft_threshold(x_new, l1 / lipschitz[j])
                delta[c] = x_new - xj
                if delta[c] != 0.0:
                    X[j, c] = x_new
                    moved = True
        else:
            moved = _bound_steps(X, j, grad, lipschitz[j], l1, delta)
        if moved:  # Ax += A_:ⱼ·δᵀ, in the classes that moved
            class_axpy(indices, values, start, end, ax_flat, K, delta)
        visited += end - start
    sampler.ring[0] = draws
    return visited


def _col_max_abs(csc) -> np.ndarray:
    """maxᵢ |A_ij| for every column j (0 for an empty column), in O(nnz)."""
    indptr, _, values = csc
    out = np.zeros(indptr.shape[0] - 1)
    filled = np.diff(indptr) > 0
    if values.size:
        out[filled] = np.maximum.reduceat(np.abs(values), indptr[:-1][filled])
    return out


class PrimalCD(PrimalMethod):
    """State of one primal_cd run (see module docstring)."""

    def __init__(self, problem: Problem, sampling: str, seed: int, step: str = "fixed") -> None:
        data = problem.data
        self.problem = problem
        self.chosen: dict[str, str] = {}  # what auto chose (resolve), for the extras
        self.n_coords = data.n_features
        beta = problem.smoothness  # the loss's; 1/2 for the multinomial form
        n, l2 = data.n_samples, problem.penalty.l2
        weights = beta * data.col_sq_norms + l2 * n if sampling == "importance" else None
        self.sampler = Sampler(self.n_coords, sampling, seed, weights)
        self.nnz_per_update = float(self.sampler.probabilities @ data.col_nnz)
        newton = step == "newton"
        loss_bound = beta * data.col_sq_norms / n
        lipschitz = loss_bound + l2
        # l2 = 0: an empty (or all-zero) column has u'ⱼ = 0 and ∇ⱼ = 0; any step keeps xⱼ
        lipschitz[lipschitz == 0.0] = 1.0
        steps = {
            "lipschitz": lipschitz,
            "newton": newton,
            "loss_bound": loss_bound if newton else np.empty(0),
            "col_max": _col_max_abs(data.csc) if newton else np.empty(0),
        }
        self.intercept = problem.intercept  # x = (w, c): the kernel steps on w only
        self.until_intercept = self.n_coords  # coordinate steps before c's next one
        if problem.multiclass is None:
            self.state: PrimalState | ClassState = PrimalState(
                x=np.zeros(problem.coef_shape), Ax=np.zeros(n), **steps
            )
            self.kernel = _primal_cd
        else:
            self.state = ClassState(
                x=np.zeros(problem.coef_shape),
                Ax=np.zeros(problem.dual_shape),
                multinomial=problem.multiclass == "multinomial",
                **steps,
            )
            self.kernel = _primal_cd_classes
        self.x = self.state.x

    def extras(self) -> dict:
        return {AUTO_EXTRA: self.chosen} if self.chosen else {}

    def start_from(self, x0: np.ndarray) -> None:
        """Start from x0 (a path's previous solution): x and its margins Ax."""
        self.x[...] = x0
        self.state.Ax[...] = self.problem.margins(x0)

    def run(self, n_updates: int) -> int:
        if not self.intercept:
            return self._steps(n_updates)
        visited = 0  # d coordinate steps, then the intercept's, whatever the chunks
        while n_updates > 0:
            chunk = min(n_updates, self.until_intercept)
            visited += self._steps(chunk)
            n_updates -= chunk
            self.until_intercept -= chunk
            if self.until_intercept == 0:
                problem = self.problem
                visited += intercept_step(
                    problem.loss.params, problem.b, self.state.Ax, self.x, problem.smoothness
                )[0]
                self.until_intercept = self.n_coords
        return visited

    def _steps(self, n_updates: int) -> int:
        problem = self.problem
        return self.kernel(
            problem.arrays,
            problem.loss.params,
            problem.penalty.params,
            self.sampler.state,
            self.state,
            n_updates,
        )


def resolve(problem: Problem, params: Params) -> tuple[Params, dict[str, str]]:
    """``params`` with each ``auto`` replaced by the problem's choice, and those choices:
    step fixed for a smoothed loss (the smoothed hinge, whose curvature jumps at its kinks),
    newton otherwise (logistic, squared); sampling permutation with the Newton step,
    uniform with the fixed one (the settings of bench part 1). Explicit values are kept."""
    chosen: dict[str, str] = {}
    if params.step == AUTO:
        chosen["step"] = "fixed" if get_loss(problem.loss.name).smoothed else "newton"
    if params.sampling == AUTO:
        newton = chosen.get("step", params.step) == "newton"
        chosen["sampling"] = "permutation" if newton else "uniform"
    return replace(params, **chosen), chosen


def solve(problem: Problem, params: Params, recorder: Recorder, seed: int) -> str:
    params, chosen = resolve(problem, params)
    method = PrimalCD(problem, params.sampling, seed, params.step)
    method.chosen = chosen
    if recorder.warm_start is not None:
        method.start_from(recorder.warm_start)
    return run_chunked(method, recorder, problem.data.nnz)
