"""Dual randomized coordinate ascent: Quartz / SDCA, Faceoff Algorithm 2 (serial sampling).

The dual point y determines x = ∇g*(z), z = −Aᵀy/n (prox-SDCA for elastic net); x (and z
when l1 > 0) is maintained, so a step costs O(nnz of row i). The step on yᵢ maximizes
−φ*(β) + β·aᵢᵀx − ‖aᵢ‖²(β − yᵢ)²/(2·l2·n) exactly (closed form for squared and smoothed
hinge; for logistic a safeguarded Newton solve, inexact while far from the optimum as in
liblinear: see ``INNER_TOL_START``), or with ``step="fixed"`` takes the fixed step of
Faceoff §7 in Quartz's form (Qu et al. 2015), yᵢ += (θ/qᵢ)(φ'(aᵢᵀx) − yᵢ) with
θ = minⱼ qⱼ·l2·n/(β·vⱼ + l2·n): a convex combination, so yᵢ stays in the domain of φ*.
Sampling: uniform, importance qᵢ ∝ β·vᵢ + l2·n with vᵢ = ‖aᵢ‖² (eq. (14)), or a random
permutation per epoch (as liblinear and lightning do; outside the paper's analysis).
``accelerate="catalyst"`` runs it inside Catalyst's proximal point loop (:class:`DualCD`).
``shrinking="on"`` (permutation passes, smoothed hinge) leaves out of the passes the rows
whose dual variable is held at a bound of its box (:func:`_dual_cd_shrinking`). ``auto``
(the default of the three) is chosen from the problem by :func:`resolve`, in the solver's
set-up (O(1): the row norms are the problem's), and recorded in each trace point's extras.

K-class problems (X of shape (d, K), Y of shape (n, K)) run the same algorithm with one
draw of a row serving the K classes: one-vs-rest (:func:`_dual_cd_ovr`, every option;
shrinking per row, :func:`_dual_cd_ovr_shrinking`) and multinomial
(:func:`_dual_cd_multinomial`, the row's step on its simplex; shrinking runs as off: no
box).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import NamedTuple

import numpy as np
from numba import njit

from faceoff.solvers.algorithms.dual_cd import CATALYST_CONDITION, Params
from faceoff.solvers.class_rows import class_axpy, class_axpy_soft, class_dot
from faceoff.solvers.driver import run_chunked
from faceoff.solvers.losses import (
    EXACT_TOL,
    dual_box_violation,
    dual_step,
    loss_deriv,
    prefetch_warm,
    simplex_step,
    warm_starts,
)
from faceoff.solvers.penalties import ElasticNet, soft_threshold
from faceoff.solvers.prefetch import prefetch, prefetch_draw, prefetch_row, prefetch_span
from faceoff.solvers.problem import Problem
from faceoff.solvers.sampling import LOOKAHEAD, Sampler, next_coordinate, shuffle_prefix
from faceoff.solvers.spec import AUTO, AUTO_EXTRA
from faceoff.solvers.trace import Recorder


class DualState(NamedTuple):
    """The iterate and per-coordinate steps of a dual_cd run (a Numba tuple).

    y : array, shape (n_samples,), or (n_samples, K) for a K-class problem
    z, x : arrays, shape (n_features,), or (n_features, K)
        z = −Aᵀy/n (kept only when l1 > 0; a K-class run's has no rows otherwise) and
        x = ∇g*(z).
    inv_s : array, shape (n_samples,)
        ‖aᵢ‖²/(l2·n), the curvature of the exact step.
    warm : array, shape of y
        The exact step's warm starts (:func:`~faceoff.solvers.losses.dual_step`).
    fixed_step : bool
        Quartz's fixed step yᵢ += ηᵢ(φ'(aᵢᵀx) − yᵢ) instead of the exact one.
    eta : array, shape (n_samples,)
        θ/qᵢ of the fixed step.
    inner : array, shape (3,), or (K, 3) for a K-class problem (one row a class)
        The exact step's tolerance (logistic: :func:`~faceoff.solvers.losses.dual_step`),
        and the Newton iterations and steps counted since it was last reviewed.
    """

    y: np.ndarray
    z: np.ndarray
    x: np.ndarray
    inv_s: np.ndarray
    warm: np.ndarray
    fixed_step: bool
    eta: np.ndarray
    inner: np.ndarray


# The logistic step's inexact inner solve, as liblinear's dual solver (Yu, Huang and Lin
# 2011, §4): start at a loose tolerance and tighten it ten-fold after each n steps that
# needed at most n/10 Newton iterations, down to the exact step's.
INNER_TOL_START = 1e-2
INNER_TOL_MIN = EXACT_TOL


@njit(cache=True, _nrt=False)
def _move(indices, values, start, end, coef, l1, inv_l2, z, x):
    """z += coef·aᵢ (aᵢ: A's CSR [start, end)) and x = ∇g*(z) = soft(z, l1)/l2 along aᵢ; with
    l1 = 0, x = z/l2, so z is not kept and x += coef·aᵢ/l2. Compiled without reference
    counting (it allocates nothing), so the call, which LLVM inlines, costs nothing."""
    if l1 > 0.0:
        for k in range(start, end):
            j = indices[k]
            z[j] += coef * values[k]
            x[j] = soft_threshold(z[j], l1) * inv_l2
    else:
        coef *= inv_l2
        for k in range(start, end):
            x[indices[k]] += coef * values[k]


@njit(cache=True)
def _dual_cd(data, loss, penalty, sampler, state, n_updates):
    """Run ``n_updates`` steps of Algorithm 2 on the CSR arrays of A; returns nnz visited."""
    indptr, indices, values = data.csr
    b = data.b
    l1, l2 = penalty
    y, z, x, inv_s, warm, fixed_step, eta, inner = state
    n_samples = b.shape[0]
    inv_l2 = 1.0 / l2
    visited = 0
    tol, newton, steps = inner[0], inner[1], inner[2]
    draws = sampler.ring[0]  # the sampler's step counter, kept in a register
    for _ in range(n_updates):
        i, ahead, half = next_coordinate(sampler, draws)
        draws += 1
        prefetch_draw(indptr, indices, values, ahead, half)
        prefetch(y, half)
        prefetch(b, half)
        prefetch(inv_s, half)
        prefetch_warm(loss, warm, half)
        start, end = indptr[i], indptr[i + 1]
        zi = 0.0
        for k in range(start, end):  # aᵢᵀx
            zi += values[k] * x[indices[k]]
        if fixed_step:  # Quartz's step (Faceoff §7)
            y_new = y[i] + eta[i] * (loss_deriv(loss, zi, b[i]) - y[i])
        else:  # the exact coordinate maximization
            y_new, iterations = dual_step(loss, warm, i, y[i], zi, b[i], inv_s[i], tol)
            newton += iterations
            steps += 1
            if steps >= n_samples:  # review the tolerance once per n steps
                if newton <= 0.1 * n_samples:
                    tol = max(0.1 * tol, INNER_TOL_MIN)
                newton = steps = 0.0
        delta = y_new - y[i]
        if delta != 0.0:
            y[i] = y_new
            _move(indices, values, start, end, -delta / n_samples, l1, inv_l2, z, x)
        visited += end - start
    sampler.ring[0] = draws
    inner[0], inner[1], inner[2] = tol, newton, steps
    return visited


# The shrinking state (a float array): the active rows active[:SIZE], the position in the
# current pass, last pass's largest and smallest projected gradients over the active rows
# (the shrinking thresholds), this pass's so far, and the settling tolerance.
SIZE, POS, PG_MAX_OLD, PG_MIN_OLD, PG_MAX, PG_MIN, SETTLE = range(7)
# liblinear tightens its stopping tolerance; Faceoff's stop rules decide when to stop, so
# the tolerance at which all rows come back starts loose and tightens ten-fold each time
# the full set settles within it.
SETTLE_START = 1.0
SETTLE_MIN = 1e-15


def shrink_state(n: int) -> np.ndarray:
    """The shrinking state of a run that has not started: all n rows active, a pass just
    ended that can neither shrink nor settle anything."""
    state = np.empty(7)
    state[SIZE] = state[POS] = n
    state[PG_MAX_OLD] = state[PG_MAX] = math.inf
    state[PG_MIN_OLD] = state[PG_MIN] = -math.inf
    state[SETTLE] = SETTLE_START
    return state


@njit(cache=True)
def _dual_cd_shrinking(data, loss, penalty, rng, state, active, shrink, n_updates):
    """``n_updates`` exact steps of permutation passes over the active rows, with liblinear's
    shrinking (Hsieh et al. 2008, Algorithm 3 with §3.2; Fan et al. 2008, App. B) for the
    box t = −b·y ∈ [0, 1] of the smoothed hinge's dual: with g the coordinate's dual
    gradient in t and PG its projection (g inside, max(g, 0) at 0, min(g, 0) at 1), a row
    at 0 with g < last pass's min PG, or at 1 with g > its max PG, leaves the active set
    (it is swapped to the end); when a pass ends with max PG − min PG ≤ the settling
    tolerance, every row comes back (the tolerance tightens ten-fold when they were all
    active already). A shrunk row still costs its aᵢᵀx. The step is :func:`_dual_cd`'s;
    the state lives in ``active`` and ``shrink``, so runs are the same however they are
    chunked. Returns nnz visited."""
    indptr, indices, values = data.csr
    b, (l1, l2) = data.b, penalty
    y, z, x, inv_s, warm = state.y, state.z, state.x, state.inv_s, state.warm
    n_samples, inv_l2, visited = b.shape[0], 1.0 / l2, 0
    size, pos = int(shrink[SIZE]), int(shrink[POS])
    pg_max_old, pg_min_old = shrink[PG_MAX_OLD], shrink[PG_MIN_OLD]
    pg_max, pg_min, settle = shrink[PG_MAX], shrink[PG_MIN], shrink[SETTLE]
    for _ in range(n_updates):
        if pos >= size:  # a pass ended: settle or shrink, then a fresh random order
            if pg_max - pg_min <= settle:
                if size == n_samples:
                    settle = max(0.1 * settle, SETTLE_MIN)
                size = n_samples
                pg_max_old, pg_min_old = math.inf, -math.inf
            else:
                pg_max_old = pg_max if pg_max > 0.0 else math.inf
                pg_min_old = pg_min if pg_min < 0.0 else -math.inf
            pg_max, pg_min = -math.inf, math.inf
            shuffle_prefix(rng, active, size)
            pos = 0
        if pos + LOOKAHEAD < size:  # as next_coordinate's draws ahead
            prefetch(indptr, active[pos + LOOKAHEAD])
        if pos + LOOKAHEAD // 2 < size:
            half = active[pos + LOOKAHEAD // 2]
            prefetch_row(indptr, indices, values, half)
            prefetch(y, half)
            prefetch(b, half)
            prefetch(inv_s, half)
        i = active[pos]
        start, end = indptr[i], indptr[i + 1]
        zi = 0.0
        for k in range(start, end):  # aᵢᵀx
            zi += values[k] * x[indices[k]]
        visited += end - start
        g, side = dual_box_violation(loss, y[i], zi, b[i])
        projected = g
        if side < 0:
            if g < pg_min_old:  # held at 0: leave it out
                size -= 1
                active[pos], active[size] = active[size], active[pos]
                continue
            projected = max(g, 0.0)
        elif side > 0:
            if g > pg_max_old:  # held at 1
                size -= 1
                active[pos], active[size] = active[size], active[pos]
                continue
            projected = min(g, 0.0)
        pg_max = max(pg_max, projected)
        pg_min = min(pg_min, projected)
        pos += 1
        y_new = dual_step(loss, warm, i, y[i], zi, b[i], inv_s[i])[0]
        delta = y_new - y[i]
        if delta != 0.0:
            y[i] = y_new
            _move(indices, values, start, end, -delta / n_samples, l1, inv_l2, z, x)
    shrink[SIZE], shrink[POS] = size, pos
    shrink[PG_MAX_OLD], shrink[PG_MIN_OLD] = pg_max_old, pg_min_old
    shrink[PG_MAX], shrink[PG_MIN], shrink[SETTLE] = pg_max, pg_min, settle
    return visited


# ---------------------------------------------------------------- K-class problems
#
# X (d, K) and Y (n, K) are C-ordered: a row of X, the K coefficients of one feature, is one
# read. A step draws a row i as the binary kernel does and serves the K classes with one
# pass over aᵢ for its K margins Xᵀaᵢ and one pass updating the rows of X that aᵢ indexes,
# only in the classes whose dual variable moved (solvers.class_rows: the K classes of a row
# of X as vectors).


@njit(cache=True, _nrt=False)
def _move_classes(indices, values, start, end, change, penalty, Z, X):
    """Z −= aᵢ·Δyᵢᵀ/n and X = ∇g*(Z) along aᵢ (A's CSR [start, end)), in the classes whose
    dual variable moved: :func:`_move` for K classes in one pass. ``change`` holds −Δyᵢₖ/n
    (0 for a class that did not move: it is not touched), scaled by 1/l2 in place when
    l1 = 0 (Z is not kept then: X = Z/l2)."""
    l1, l2 = penalty
    K = X.shape[1]
    if l1 > 0.0:
        class_axpy_soft(
            indices, values, start, end, Z.reshape(-1), X.reshape(-1), K, change, penalty
        )
        return
    inv_l2 = 1.0 / l2
    for c in range(K):
        change[c] *= inv_l2
    class_axpy(indices, values, start, end, X.reshape(-1), K, change)


@njit(cache=True)
def _dual_cd_ovr(data, loss, penalty, sampler, state, n_updates):
    """``n_updates`` steps of Algorithm 2 on the one-vs-rest problem (K binary problems on
    the same rows, bᵢₖ = +1 if sample i is of class k, −1 otherwise): one draw of a row i
    serves the K classes — the K margins Xᵀaᵢ from one pass over aᵢ, K 1-D steps (the
    binary kernel's, exact or fixed), then one pass over aᵢ updating the classes whose
    dual variable moved (the others are not touched). Each class runs the binary kernel's
    arithmetic on its labels, the inexact logistic step's tolerance kept per class
    (``inner`` of shape (K, 3)): a class's column is the binary run's, the same numbers
    (tested). Returns nnz visited (a row counts once, whatever K)."""
    indptr, indices, values = data.csr
    labels = data.b
    Y, Z, X, inv_s, warm, fixed_step, eta, inner = state
    n_samples, K = Y.shape
    flat, y_flat, warm = X.reshape(-1), Y.reshape(-1), warm.reshape(-1)  # views
    margins = np.empty(K)
    change = np.empty(K)  # −Δyᵢₖ/n, 0 for a class that did not move
    visited = 0
    draws = sampler.ring[0]  # the sampler's step counter, kept in a register
    for _ in range(n_updates):
        i, ahead, half = next_coordinate(sampler, draws)
        draws += 1
        prefetch_draw(indptr, indices, values, ahead, half)
        prefetch_span(y_flat, half * K, (half + 1) * K)
        prefetch(labels, half)
        prefetch(inv_s, half)
        prefetch_warm(loss, warm, half * K)
        start, end = indptr[i], indptr[i + 1]
        class_dot(indices, values, start, end, flat, K, margins)  # margins = Xᵀaᵢ
        label = labels[i]
        moved = False
        for c in range(K):
            b = 1.0 if c == label else -1.0
            y_old = Y[i, c]
            if fixed_step:  # Quartz's step (Faceoff §7)
                y_new = y_old + eta[i] * (loss_deriv(loss, margins[c], b) - y_old)
            else:  # the exact coordinate maximization, at class c's tolerance
                y_new, iterations = dual_step(
                    loss, warm, i * K + c, y_old, margins[c], b, inv_s[i], inner[c, 0]
                )
                _review_tolerance(inner, c, iterations, n_samples)
            change[c] = 0.0
            if y_new != y_old:
                Y[i, c] = y_new
                change[c] = -(y_new - y_old) / n_samples
                moved = True
        if moved:
            _move_classes(indices, values, start, end, change, penalty, Z, X)
        visited += end - start
    sampler.ring[0] = draws
    return visited


@njit(cache=True, _nrt=False)
def _review_tolerance(inner, c, iterations, n_samples):
    """Count class c's step (``inner[c]`` = tolerance, Newton iterations, steps) and review
    its tolerance once per n steps, as :func:`_dual_cd` does."""
    inner[c, 1] += iterations
    inner[c, 2] += 1
    if inner[c, 2] >= n_samples:
        if inner[c, 1] <= 0.1 * n_samples:
            inner[c, 0] = max(0.1 * inner[c, 0], INNER_TOL_MIN)
        inner[c, 1] = inner[c, 2] = 0.0


@njit(cache=True)
def _dual_cd_ovr_shrinking(data, loss, penalty, rng, state, active, shrink, n_updates):
    """``n_updates`` exact steps of permutation passes over the active rows of the
    one-vs-rest problem, with :func:`_dual_cd_shrinking`'s shrinking applied per row: a row
    leaves the active set when each of its K pairs (i, k) sits at a bound of its box and is
    pushed outward beyond last pass's largest violation (the thresholds taken over all
    pairs, as for one problem: the K problems' sum); a row that stays takes the K steps of
    :func:`_dual_cd_ovr`. Per row, not per pair: what a step costs is its passes over aᵢ,
    which serve the K classes at once; a pair held at a bound inside an active row moves no
    column of X already (it is not a class that moved), so leaving out single pairs would
    save only their 1-D steps. Returns nnz visited."""
    indptr, indices, values = data.csr
    labels = data.b
    Y, Z, X, inv_s, warm = state.y, state.z, state.x, state.inv_s, state.warm
    n_samples, K = Y.shape
    flat, y_flat, warm = X.reshape(-1), Y.reshape(-1), warm.reshape(-1)  # views
    margins = np.empty(K)
    change = np.empty(K)
    visited = 0
    size, pos = int(shrink[SIZE]), int(shrink[POS])
    pg_max_old, pg_min_old = shrink[PG_MAX_OLD], shrink[PG_MIN_OLD]
    pg_max, pg_min, settle = shrink[PG_MAX], shrink[PG_MIN], shrink[SETTLE]
    for _ in range(n_updates):
        if pos >= size:  # a pass ended: settle or shrink, then a fresh random order
            if pg_max - pg_min <= settle:
                if size == n_samples:
                    settle = max(0.1 * settle, SETTLE_MIN)
                size = n_samples
                pg_max_old, pg_min_old = math.inf, -math.inf
            else:
                pg_max_old = pg_max if pg_max > 0.0 else math.inf
                pg_min_old = pg_min if pg_min < 0.0 else -math.inf
            pg_max, pg_min = -math.inf, math.inf
            shuffle_prefix(rng, active, size)
            pos = 0
        if pos + LOOKAHEAD < size:
            prefetch(indptr, active[pos + LOOKAHEAD])
        if pos + LOOKAHEAD // 2 < size:
            half = active[pos + LOOKAHEAD // 2]
            prefetch_row(indptr, indices, values, half)
            prefetch_span(y_flat, half * K, (half + 1) * K)
            prefetch(labels, half)
            prefetch(inv_s, half)
        i = active[pos]
        start, end = indptr[i], indptr[i + 1]
        class_dot(indices, values, start, end, flat, K, margins)
        visited += end - start
        label = labels[i]
        held = 0  # pairs at a bound and pushed outward
        row_max, row_min = -math.inf, math.inf
        for c in range(K):
            b = 1.0 if c == label else -1.0
            g, side = dual_box_violation(loss, Y[i, c], margins[c], b)
            projected = g
            if side < 0:
                held += g < pg_min_old
                projected = max(g, 0.0)
            elif side > 0:
                held += g > pg_max_old
                projected = min(g, 0.0)
            row_max = max(row_max, projected)
            row_min = min(row_min, projected)
        if held == K:  # every pair held: leave the row out
            size -= 1
            active[pos], active[size] = active[size], active[pos]
            continue
        pg_max = max(pg_max, row_max)
        pg_min = min(pg_min, row_min)
        pos += 1
        moved = False
        for c in range(K):
            b = 1.0 if c == label else -1.0
            y_old = Y[i, c]
            y_new = dual_step(loss, warm, i * K + c, y_old, margins[c], b, inv_s[i])[0]
            change[c] = 0.0
            if y_new != y_old:
                Y[i, c] = y_new
                change[c] = -(y_new - y_old) / n_samples
                moved = True
        if moved:
            _move_classes(indices, values, start, end, change, penalty, Z, X)
    shrink[SIZE], shrink[POS] = size, pos
    shrink[PG_MAX_OLD], shrink[PG_MIN_OLD] = pg_max_old, pg_min_old
    shrink[PG_MAX], shrink[PG_MIN], shrink[SETTLE] = pg_max, pg_min, settle
    return visited


@njit(cache=True)
def _dual_cd_multinomial(data, loss, penalty, sampler, state, n_updates):
    """``n_updates`` steps of Algorithm 2 on the multinomial problem, whose dual variables
    of a row, yᵢ ∈ Δ − e_{bᵢ}, move together: the K margins zᵢ = Xᵀaᵢ from one pass over
    aᵢ, then the row's exact step on the simplex (prox-SDCA for the multiclass logistic,
    Shalev-Shwartz & Zhang 2014, §6: p = yᵢ + e_{bᵢ} maximizes
    −Σ p log p + ⟨p, zᵢ⟩ − s/2‖p − p₀‖², s = ‖aᵢ‖²/(l2·n),
    :func:`~faceoff.solvers.losses.simplex_step`), or with ``fixed_step`` Quartz's step in
    its K-dimensional form yᵢ += ηᵢ(∇φ(zᵢ) − yᵢ), ∇φ(zᵢ) = softmax(zᵢ) − e_{bᵢ} (a convex
    combination of two points of Δ − e_{bᵢ}: it stays there; θ with the multinomial's
    β = 1/2), then one pass over aᵢ updating X = ∇g*(−AᵀY/n) in the classes that moved.
    Returns nnz visited."""
    indptr, indices, values = data.csr
    labels = data.b
    Y, Z, X, inv_s, _, fixed_step, eta, _ = state
    n_samples, K = Y.shape
    flat, y_flat = X.reshape(-1), Y.reshape(-1)  # views
    margins = np.empty(K)
    p = np.empty(K)
    scratch = np.empty(K)
    change = np.empty(K)
    visited = 0
    draws = sampler.ring[0]  # the sampler's step counter, kept in a register
    for _ in range(n_updates):
        i, ahead, half = next_coordinate(sampler, draws)
        draws += 1
        prefetch_draw(indptr, indices, values, ahead, half)
        prefetch_span(y_flat, half * K, (half + 1) * K)
        prefetch(labels, half)
        prefetch(inv_s, half)
        start, end = indptr[i], indptr[i + 1]
        class_dot(indices, values, start, end, flat, K, margins)
        label = labels[i]
        if fixed_step:  # p ← p + η(softmax(zᵢ) − p), scratch ← softmax(zᵢ)
            top = -math.inf
            for c in range(K):
                top = max(top, margins[c])
            total = 0.0
            for c in range(K):
                scratch[c] = math.exp(margins[c] - top)
                total += scratch[c]
            for c in range(K):
                y_old = Y[i, c]
                grad = scratch[c] / total - (1.0 if c == label else 0.0)
                p[c] = y_old + eta[i] * (grad - y_old)
        else:  # the exact step on the simplex, from p₀ = yᵢ + e_{bᵢ}
            for c in range(K):
                p[c] = Y[i, c]
            p[label] += 1.0
            simplex_step(loss, margins, p, inv_s[i], scratch, EXACT_TOL)
            p[label] -= 1.0
        moved = False
        for c in range(K):  # p holds the new yᵢ
            y_old = Y[i, c]
            change[c] = 0.0
            if p[c] != y_old:
                Y[i, c] = p[c]
                change[c] = -(p[c] - y_old) / n_samples
                moved = True
        if moved:
            _move_classes(indices, values, start, end, change, penalty, Z, X)
        visited += end - start
    sampler.ring[0] = draws
    return visited


class DualCD:
    """State of one dual_cd run (see module docstring).

    With ``accelerate="catalyst"`` the run is Catalyst (Lin, Mairal and Harchaoui 2018,
    Algorithm 1 with μ = l2 > 0, so α_k = √q and β_k = (1 − √q)/(1 + √q), q = μ/(μ + κ)):
    each outer step approximately solves min P(x) + κ/2‖x − c‖² by ``CATALYST_EPOCHS``
    epochs of this same dual ascent, warm-started at the previous dual point, then
    extrapolates the centre c_k = x_k + β(x_k − x_{k−1}). The subproblem is the original one
    with l2 + κ and the linear term −κcᵀx, so the kernel runs unchanged on the penalty
    (l1, l2 + κ) with z = −Aᵀy/n + κc; moving the centre costs O(d). The momentum is
    dropped for one step (adaptive restart) when x_k − x_{k−1} goes uphill on the Moreau
    envelope, whose gradient is κ(c − x_k), or when that gradient grew: one epoch is an
    inexact subproblem solve, and without the restart the momentum amplified its error
    (rcv1 subset, squared loss, l2 = 1e-6: the gap reached 1e+255). A trace point certifies
    the original problem: P at the subproblem's x and D at its y, whose optimum is the
    original dual optimum once c = x*.
    """

    def __init__(
        self,
        problem: Problem,
        sampling: str,
        step: str,
        seed: int,
        accelerate: str = "none",
        shrinking: str = "off",
    ) -> None:
        data = problem.data
        self.problem = problem
        n = data.n_samples
        l1, l2 = problem.penalty.params
        beta = problem.smoothness  # the loss's; 1/2 for the multinomial form
        self.kappa = catalyst_kappa(problem) if accelerate == "catalyst" else 0.0
        l2 = l2 + self.kappa  # the subproblem's l2
        self.subproblem = ElasticNet(l1, l2)
        self.n_coords = n
        weights = beta * data.row_sq_norms + l2 * n if sampling == "importance" else None
        self.sampler = Sampler(n, sampling, seed, weights)
        q = self.sampler.probabilities
        self.nnz_per_update = float(q @ data.row_nnz)
        theta = float(np.min(q * l2 * n / (beta * data.row_sq_norms + l2 * n)))
        K = problem.n_classes
        binary = problem.multiclass is None
        inner = np.array([INNER_TOL_START, 0.0, 0.0])
        self.state = DualState(
            y=np.zeros(problem.dual_shape),
            # z is kept when l1 > 0 only (a binary run allocates it anyway)
            z=np.zeros(problem.coef_shape if binary or l1 > 0.0 else (0, K)),
            x=np.zeros(problem.coef_shape),
            inv_s=data.row_sq_norms / (l2 * n),
            warm=warm_starts(n * K).reshape(problem.dual_shape),
            fixed_step=step == "fixed",
            eta=theta / q,
            inner=inner if binary else np.tile(inner, (K, 1)),  # per class (one-vs-rest)
        )
        self.y = self.state.y
        self.chosen: dict[str, str] = {}  # what auto chose (resolve), for the extras
        self.kernel = _KERNELS[problem.multiclass]
        # the other losses' dual variables never sit at a bound: nothing to shrink (the
        # multinomial form's, the logistic's, neither)
        self.shrinking = shrinking == "on" and problem.loss.dual_box
        if self.shrinking:
            self.active = np.arange(n, dtype=np.int64)
            self.shrink = shrink_state(n)
        if self.kappa > 0.0:
            root_q = math.sqrt(problem.penalty.l2 / l2)
            self.momentum = (1.0 - root_q) / (1.0 + root_q)
            self.centre = np.zeros(problem.coef_shape)
            self.previous = np.zeros(problem.coef_shape)  # x_{k−1}
            self.residual = math.inf  # ‖c_{k−1} − x_{k−1}‖²
            self.left = CATALYST_EPOCHS * n  # steps left in this subproblem

    def _kernel(self, n_updates: int) -> int:
        problem = self.problem
        plain, shrinking = self.kernel
        if self.shrinking:
            return shrinking(
                problem.rows,
                problem.loss.params,
                self.subproblem.params,
                self.sampler.rng_state,
                self.state,
                self.active,
                self.shrink,
                n_updates,
            )
        return plain(
            problem.rows,
            problem.loss.params,
            self.subproblem.params,
            self.sampler.state,
            self.state,
            n_updates,
        )

    def run(self, n_updates: int) -> int:
        if self.kappa == 0.0:
            return self._kernel(n_updates)
        visited = 0
        while n_updates > 0:
            steps = min(n_updates, self.left)
            visited += self._kernel(steps)
            n_updates -= steps
            self.left -= steps
            if self.left == 0:
                self._extrapolate()
                self.left = CATALYST_EPOCHS * self.n_coords
        return visited

    def _extrapolate(self) -> None:
        """Catalyst's outer step (:func:`_catalyst_step`)."""
        self.residual = _catalyst_step(  # on X and Z of a K-class run as vectors
            self.state.x.reshape(-1),
            self.state.z.reshape(-1),
            self.centre.reshape(-1),
            self.previous.reshape(-1),
            self.kappa,
            self.momentum,
            self.subproblem.params,
            self.residual,
        )

    def iterate(self) -> dict:
        # x = ∇g*(z), kept: one pass a point (Catalyst: the subproblem's g; P(x) and D(y)
        # are still those of the original problem)
        return {"y": self.y, "x": self.state.x}

    def extras(self) -> dict:
        extras: dict = {"nnz_y": int(np.count_nonzero(self.y))}
        if self.shrinking:
            extras["active_rows"] = int(self.shrink[SIZE])
        if self.chosen:
            extras[AUTO_EXTRA] = self.chosen
        return extras


# Catalyst's inner budget: epochs of dual ascent per outer step (warm-started).
CATALYST_EPOCHS = 1


@njit(cache=True, _nrt=False)
def _catalyst_step(x, z, centre, previous, kappa, momentum, penalty, residual):
    """Catalyst's outer step, in place: x_k = x is the subproblem's x; the centre moves to
    c_k = x_k + β(x_k − x_{k−1}), shifting z (and x = ∇g*(z)) by κ(c_k − c_{k−1}), and
    ``previous`` becomes x_k. Adaptive restart (O'Donoghue and Candès 2015, gradient
    scheme): κ(c − x_k) is the gradient of the Moreau envelope at c; no momentum (β = 0)
    when the step x_k − x_{k−1} goes uphill on it, or when that gradient grew beyond
    ``residual`` = ‖c_{k−1} − x_{k−1}‖² (an inexact subproblem solve: momentum would amplify
    it). Two O(d) passes; returns ‖c_{k−1} − x_k‖², the next call's ``residual``."""
    l1, l2 = penalty
    uphill = pulled = 0.0
    for j in range(x.shape[0]):
        pull = centre[j] - x[j]
        pulled += pull * pull
        uphill += pull * (x[j] - previous[j])
    beta = 0.0 if uphill > 0.0 or pulled > residual else momentum
    for j in range(x.shape[0]):
        current = x[j]
        moved = current + beta * (current - previous[j])
        shift = kappa * (moved - centre[j])
        previous[j] = current
        centre[j] = moved
        if l1 > 0.0:
            z[j] += shift
            x[j] = soft_threshold(z[j], l1) / l2
        else:  # x = z/l2 (z is not kept)
            x[j] = current + shift / l2
    return pulled


def catalyst_kappa(problem: Problem) -> float:
    """Catalyst's κ for a randomized incremental method: β·R²/(n + 1) − μ with R² the mean
    ‖aᵢ‖² and μ = l2 (Lin, Mairal and Harchaoui 2018, §5); 0 (no acceleration) when the
    problem is already that well conditioned."""
    data = problem.data
    n = data.n_samples
    radius = float(np.mean(data.row_sq_norms)) if n else 0.0
    return max(problem.smoothness * radius / (n + 1) - problem.penalty.l2, 0.0)


# the (plain, shrinking) kernels of each form (None: a binary or regression problem); the
# multinomial form never shrinks (its loss has no box)
_KERNELS = {
    None: (_dual_cd, _dual_cd_shrinking),
    "ovr": (_dual_cd_ovr, _dual_cd_ovr_shrinking),
    "multinomial": (_dual_cd_multinomial, None),
}


def condition(problem: Problem) -> float:
    """β·mean‖aᵢ‖²/(l2·(n + 1)): κ/l2 + 1 of :func:`catalyst_kappa` (≤ 1: κ = 0)."""
    n = problem.data.n_samples
    radius = float(np.mean(problem.data.row_sq_norms)) if n else 0.0
    return problem.smoothness * radius / (problem.penalty.l2 * (n + 1))


def resolve(problem: Problem, params: Params) -> tuple[Params, dict[str, str]]:
    """``params`` with each ``auto`` replaced by the problem's choice, and those choices.

    sampling: permutation (the fastest on every cell of bench part 1). accelerate: catalyst
    when n ≥ d and :func:`condition` ≥ CATALYST_CONDITION, unless shrinking is on (with
    n < d the plain passes were as fast at condition numbers up to 60: news20). shrinking:
    on for a loss whose dual variables live in a box (the smoothed hinge; not the
    multinomial form) when the passes are permutation passes with the exact step and no
    Catalyst, else off. Explicit values are kept as given.
    """
    chosen: dict[str, str] = {}
    if params.sampling == AUTO:
        chosen["sampling"] = "permutation"
    if params.accelerate == AUTO:
        data = problem.data
        pays = data.n_samples >= data.n_features and condition(problem) >= CATALYST_CONDITION
        chosen["accelerate"] = "catalyst" if pays and params.shrinking != "on" else "none"
    if params.shrinking == AUTO:
        merged = replace(params, **chosen)
        boxed = problem.loss.dual_box and problem.multiclass != "multinomial"
        fits = (merged.sampling, merged.step, merged.accelerate) == ("permutation", "exact", "none")
        chosen["shrinking"] = "on" if boxed and fits else "off"
    return replace(params, **chosen), chosen


def solve(problem: Problem, params: Params, recorder: Recorder, seed: int) -> str:
    params, chosen = resolve(problem, params)
    method = DualCD(
        problem,
        params.sampling,
        params.step,
        seed,
        params.accelerate,
        params.shrinking,
    )
    method.chosen = chosen
    return run_chunked(method, recorder, problem.data.nnz)
