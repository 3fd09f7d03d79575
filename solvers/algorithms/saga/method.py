"""SAGA with the elastic-net proximal step (Defazio, Bach & Lacoste-Julien 2014, Algorithm 1).

The smooth part is the loss alone, f(x) = 1/n Σ fᵢ(x), fᵢ(x) = φ(aᵢᵀx, bᵢ); the whole
penalty g = l1‖·‖₁ + l2/2‖·‖² goes into the prox, prox_{ηg}(v) = soft(v, η·l1)/(1 + η·l2).
For linear models ∇fᵢ(x) = φ'(aᵢᵀx)·aᵢ, so the gradient table is one scalar αᵢ per sample
and ḡ = Aᵀα/n. A step on a uniformly sampled row i:

    α'ᵢ = φ'(aᵢᵀx, bᵢ),   x ← prox_{ηg}(x − η((α'ᵢ − αᵢ)·aᵢ + ḡ)),   ḡ += (α'ᵢ − αᵢ)·aᵢ/n,

with η = step_scale/(3·L_max), L_max = β·maxᵢ‖aᵢ‖² + l2: the paper's step 1/(3L), whose rate
1 − min(1/(4n), μ/(3L)) adapts to the strong convexity μ = l2. With l2 in the prox rather
than in fᵢ, counting it in L_max (as the catalogue states) errs on the safe side. The table
starts at α = 0, ḡ = 0 (as in scikit-learn's SAGA), which costs no pass over the data.

Lazy (just-in-time) updates keep a step at O(nnz(aᵢ)): off the support of aᵢ a coordinate
only undergoes x_j ← prox_{ηg}(x_j − η·ḡⱼ), with ḡⱼ constant until a sampled row touches j.
That map is monotone and piecewise affine (positive branch, dead zone at 0, negative branch),
so m of its steps are applied in closed form segment by segment
(:func:`faceoff.solvers.lazy_prox.catch_up`, shared with SPDC) when j is next touched, and
for all coordinates at the end of every chunk. For l2 alone the map contracts every
coordinate toward −ḡⱼ/l2 by the same factor, and x is held in the scaled form of
:mod:`faceoff.solvers.lazy_prox` (x = S·v − ḡ/l2, one global S): nothing is caught up
(:func:`_saga_l2`).

K-class problems (one job, X of shape (n_features, K)): a row's table entry holds its K
derivatives, αᵢ = ∇φ(Xᵀaᵢ) ∈ R^K — one-vs-rest φ'(aᵢᵀxₖ, bᵢₖ) with bᵢₖ = +1 if yᵢ = k else
−1, derived from the class index on the fly; multinomial softmax(Xᵀaᵢ) − e_{yᵢ} — and ḡ
has shape (n_features, K). A step reads row i once: it brings the K coefficients of each
feature of the row up to date (one ``last`` and one 1 − rᵐ a feature, shared by its K
coefficients), forms the K scores, and steps the K coefficients of each feature
(:func:`_saga_k`); in the scaled form only the classes whose derivative changed are
written (:func:`_saga_k_l2`: for one-vs-rest with the smoothed hinge most rows move few
of their K classes). L_max takes the row margins' smoothness β of ``problem.smoothness``:
the loss's own for one-vs-rest, 1/2 for the multinomial (the Hessian of log Σ exp,
diag(p) − ppᵀ, has eigenvalues ≤ 1/2), so ∇fᵢ is β‖aᵢ‖²-Lipschitz in X (Frobenius).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from faceoff.solvers.algorithms.saga import AUTO_SCALE_MAX, AUTO_SCALE_MAX_OTHERS, Params
from faceoff.solvers.driver import PrimalMethod, run_chunked
from faceoff.solvers.lazy_prox import (
    RESCALE_BELOW,
    V,
    W,
    catch_up,
    catch_up_columns,
    catch_up_steps,
    contraction_at,
    fold,
    fold_columns,
    lazy_prox,
    prefetch_columns,
    scaled_columns,
    scaled_x,
    scales,
)
from faceoff.solvers.losses import loss_deriv
from faceoff.solvers.penalties import soft_threshold
from faceoff.solvers.prefetch import prefetch, prefetch_draw
from faceoff.solvers.problem import Problem
from faceoff.solvers.sampling import LOOKAHEAD, Sampler, next_coordinate
from faceoff.solvers.spec import AUTO_EXTRA
from faceoff.solvers.trace import Recorder


class SagaState(NamedTuple):
    """The iterate and gradient table of a saga run (a Numba tuple).

    x, gbar : arrays, shape (n_features,)
        The iterate and ḡ = Aᵀα/n.
    alpha : array, shape (n_samples,)
        The table of φ'(aᵢᵀx) at each row's last visit.
    last : int array, shape (n_features,)
        The step from which xⱼ is behind (lazy updates).
    """

    x: np.ndarray
    gbar: np.ndarray
    alpha: np.ndarray
    last: np.ndarray


@njit(cache=True)
def _saga(data, loss, prox, sampler, state, n_updates):
    """Run ``n_updates`` SAGA steps on the CSR arrays of A, then bring every coordinate up
    to date; returns nnz visited."""
    indptr, indices, values = data.csr
    b = data.b
    step, l1, l2, log_r, table = prox
    x, gbar, alpha, last = state
    inv_n = 1.0 / b.shape[0]
    lam = step * l1
    shrink = 1.0 / (1.0 + step * l2)
    visited = 0
    draws = sampler.ring[0]  # the sampler's step counter, kept in a register
    for t in range(n_updates):
        i, ahead, half = next_coordinate(sampler, draws)
        draws += 1
        prefetch(indptr, ahead)
        row = indptr[half]
        prefetch(indices, row)
        prefetch(values, row)
        prefetch(alpha, half)
        prefetch(b, half)
        start, end = indptr[i], indptr[i + 1]
        z = 0.0
        for k in range(start, end):  # catch up the support of aᵢ, then z = aᵢᵀx
            j = indices[k]
            if last[j] < t:
                x[j] = catch_up(x[j], gbar[j], t - last[j], step, l1, l2, log_r, table)
                last[j] = t
            z += values[k] * x[j]
        deriv = loss_deriv(loss, z, b[i])
        delta = deriv - alpha[i]
        alpha[i] = deriv
        for k in range(start, end):  # x ← prox(x − η(δ·aᵢ + ḡ)) ;  ḡ += δ·aᵢ/n
            j = indices[k]
            v = x[j] - step * (delta * values[k] + gbar[j])
            x[j] = soft_threshold(v, lam) * shrink
            gbar[j] += delta * values[k] * inv_n
            last[j] = t + 1
        visited += end - start
    for j in range(x.shape[0]):
        if last[j] < n_updates:
            x[j] = catch_up(x[j], gbar[j], n_updates - last[j], step, l1, l2, log_r, table)
        last[j] = 0
    sampler.ring[0] = draws
    return visited


class SagaL2State(NamedTuple):
    """A saga run's iterate in the scaled form (l2 alone; a Numba tuple).

    primal : array, shape (n_features, 2)
        Columns V and W: x = S·v − w, w = ḡ/l2 (S = 1 between runs).
    alpha : array, shape (n_samples,)
        The table of φ'(aᵢᵀx) at each row's last visit.
    """

    primal: np.ndarray
    alpha: np.ndarray


@njit(cache=True)
def _saga_l2(data, loss, prox, sampler, state, n_updates):
    """``n_updates`` SAGA steps for g = l2/2‖x‖² with x in the scaled form x = S·v − w
    (:mod:`faceoff.solvers.lazy_prox`): a read is S·vⱼ − wⱼ; the step
    x ← r(x − η(δ·aᵢ + ḡ)), ḡ += δ·aᵢ/n, r = 1/(1 + η·l2), is vⱼ += (δ/(n·l2) − rηδ)·aᵢⱼ/(rS),
    wⱼ += δ·aᵢⱼ/(n·l2) on the row and S ← rS for every other coordinate. Returns nnz
    visited."""
    indptr, indices, values = data.csr
    b = data.b
    step, l2 = prox.step, prox.l2
    primal, alpha = state
    inv_n_l2 = 1.0 / (b.shape[0] * l2)
    r = 1.0 / (1.0 + step * l2)
    visited = 0
    draws = sampler.ring[0]  # the sampler's step counter, kept in a register
    scale = 1.0  # S
    for _ in range(n_updates):
        if scale < RESCALE_BELOW:
            fold(primal, scale)
            scale = 1.0
        i, ahead, half = next_coordinate(sampler, draws)
        draws += 1
        prefetch_draw(indptr, indices, values, ahead, half)
        prefetch(alpha, half)
        prefetch(b, half)
        start, end = indptr[i], indptr[i + 1]
        z = 0.0
        for k in range(start, end):  # z = aᵢᵀx
            j = indices[k]
            z += values[k] * (scale * primal[j, V] - primal[j, W])
        deriv = loss_deriv(loss, z, b[i])
        delta = deriv - alpha[i]
        alpha[i] = deriv
        if delta != 0.0:  # (δ = 0: the row's coordinates take the lazy map like the rest)
            dw = delta * inv_n_l2
            dv = (dw - r * step * delta) / (scale * r)
            for k in range(start, end):
                j = indices[k]
                primal[j, V] += dv * values[k]
                primal[j, W] += dw * values[k]
        scale *= r
        visited += end - start
    fold(primal, scale)
    sampler.ring[0] = draws
    return visited


@njit(cache=True, _nrt=False)
def _row_derivs(loss, multinomial, z, label, out):
    """out ← ∇φ at a row's K scores ``z``: φ'(zₖ, ±1) for one-vs-rest (+1 for the row's
    class ``label``), softmax(z) − e_label for the multinomial form."""
    K = z.shape[0]
    if multinomial:
        top = z[0]
        for c in range(1, K):
            top = max(top, z[c])
        total = 0.0
        for c in range(K):
            out[c] = math.exp(z[c] - top)
            total += out[c]
        inv = 1.0 / total
        for c in range(K):
            out[c] *= inv
        out[label] -= 1.0
    else:
        for c in range(K):
            out[c] = loss_deriv(loss, z[c], 1.0 if c == label else -1.0)


class SagaKState(NamedTuple):
    """A K-class saga run's iterate and gradient table (a Numba tuple).

    x, gbar : arrays, shape (n_features, K)
        The iterate X and ḡ = Aᵀα/n.
    alpha : array, shape (n_samples, K)
        ∇φ(Xᵀaᵢ) at each row's last visit.
    last : int array, shape (n_features,)
        The step from which a feature's K coefficients are behind (lazy updates).
    """

    x: np.ndarray
    gbar: np.ndarray
    alpha: np.ndarray
    last: np.ndarray


@njit(cache=True)
def _saga_k(data, loss, multinomial, prox, sampler, state, n_updates):
    """:func:`_saga` for a K-class problem (class indices ``data.b``): a row read serves
    its K scores and the steps of its features' K coefficients; returns nnz visited."""
    indptr, indices, values = data.csr
    labels = data.b
    step, l1, l2, log_r, table = prox
    x, gbar, alpha, last = state
    n, K = alpha.shape
    inv_n = 1.0 / n
    lam = step * l1
    shrink = 1.0 / (1.0 + step * l2)
    flat_alpha = alpha.reshape(-1)  # for prefetching a row of the table
    flat_x, flat_gbar = x.reshape(-1), gbar.reshape(-1)
    # scratch allocated here, not passed in: LLVM then knows it does not alias X
    z = np.empty(K)
    deriv = np.empty(K)
    delta = np.empty(K)
    hard = np.empty(K, np.int64)
    visited = 0
    ring = sampler.ring
    draws = ring[0]  # the sampler's step counter, kept in a register
    for t in range(n_updates):
        i, ahead, half = next_coordinate(sampler, draws)
        draws += 1
        prefetch_draw(indptr, indices, values, ahead, half)
        prefetch(flat_alpha, half * K)
        following = ring[1 + (draws & (LOOKAHEAD - 1))]  # the next draw's row
        prefetch_columns(indptr, indices, flat_x, K, following)
        prefetch_columns(indptr, indices, flat_gbar, K, following)
        start, end = indptr[i], indptr[i + 1]
        for c in range(K):
            z[c] = 0.0
        for q in range(start, end):  # catch up the K columns on aᵢ's support, z = Xᵀaᵢ
            j = indices[q]
            behind = t - last[j]
            if behind > 0:
                contraction = contraction_at(table, behind, log_r)
                catch_up_columns(x, gbar, j, behind, contraction, step, l1, l2, log_r, hard)
                last[j] = t
            a = values[q]
            for c in range(K):
                z[c] += a * x[j, c]
        _row_derivs(loss, multinomial, z, labels[i], deriv)
        for c in range(K):
            delta[c] = deriv[c] - alpha[i, c]
            alpha[i, c] = deriv[c]
        for q in range(start, end):  # X ← prox(X − η(aᵢδᵀ + ḡ)) ;  ḡ += aᵢδᵀ/n
            j = indices[q]
            a = values[q]
            for c in range(K):
                v = x[j, c] - step * (delta[c] * a + gbar[j, c])
                x[j, c] = soft_threshold(v, lam) * shrink
                gbar[j, c] += delta[c] * a * inv_n
            last[j] = t + 1
        visited += end - start
    for j in range(x.shape[0]):
        behind = n_updates - last[j]
        if behind > 0:
            contraction = contraction_at(table, behind, log_r)
            for c in range(K):
                x[j, c] = catch_up_steps(
                    x[j, c], gbar[j, c], behind, contraction, step, l1, l2, log_r
                )
        last[j] = 0
    ring[0] = draws
    return visited


class SagaKL2State(NamedTuple):
    """A K-class saga run's iterate in the scaled form (l2 alone; a Numba tuple).

    primal : array, shape (n_features, 2, K)
        Planes V and W: X = S·v − w, w = ḡ/l2 (S = 1 between runs).
    alpha : array, shape (n_samples, K)
        ∇φ(Xᵀaᵢ) at each row's last visit.
    """

    primal: np.ndarray
    alpha: np.ndarray


@njit(cache=True)
def _saga_k_l2(data, loss, multinomial, prox, sampler, state, n_updates):
    """:func:`_saga_l2` for a K-class problem: the K scores of a row from one read, then
    vⱼ, wⱼ written only for the classes whose derivative changed (all K in one vector
    loop when they all did). Returns nnz visited."""
    indptr, indices, values = data.csr
    labels = data.b
    step, l2 = prox.step, prox.l2
    primal, alpha = state
    n, K = alpha.shape
    inv_n_l2 = 1.0 / (n * l2)
    r = 1.0 / (1.0 + step * l2)
    flat_alpha = alpha.reshape(-1)
    flat_primal = primal.reshape(-1)
    z = np.empty(K)
    deriv = np.empty(K)
    dv = np.empty(K)
    dw = np.empty(K)
    moved = np.empty(K, np.int64)
    visited = 0
    ring = sampler.ring
    draws = ring[0]
    scale = 1.0  # S
    for _ in range(n_updates):
        if scale < RESCALE_BELOW:
            fold_columns(primal, scale)
            scale = 1.0
        i, ahead, half = next_coordinate(sampler, draws)
        draws += 1
        prefetch_draw(indptr, indices, values, ahead, half)
        prefetch(flat_alpha, half * K)
        following = ring[1 + (draws & (LOOKAHEAD - 1))]  # the next draw's row
        prefetch_columns(indptr, indices, flat_primal, 2 * K, following)
        start, end = indptr[i], indptr[i + 1]
        for c in range(K):
            z[c] = 0.0
        for q in range(start, end):  # z = Xᵀaᵢ
            j = indices[q]
            a = values[q]
            for c in range(K):
                z[c] += a * (scale * primal[j, V, c] - primal[j, W, c])
        _row_derivs(loss, multinomial, z, labels[i], deriv)
        count = 0
        inv_scale_r = 1.0 / (scale * r)
        for c in range(K):
            delta = deriv[c] - alpha[i, c]
            alpha[i, c] = deriv[c]
            if delta != 0.0:
                dw[count] = delta * inv_n_l2
                dv[count] = (dw[count] - r * step * delta) * inv_scale_r
                moved[count] = c
                count += 1
        if count == K:
            for q in range(start, end):
                j = indices[q]
                a = values[q]
                for c in range(K):
                    primal[j, V, c] += dv[c] * a
                    primal[j, W, c] += dw[c] * a
        elif count > 0:
            for q in range(start, end):
                j = indices[q]
                a = values[q]
                for p in range(count):
                    c = moved[p]
                    primal[j, V, c] += dv[p] * a
                    primal[j, W, c] += dw[p] * a
        scale *= r
        visited += end - start
    fold_columns(primal, scale)
    ring[0] = draws
    return visited


class SAGA(PrimalMethod):
    """State of one saga run (see module docstring)."""

    state: SagaState | SagaL2State | SagaKState | SagaKL2State

    def __init__(self, problem: Problem, step_scale: float, seed: int) -> None:
        data = problem.data
        self.problem = problem
        self.chosen: dict[str, float] = {}  # what auto chose, for the extras
        n, d = data.n_samples, data.n_features
        self.n_coords = n
        self.nnz_per_update = data.nnz / n
        l_max = problem.smoothness * float(data.row_sq_norms.max()) + problem.penalty.l2
        self.prox = lazy_prox(float(step_scale) / (3.0 * l_max), problem.penalty)
        self.sampler = Sampler(n, "uniform", seed)
        self.scaled = scales(self.prox.step, problem.penalty)
        self.k_class = problem.multiclass is not None
        if self.k_class:
            self.multinomial = problem.multiclass == "multinomial"
            K = problem.n_classes
            if self.scaled:
                self.state = SagaKL2State(np.zeros((d, 2, K)), np.zeros((n, K)))
            else:
                self.state = SagaKState(
                    x=np.zeros((d, K)),
                    gbar=np.zeros((d, K)),
                    alpha=np.zeros((n, K)),
                    last=np.zeros(d, dtype=np.int64),
                )
        elif self.scaled:
            self.state = SagaL2State(np.zeros((d, 2)), np.zeros(n))
        else:
            self.state = SagaState(
                x=np.zeros(d),
                gbar=np.zeros(d),
                alpha=np.zeros(n),
                last=np.zeros(d, dtype=np.int64),
            )

    @property
    def x(self) -> np.ndarray:
        """The iterate (the kernel's array, or x = v − w of the scaled form); X, shape
        (n_features, K), for a K-class problem."""
        state = self.state
        if isinstance(state, SagaKL2State):
            return scaled_columns(state.primal)
        if isinstance(state, SagaL2State):
            return scaled_x(state.primal)
        return state.x

    def extras(self) -> dict:
        return {AUTO_EXTRA: self.chosen} if self.chosen else {}

    def run(self, n_updates: int) -> int:
        problem = self.problem
        if self.k_class:
            return (_saga_k_l2 if self.scaled else _saga_k)(
                problem.rows,
                problem.loss.params,
                self.multinomial,
                self.prox,
                self.sampler.state,
                self.state,
                n_updates,
            )
        return (_saga_l2 if self.scaled else _saga)(
            problem.rows,
            problem.loss.params,
            self.prox,
            self.sampler.state,
            self.state,
            n_updates,
        )


def auto_step_scale(problem: Problem) -> float:
    """``step_scale=None`` (auto): max‖aᵢ‖²/mean‖aᵢ‖² clipped to [1, AUTO_SCALE_MAX of the
    loss], so the step is 1/(3·L) of the mean row's L but never above 1/L_max (2/(3·L_max)
    but for the logistic). In the set-up: one O(n) pass over the row norms."""
    norms = problem.data.row_sq_norms
    mean = float(np.mean(norms)) if norms.size else 0.0
    ratio = float(norms.max()) / mean if mean > 0.0 else 1.0
    high = AUTO_SCALE_MAX.get(problem.loss.name, AUTO_SCALE_MAX_OTHERS)
    return min(max(ratio, 1.0), high)


def solve(problem: Problem, params: Params, recorder: Recorder, seed: int) -> str:
    step_scale = params.step_scale
    chosen: dict[str, float] = {}
    if step_scale is None:
        step_scale = chosen["step_scale"] = auto_step_scale(problem)
    method = SAGA(problem, step_scale, seed)
    method.chosen = chosen
    return run_chunked(method, recorder, problem.data.nnz)
