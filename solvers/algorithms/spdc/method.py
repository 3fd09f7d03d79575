"""SPDC: stochastic primal-dual coordinate method (Zhang & Xiao, JMLR), Algorithms 1-3 and §6.

SPDC approaches the saddle point of f(x, y) = g(x) + 1/n Σ (yᵢ⟨aᵢ, x⟩ − φ*(yᵢ)) (eq. (4)).
An iteration draws a set K of m dual coordinates (one per block of a fixed partition of the
rows, §2; m = 1 is Algorithm 1, m > 1 Algorithm 2), each drawn with inclusion probability
pₖ (uniform, or Algorithm 3's weights (20)), and with u = Aᵀy/n and x̄ = x + θ(x − x_prev):

    yₖ ← argmax_β {β⟨aₖ, x̄⟩ − φ*(β) − pₖn/(2σm)·(β − yₖ)²}                  (5), (9), (21)
    x  ← prox_{τg}(x − τ(u + Σₖ δₖaₖ/(n·pₖ))),   u ← u + Σₖ δₖaₖ/n,      (6)-(7), (10), (22)-(23)
    x̄  ← x + θ(x − x_prev)                                                            (8)

with δₖ the change of yₖ. For uniform sampling with m | n, pₖ = m/n and this is exactly
(9)-(10); with blocks of unequal size pₖ = 1/|block| keeps the primal step unbiased. The
dual step is :func:`faceoff.solvers.losses.loss_dual_step` with ``inv_s = pₖn/(σm)``
(closed form for
squared and smoothed hinge, safeguarded Newton for logistic).

Parameters (SPDC's λ is our l2, its γ = 1/β the strong convexity of φ*): uniform sampling
takes τ, σ, θ from eq. (12) with R = maxᵢ‖aᵢ‖; weighted sampling from eq. (24) with
R_α = ((1 − α)/R + α/R̄)⁻¹, R̄ = meanᵢ‖aᵢ‖, and α from eq. (25). For weighted sampling with
m > 1 the paper gives no parameters ("we omit the proof details"); we use (24) and (25)
with n replaced by n/m and R̄ by max(R̄, mR/n), the quantity §4 says the rate depends on.

Sparse data (§6): off the supports of the sampled rows a coordinate only undergoes
xⱼ ← prox_{τg}(xⱼ − τuⱼ) with uⱼ constant. For l2 (eq. (36)) that map contracts every
coordinate toward its own fixed point −uⱼ/λ by the same factor r = 1/(1 + τλ), so x is
held as xⱼ = S·vⱼ − uⱼ/λ with one global S = rᵗ (:func:`_spdc_l2`): a read costs two
multiply-adds and nothing is caught up. For l1 + l2 a coordinate is brought up to date
just in time, when a sampled row next reads it: the piecewise-affine walk of Cases I-III
(eqs. (38)-(44)) — the same map as SAGA's lazy step, in closed form in
:mod:`faceoff.solvers.lazy_prox`, shared by both — with x, x_prev (for x̄), u and the
iteration of the last update in one row of a (d, 4) array (:func:`_spdc_lazy`). An
iteration costs O(nnz of the sampled rows), and so does a run of iterations: the state
stays lazy between runs (the iteration count goes on, ``done``), and only reading x
(:attr:`SPDC.x`, for a trace point) brings a copy of every coordinate up to date: O(d)
once a recorded point, not once a run (the driver ends a run at every point of its grid,
30 a decade, recorded or not; on RB features, d = 346,178 and K = 10, catching all of X up
at the end of each run cost more than the iterations between them).
``updates="dense"`` runs the same iteration with O(d) vector updates, a reference for tests.

K-class problems (one job; X of shape (n_features, K), Y of shape (n_samples, K)): a drawn
row is read once and serves its K dual coordinates. The K scores ū = X̄ᵀaₖ come from one
pass over aₖ, the K dual steps follow, and one more pass steps the K coefficients of each
feature of the row (a feature's lazy state — the iteration it is at — is shared by its K
coefficients, so a row's read catches all K up with one 1 − rᵐ). The primal side is the
binary one column by column (g is separable), so the l2 scaled form and the Cases I-III
walks apply to each column unchanged (:func:`_spdc_k_lazy`, :func:`_spdc_k_l2`,
:func:`_spdc_k_dense`). The dual step of a row (:func:`_dual_row`):

* one-vs-rest: the binary step (5) for each class, yₖ꜀ with label bₖ꜀ = +1 if the row is of
  class c else −1 — K independent SPDC runs sharing A and the draws, so an OvR run's X
  equals the K binary runs' columns (up to rounding);
* multinomial: yₖ ← argmax_{y ∈ R^K} {⟨y, ū⟩ − φ*(y) − pₖn/(2σm)·‖y − yₖ‖²} with
  φ*(y) = Σ꜀ p꜀ log p꜀ on p = y + e_{label} ∈ Δ. Writing the objective in p,
  ⟨y, ū⟩ = ⟨p, ū⟩ − ū_label (a constant) and ‖y − yₖ‖² = ‖p − p₀‖² with p₀ = yₖ + e_label,
  so p maximizes −Σ p log p + ⟨p, ū⟩ − s/2‖p − p₀‖² over Δ with s = pₖn/(σm) = ``inv_s``:
  exactly :func:`faceoff.solvers.losses.simplex_step` (z = ū, s = ``inv_s``), and
  yₖ = p − e_label. SPDC's analysis carries over with a block dual coordinate: the
  coupling ⟨yₖ, Xᵀaₖ⟩ is bounded by ‖aₖ‖·‖X‖_F·‖yₖ‖ (R = maxᵢ‖aᵢ‖ as before) and φ* is
  γ-strongly convex with γ = 1/β = 2 (β = 1/2, ``problem.smoothness``: on the simplex's
  directions Σ v = 0, vᵀdiag(1/p)v ≥ ‖v‖₁² ≥ 2‖v‖²), so eq. (12) gives τ, σ, θ with γ = 2.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from faceoff.solvers.algorithms.spdc import Params
from faceoff.solvers.driver import PrimalMethod, run_chunked
from faceoff.solvers.lazy_prox import (
    RESCALE_BELOW,
    TABLE_BITS,
    TABLE_LOW,
    TABLE_SIZE,
    V,
    W,
    catch_up_steps,
    common_walk,
    contraction_at,
    fold,
    fold_columns,
    lazy_prox,
    prefetch_columns,
    scaled_columns,
    scaled_x,
    scales,
    tabulated,
)
from faceoff.solvers.losses import EXACT_TOL, dual_step, prefetch_warm, simplex_step, warm_starts
from faceoff.solvers.penalties import soft_threshold
from faceoff.solvers.prefetch import prefetch, prefetch_draw
from faceoff.solvers.problem import Problem
from faceoff.solvers.sampling import LOOKAHEAD, alias_table, make_rng_state, next_uniform
from faceoff.solvers.trace import Recorder

# ----------------------------------------------------------------------------- parameters


def step_sizes(
    row_norms: np.ndarray,
    l2: float,
    gamma: float,
    m: int,
    weighted: bool,
    alpha: float | None,
) -> tuple[float, float, float, float]:
    """(τ, σ, θ, α) of eq. (12) (uniform) or eqs. (24)-(25) (weighted).

    Parameters
    ----------
    row_norms : array, shape (n_samples,)
        ‖aᵢ‖.
    l2 : float
        λ, the strong convexity of g.
    gamma : float
        γ, the strong convexity of φ* (1/smoothness of φ).
    m : int
        Batch size.
    weighted : bool
        Algorithm 3's sampling; α is returned as 0 for uniform sampling.
    alpha : float or None
        The mix of eq. (20); None: α* of eq. (25).
    """
    n = row_norms.shape[0]
    r_max = float(row_norms.max()) or 1.0  # an all-zero A: any step is exact
    n_m = n / m
    ratio = math.sqrt(n_m * l2 / gamma)  # √(nλ/(mγ))
    root = math.sqrt(n_m / (l2 * gamma))  # √(n/(mλγ))
    if not weighted:
        theta = 1.0 - 1.0 / (n_m + 2.0 * r_max * root)
        return 1.0 / (2.0 * r_max * ratio), ratio / (2.0 * r_max), theta, 0.0
    r_bar = max(float(row_norms.mean()), r_max / n_m)
    if alpha is None:  # eq. (25), ρ = R/R̄ − 1, κ = R²/(λγ)
        rho = r_max / r_bar - 1.0
        kappa = r_max * r_max / (l2 * gamma)
        if rho <= math.sqrt(n_m / kappa):
            alpha = 0.0
        else:
            s = math.sqrt(rho) * (kappa / n_m) ** 0.25
            alpha = (s - 1.0) / (s + rho)
    r_alpha = 1.0 / ((1.0 - alpha) / r_max + alpha / r_bar)
    first = n_m / (1.0 - alpha) if alpha < 1.0 else math.inf
    theta = 1.0 - 1.0 / (first + r_alpha * root)
    return 1.0 / (2.0 * r_alpha * ratio), ratio / (2.0 * r_alpha), theta, alpha


# ----------------------------------------------------------------------------- sampling


@njit(cache=True)
def _block_alias_tables(weights, offsets):
    """Per block b (rows offsets[b]:offsets[b + 1] of the partition), Walker's alias table of
    the weights normalized within the block; aliases are positions inside the block."""
    prob = np.ones(weights.shape[0])
    alias = np.zeros(weights.shape[0], np.int64)
    for block in range(offsets.shape[0] - 1):
        start, end = offsets[block], offsets[block + 1]
        w = weights[start:end]
        p, a = alias_table(w / w.sum())
        prob[start:end] = p
        alias[start:end] = a
    return prob, alias


class BlockSamplerState(NamedTuple):
    """A :class:`PartitionSampler` as kernels see it (a Numba tuple): the generator, the ring
    of draws ahead (``ring[0]``: draw counter), the partition (``offsets``, ``members``) and
    the within-block alias tables."""

    rng_state: np.ndarray
    ring: np.ndarray
    offsets: np.ndarray
    members: np.ndarray
    prob: np.ndarray
    alias: np.ndarray


@njit(cache=True, inline="always")
def _draw(state, block, offsets, members, prob, alias):
    """One row of partition block ``block``, with the within-block probabilities."""
    start = offsets[block]
    size = offsets[block + 1] - start
    u = next_uniform(state) * size
    i = min(int(u), size - 1)
    i += (u - i >= prob[start + i]) * (alias[start + i] - i)
    return members[start + i]


@njit(cache=True)
def _fill_ring(sampler):
    state, ring, offsets, members, prob, alias = sampler
    m = offsets.shape[0] - 1
    ring[0] = 0
    for k in range(LOOKAHEAD):
        ring[1 + k] = _draw(state, k % m, offsets, members, prob, alias)


@njit(cache=True, _nrt=False)
def _next_row(sampler, draw, ahead_block):
    """(current, LOOKAHEAD ahead, LOOKAHEAD/2 ahead) rows of draw number ``draw``; draw s
    belongs to block s mod m and ``ahead_block`` = (draw + LOOKAHEAD) mod m. As
    :func:`faceoff.solvers.sampling.next_coordinate`, the counters live in the kernel's
    registers (and the call, compiled without reference counting, costs nothing)."""
    state, ring, offsets, members, prob, alias = sampler
    slot = 1 + (draw & (LOOKAHEAD - 1))
    current = ring[slot]
    ahead = _draw(state, ahead_block, offsets, members, prob, alias)
    ring[slot] = ahead
    return current, ahead, ring[1 + ((draw + 1 + LOOKAHEAD // 2) & (LOOKAHEAD - 1))]


@njit(cache=True, _nrt=False)
def _prefetch_draw(data, loss, it, ahead, half):
    """Prefetch what draws ahead will read: ``indptr`` of draw ``ahead``, the row of draw
    ``half`` and its dual state (yₖ, bₖ, 1/σ, the primal weight, the warm start)."""
    indptr, indices, values = data.csr
    prefetch_draw(indptr, indices, values, ahead, half)
    prefetch(it.y, half)
    prefetch(data.b, half)
    prefetch(it.inv_s, half)
    prefetch(it.coef, half)
    prefetch_warm(loss, it.warm, half)


class PartitionSampler:
    """Index-partition sampling (§2): rows split once into m blocks, one draw per block.

    Within a block, row i is drawn with probability wᵢ / Σ_block w, which is also its
    inclusion probability pᵢ (the pᵢ sum to m). Rows are dealt to blocks in decreasing
    weight, in snake order (0, …, m−1, m−1, …, 0, …), so blocks have equal sizes (±1) and
    nearly equal weights: with uniform weights pᵢ = m/n when m divides n, the sampling of
    Algorithm 2; with m = 1, Algorithm 1 or 3.

    Parameters
    ----------
    weights : array, shape (n_samples,)
        Sampling weights ≥ 0, positive in every block (ones for uniform sampling).
    m : int
        Number of blocks (batch size), 1 ≤ m ≤ n_samples.
    seed : int
    """

    def __init__(self, weights: np.ndarray, m: int, seed: int) -> None:
        n = weights.shape[0]
        order = np.argsort(-weights, kind="stable")
        position = np.arange(n)
        lap, column = np.divmod(position, m)
        block_of = np.where(lap % 2 == 0, column, m - 1 - column)
        by_block = np.argsort(block_of, kind="stable")
        self.members = np.ascontiguousarray(order[by_block], dtype=np.int64)
        self.offsets = np.zeros(m + 1, dtype=np.int64)
        np.cumsum(np.bincount(block_of, minlength=m), out=self.offsets[1:])
        sorted_weights = np.ascontiguousarray(weights[self.members], dtype=np.float64)
        block_totals = np.add.reduceat(sorted_weights, self.offsets[:-1])
        if not np.all(block_totals > 0):
            raise ValueError("every block of the partition needs a row of positive weight")
        self.probabilities = np.empty(n)
        self.probabilities[self.members] = sorted_weights / np.repeat(
            block_totals, np.diff(self.offsets)
        )
        self.prob, self.alias = _block_alias_tables(sorted_weights, self.offsets)
        self.state = BlockSamplerState(
            make_rng_state(seed),
            np.zeros(LOOKAHEAD + 1, dtype=np.int64),  # ring[0]: draw counter
            self.offsets,
            self.members,
            self.prob,
            self.alias,
        )
        _fill_ring(self.state)


# ----------------------------------------------------------------------------- kernels

# Columns of the packed primal state, one 32-byte row per coordinate j: x, x_prev, u = Aᵀy/n
# and the iteration x is at (lazy updates). A touched coordinate costs one cache line.
X, X_PREV, U, LAST = 0, 1, 2, 3

# The kernels index their arrays in their own body: an array passed to an inlined helper is
# reference counted at each call, which inside the loop over a row costs more than the step.


@njit(cache=True, inline="always")
def _primal_step(x, u, g, tau, lam, shrink):
    """prox_{τg}(x − τ(u + g)) (eqs. (6), (10), (22))."""
    return soft_threshold(x - tau * (u + g), lam) * shrink


@njit(cache=True, inline="always")
def _steps_since(x, u, steps, contraction, tau, l1, l2, lam, shrink, log_r):
    """(x_prev, x) after steps + 1 primal steps with u constant (eqs. (36), (38)-(44)), given
    ``contraction`` = 1 − rˢᵗᵉᵖˢ."""
    x_prev = catch_up_steps(x, u, steps, contraction, tau, l1, l2, log_r)
    return x_prev, _primal_step(x_prev, u, 0.0, tau, lam, shrink)


@njit(cache=True, inline="always")
def _accumulate(rows, deltas, indptr, indices, values, coef, inv_n, scratch):
    """scratch[:, 0] = Σₖ δₖaₖ/(n·pₖ) (the primal step's estimate), scratch[:, 1] = Σₖ δₖaₖ/n
    (u's change)."""
    for c in range(rows.shape[0]):
        delta = deltas[c]
        if delta != 0.0:
            k = rows[c]
            gk = delta * coef[k]
            hk = delta * inv_n
            for q in range(indptr[k], indptr[k + 1]):
                j = indices[q]
                scratch[j, 0] += gk * values[q]
                scratch[j, 1] += hk * values[q]


class SpdcState(NamedTuple):
    """The iterate, steps and scratch of an spdc run (a Numba tuple).

    y, warm : arrays, shape (n_samples,)
        The dual iterate and the dual step's warm starts
        (:func:`~faceoff.solvers.losses.dual_step`).
    inv_s, coef : arrays, shape (n_samples,)
        pₖn/(σm), the dual step's 1/σ of eqs. (5), (9), (21), and 1/(n·pₖ), the primal
        step's weight of eqs. (6), (10), (23).
    primal : array, shape (n_features, 4) or (n_features, 2)
        Columns X, X_PREV, U = Aᵀy/n and LAST (the iteration x is at), one cache line per
        coordinate; in the l2 kernel's scaled form, V and W (x = S·v − w, w = u/λ).
    scratch : array, shape (n_features, 2) or (0, 2)
        A batch's Σₖ δₖaₖ/(n·pₖ) and Σₖ δₖaₖ/n (m = 1 lazy updates need none).
    rows, deltas : arrays, shape (m,)
        A batch's rows and their dual changes.
    theta : float
        The extrapolation θ of eq. (8).
    pending, saved : arrays, shapes (1 + c,) and (c, 2)
        The l2 kernel's pending list (count, then coordinates; their true w and x̄'s
        correction), c the most non-zeros a batch can touch (0 for the other kernels).
    done : int array, shape (1,)
        Iterations run so far: the lazy kernel's clock, which ``LAST`` counts in.
    """

    y: np.ndarray
    warm: np.ndarray
    inv_s: np.ndarray
    coef: np.ndarray
    primal: np.ndarray
    scratch: np.ndarray
    rows: np.ndarray
    deltas: np.ndarray
    theta: float
    pending: np.ndarray
    saved: np.ndarray
    done: np.ndarray


@njit(cache=True)
def _spdc_lazy(data, loss, prox, sampler, it, n_iters):
    """``n_iters`` SPDC iterations with just-in-time updates (§6); returns nnz visited.
    (x_prev, x)ⱼ are x at iterations last − 1 and last, counted from the first run
    (``done``); a coordinate no sampled row reads stays behind (:func:`_caught_up`). With
    m = 1 a row's coordinates are distinct, so its primal step is applied in the same pass
    that reads δ, without scratch."""
    indptr, indices, values = data.csr
    b = data.b
    tau, l1, l2, log_r, table = prox
    y, warm, inv_s, coef, state, scratch, rows, deltas, theta, _, _, done = it
    m = rows.shape[0]
    inv_n = 1.0 / b.shape[0]
    lam = tau * l1
    shrink = 1.0 / (1.0 + tau * l2)
    flat = state.reshape(-1)  # for prefetching rows of the state
    width = state.shape[1]
    visited = 0
    ring = sampler.ring
    draw = ring[0]  # the sampler's draw counter and next block, kept in registers
    ahead_block = (draw + LOOKAHEAD) % m
    begin = done[0]
    for t in range(begin, begin + n_iters):
        for c in range(m):
            k, ahead, half = _next_row(sampler, draw, ahead_block)
            following = ring[1 + ((draw + 1) & (LOOKAHEAD - 1))]
            draw += 1
            ahead_block = ahead_block + 1 if ahead_block + 1 < m else 0
            _prefetch_draw(data, loss, it, ahead, half)
            for q in range(indptr[following], indptr[following + 1]):
                prefetch(flat, width * indices[q])
            start, end = indptr[k], indptr[k + 1]
            z = 0.0
            for q in range(start, end):  # catch up the support of aₖ, then z = aₖᵀx̄
                j = indices[q]
                xj = state[j, X]
                x_prev = state[j, X_PREV]
                behind = t - int(state[j, LAST])
                if behind > 0:
                    steps = behind - 1
                    if steps < TABLE_SIZE:  # lazy_prox.contraction_at, indexed here
                        contraction = tabulated(
                            table[steps & (TABLE_LOW - 1)],
                            table[TABLE_LOW + (steps >> TABLE_BITS)],
                        )
                    else:
                        contraction = -math.expm1(steps * log_r)
                    x_prev, xj = _steps_since(
                        xj, state[j, U], steps, contraction, tau, l1, l2, lam, shrink, log_r
                    )
                    state[j, X_PREV] = x_prev
                    state[j, X] = xj
                    state[j, LAST] = t
                z += values[q] * (xj + theta * (xj - x_prev))
            y_new = dual_step(loss, warm, k, y[k], z, b[k], inv_s[k])[0]  # (5), (9), (21)
            delta = y_new - y[k]
            y[k] = y_new
            visited += end - start
            if m > 1:
                rows[c] = k
                deltas[c] = delta
            elif delta != 0.0:  # x ← prox_{τg}(x − τ(u + δₖaₖ/(n·pₖ))), u ← u + δₖaₖ/n
                gk = delta * coef[k]
                hk = delta * inv_n
                for q in range(start, end):
                    j = indices[q]
                    xj = state[j, X]
                    state[j, X_PREV] = xj
                    state[j, X] = _primal_step(xj, state[j, U], gk * values[q], tau, lam, shrink)
                    state[j, U] += hk * values[q]
                    state[j, LAST] = t + 1
        if m > 1:
            _accumulate(rows, deltas, indptr, indices, values, coef, inv_n, scratch)
            for c in range(m):  # x ← prox_{τg}(x − τ(u + g)), u ← u + h on the touched support
                if deltas[c] != 0.0:
                    k = rows[c]
                    for q in range(indptr[k], indptr[k + 1]):
                        j = indices[q]
                        if state[j, LAST] == t:  # not yet stepped by another row of the batch
                            xj = state[j, X]
                            state[j, X_PREV] = xj
                            state[j, X] = _primal_step(
                                xj, state[j, U], scratch[j, 0], tau, lam, shrink
                            )
                            state[j, U] += scratch[j, 1]
                            state[j, LAST] = t + 1
                            scratch[j, 0] = 0.0
                            scratch[j, 1] = 0.0
    done[0] = begin + n_iters
    ring[0] = draw
    return visited


@njit(cache=True)
def _caught_up(state, now, prox):
    """x at iteration ``now`` of the lazy kernel's ``state`` (a new array; the state is
    left as it is): each coordinate behind brought up to date (eqs. (36), (38)-(44))."""
    tau, l1, l2, log_r, table = prox
    lam = tau * l1
    shrink = 1.0 / (1.0 + tau * l2)
    x = state[:, X].copy()
    for j in range(x.shape[0]):
        behind = now - int(state[j, LAST])
        if behind > 0:
            steps = behind - 1
            contraction = contraction_at(table, steps, log_r)
            x[j] = _steps_since(
                x[j], state[j, U], steps, contraction, tau, l1, l2, lam, shrink, log_r
            )[1]
    return x


@njit(cache=True, inline="always")
def _restore(primal, pending, saved):
    """wⱼ ← the true wⱼ for the coordinates of the pending list; empties it."""
    for p in range(pending[0]):
        primal[pending[1 + p], W] = saved[p, 0]
    pending[0] = 0


@njit(cache=True)
def _spdc_l2(data, loss, prox, sampler, it, n_iters):
    """``n_iters`` SPDC iterations with lazy updates for g = λ/2‖x‖² (§6, eq. (36)) in scaled
    form; returns nnz visited.

    Off the sampled supports, x ← r(x − τuⱼ), r = 1/(1 + τλ), contracts every coordinate
    toward its fixed point −uⱼ/λ by the same factor, so xⱼ + wⱼ = S·vⱼ with wⱼ = uⱼ/λ and one
    global S = rᵗ: eq. (36) for every j at once. The primal step (6) with gradient gⱼ and
    u's change hⱼ = Δuⱼ becomes vⱼ += (hⱼ/λ − rτgⱼ)/(rS), wⱼ += hⱼ/λ, and a read is
    x̄ⱼ = S(1 − θτλ)·vⱼ − wⱼ: two multiply-adds, no catch-up.

    Right after its step x_prev is the pre-step x, off the line by θτ(hⱼ − gⱼ) in x̄; for
    that one iteration wⱼ holds wⱼ − θτ(hⱼ − gⱼ), and the pending list (``pending``: count,
    then coordinates; ``saved``: their true w and the correction) puts the true wⱼ back
    before the next steps. On exit S is folded into v and w is true: x = v − w."""
    indptr, indices, values = data.csr
    b = data.b
    tau, l2 = prox.step, prox.l2
    y, warm, inv_s, coef, primal, scratch, rows, deltas, theta, pending, saved, _ = it
    m = rows.shape[0]
    inv_n = 1.0 / b.shape[0]
    inv_l2 = 1.0 / l2
    tau_l2 = tau * l2
    r = 1.0 / (1.0 + tau_l2)
    bar = 1.0 - theta * tau_l2  # S̄/S: x̄ = x + θ(x − x_prev) on the line
    for p in range(pending[0]):  # the corrections of the last run's last step
        primal[pending[1 + p], W] = saved[p, 0] - saved[p, 1]
    visited = 0
    ring = sampler.ring
    draw = ring[0]  # the sampler's draw counter and next block, kept in registers
    ahead_block = (draw + LOOKAHEAD) % m
    scale = 1.0  # S
    for _ in range(n_iters):
        if scale < RESCALE_BELOW:
            fold(primal, scale)
            scale = 1.0
        scale_bar = scale * bar
        inv_next = 1.0 / (scale * r)
        for c in range(m):
            k, ahead, half = _next_row(sampler, draw, ahead_block)
            draw += 1
            ahead_block = ahead_block + 1 if ahead_block + 1 < m else 0
            _prefetch_draw(data, loss, it, ahead, half)
            start, end = indptr[k], indptr[k + 1]
            z = 0.0
            for q in range(start, end):  # z = aₖᵀx̄
                j = indices[q]
                z += values[q] * (scale_bar * primal[j, V] - primal[j, W])
            y_new = dual_step(loss, warm, k, y[k], z, b[k], inv_s[k])[0]  # (5), (9), (21)
            rows[c] = k
            deltas[c] = y_new - y[k]
            y[k] = y_new
            visited += end - start
        _restore(primal, pending, saved)
        if m == 1:  # gⱼ = δₖaₖⱼ/(n·pₖ), hⱼ = δₖaₖⱼ/n
            delta = deltas[0]
            if delta != 0.0:
                k = rows[0]
                dw = delta * inv_n * inv_l2
                dv = (dw - r * tau * delta * coef[k]) * inv_next
                fix = theta * tau * delta * (inv_n - coef[k])
                count = 0
                for q in range(indptr[k], indptr[k + 1]):
                    j = indices[q]
                    a = values[q]
                    w = primal[j, W] + dw * a
                    primal[j, V] += dv * a
                    primal[j, W] = w - fix * a
                    pending[1 + count] = j
                    saved[count, 0] = w
                    saved[count, 1] = fix * a
                    count += 1
                pending[0] = count
        else:
            _accumulate(rows, deltas, indptr, indices, values, coef, inv_n, scratch)
            count = 0
            for c in range(m):  # each coordinate of the batch's support once
                if deltas[c] != 0.0:
                    k = rows[c]
                    for q in range(indptr[k], indptr[k + 1]):
                        j = indices[q]
                        g, h = scratch[j, 0], scratch[j, 1]
                        if g != 0.0 or h != 0.0:  # (zero: the step is the line's own)
                            w = primal[j, W] + h * inv_l2
                            fix = theta * tau * (h - g)
                            primal[j, V] += (h * inv_l2 - r * tau * g) * inv_next
                            primal[j, W] = w - fix
                            pending[1 + count] = j
                            saved[count, 0] = w
                            saved[count, 1] = fix
                            count += 1
                            scratch[j, 0] = 0.0
                            scratch[j, 1] = 0.0
            pending[0] = count
        scale *= r
    count = pending[0]
    _restore(primal, pending, saved)
    pending[0] = count  # kept for the next run's first iteration
    fold(primal, scale)
    ring[0] = draw
    return visited


@njit(cache=True)
def _spdc_dense(data, loss, prox, sampler, it, n_iters):
    """``n_iters`` SPDC iterations with O(d) primal updates; returns nnz visited."""
    indptr, indices, values = data.csr
    b = data.b
    tau, l1, l2 = prox.step, prox.l1, prox.l2
    y, warm, inv_s, coef, state, scratch, rows, deltas, theta, _, _, _ = it
    m = rows.shape[0]
    inv_n = 1.0 / b.shape[0]
    lam = tau * l1
    shrink = 1.0 / (1.0 + tau * l2)
    visited = 0
    ring = sampler.ring
    draw = ring[0]
    ahead_block = (draw + LOOKAHEAD) % m
    for _ in range(n_iters):
        for c in range(m):
            k = _next_row(sampler, draw, ahead_block)[0]
            draw += 1
            ahead_block = ahead_block + 1 if ahead_block + 1 < m else 0
            start, end = indptr[k], indptr[k + 1]
            z = 0.0
            for q in range(start, end):  # z = aₖᵀx̄
                j = indices[q]
                xj = state[j, X]
                z += values[q] * (xj + theta * (xj - state[j, X_PREV]))
            y_new = dual_step(loss, warm, k, y[k], z, b[k], inv_s[k])[0]  # (5), (9), (21)
            rows[c] = k
            deltas[c] = y_new - y[k]
            y[k] = y_new
            visited += end - start
        _accumulate(rows, deltas, indptr, indices, values, coef, inv_n, scratch)
        for j in range(state.shape[0]):  # x ← prox_{τg}(x − τ(u + g)), u ← u + h
            xj = state[j, X]
            state[j, X_PREV] = xj
            state[j, X] = _primal_step(xj, state[j, U], scratch[j, 0], tau, lam, shrink)
            state[j, U] += scratch[j, 1]
            scratch[j, 0] = 0.0
            scratch[j, 1] = 0.0
    ring[0] = draw
    return visited


# ------------------------------------------------------------------- K-class kernels


class SpdcKState(NamedTuple):
    """The iterate, steps and scratch of a K-class spdc run (a Numba tuple); as
    :class:`SpdcState` with a class axis.

    y : array, shape (n_samples, K)
    warm : array, shape (n_samples·K,) or (0,)
        The one-vs-rest dual steps' warm starts, entry i·K + c (none for multinomial).
    inv_s, coef : arrays, shape (n_samples,)
    primal : array, shape (3, n_features, K) or (n_features, 2, K)
        The planes X, X_PREV, U (each C-contiguous: the lazy kernel's catch-up of a
        feature's K coefficients runs as one vector loop on them); in the l2 kernel's
        scaled form, V and W of a feature side by side.
    last : int array, shape (n_features,), (1 + K,) or (0,)
        The iteration a feature's K coefficients are at (lazy updates, l1 + l2); in the
        scaled form, the classes of the pending list (count, then classes).
    scratch : array, shape (n_features, 2, K) or (0, 2, K)
        A batch's Σₖ δₖaₖᵀ/(n·pₖ) and Σₖ δₖaₖᵀ/n.
    rows : int array, shape (m,)
    deltas : array, shape (m, K)
        A batch's rows and their dual changes.
    theta : float
    pending, saved : arrays, shapes (1 + c,) and (c, 2, K)
        The l2 kernel's pending features and their true w and x̄'s correction.
    done : int array, shape (1,)
        Iterations run so far: the lazy kernel's clock, which ``last`` counts in.
    """

    y: np.ndarray
    warm: np.ndarray
    inv_s: np.ndarray
    coef: np.ndarray
    primal: np.ndarray
    last: np.ndarray
    scratch: np.ndarray
    rows: np.ndarray
    deltas: np.ndarray
    theta: float
    pending: np.ndarray
    saved: np.ndarray
    done: np.ndarray


@njit(cache=True, _nrt=False)
def _dual_row(loss, multinomial, warm, y, i, label, z, inv_s, delta, work):
    """Row i's K dual coordinates stepped at its scores ``z`` = X̄ᵀaᵢ with 1/σ = ``inv_s``
    (module docstring): the binary step (5) per class for one-vs-rest, the entropy prox on
    the simplex for the multinomial form; ``delta`` ← the changes, ``work`` (2, K) scratch.
    Returns whether any coordinate moved."""
    K = z.shape[0]
    moved = False
    if multinomial:
        p = work[0]
        for c in range(K):
            p[c] = y[i, c]
        p[label] += 1.0  # p₀ = yᵢ + e_label ∈ Δ
        simplex_step(loss, z, p, inv_s, work[1], EXACT_TOL)
        p[label] -= 1.0
        for c in range(K):
            delta[c] = p[c] - y[i, c]
            y[i, c] = p[c]
            moved |= delta[c] != 0.0
        return moved
    for c in range(K):
        old = y[i, c]
        new = dual_step(loss, warm, i * K + c, old, z[c], 1.0 if c == label else -1.0, inv_s)[0]
        delta[c] = new - old
        y[i, c] = new
        moved |= new != old
    return moved


@njit(cache=True)
def _accumulate_k(rows, deltas, indptr, indices, values, coef, inv_n, scratch):
    """scratch[:, 0] = Σₖ aₖδₖᵀ/(n·pₖ), scratch[:, 1] = Σₖ aₖδₖᵀ/n over a batch's rows
    (:func:`_accumulate` with K columns)."""
    K = deltas.shape[1]
    g = np.empty(K)
    h = np.empty(K)
    for b in range(rows.shape[0]):
        k = rows[b]
        moved = False
        for c in range(K):
            g[c] = deltas[b, c] * coef[k]
            h[c] = deltas[b, c] * inv_n
            moved |= deltas[b, c] != 0.0
        if moved:
            for q in range(indptr[k], indptr[k + 1]):
                j = indices[q]
                a = values[q]
                for c in range(K):
                    scratch[j, 0, c] += g[c] * a
                    scratch[j, 1, c] += h[c] * a


@njit(cache=True, _nrt=False)
def _steps_since_columns(x, x_prev, u, j, steps, contraction, prox, hard):
    """:func:`_steps_since` for the K coefficients of feature j: (x_prev, x)[j, :] after
    steps + 1 primal steps with u[j, :] constant; the common walks in one vector loop
    (:func:`faceoff.solvers.lazy_prox.common_walk`), the others one by one; ``hard`` is
    scratch of length K. A function of its own, as
    :func:`faceoff.solvers.lazy_prox.catch_up_columns`."""
    tau, l1, l2, log_r, _ = prox
    lam = tau * l1
    shrink = 1.0 / (1.0 + tau * l2)
    rare = 0
    for c in range(x.shape[1]):
        xj, uj = x[j, c], u[j, c]
        xp, common = common_walk(xj, uj, steps, contraction, tau, l1, l2, log_r)
        x_prev[j, c] = xp if common else x_prev[j, c]
        x[j, c] = _primal_step(xp, uj, 0.0, tau, lam, shrink) if common else xj
        flag = 0 if common else 1  # (an integer flag: a bool one defeats the vectorizer)
        hard[c] = flag
        rare |= flag
    if rare != 0:
        for c in range(x.shape[1]):
            if hard[c] != 0:
                x_prev[j, c], x[j, c] = _steps_since(
                    x[j, c], u[j, c], steps, contraction, tau, l1, l2, lam, shrink, log_r
                )


@njit(cache=True)
def _spdc_k_lazy(data, loss, multinomial, prox, sampler, it, n_iters):
    """:func:`_spdc_lazy` for a K-class problem: a row's read catches up and reads the K
    coefficients of each of its features, and no other feature is caught up
    (:func:`_caught_up_k`); returns nnz visited."""
    indptr, indices, values = data.csr
    labels = data.b
    tau, l1, l2, log_r, table = prox
    y, warm, inv_s, coef, primal, last, scratch, rows, deltas, theta, _, _, done = it
    x, x_prev, u = primal[X], primal[X_PREV], primal[U]
    n, K = y.shape
    m = rows.shape[0]
    inv_n = 1.0 / n
    lam = tau * l1
    shrink = 1.0 / (1.0 + tau * l2)
    flat_y = y.reshape(-1)
    flat_x, flat_u = x.reshape(-1), u.reshape(-1)
    # scratch allocated here, not passed in: LLVM then knows it does not alias X
    z = np.empty(K)
    delta = np.empty(K)
    g = np.empty(K)
    h = np.empty(K)
    hard = np.empty(K, np.int64)
    work = np.empty((2, K))
    visited = 0
    ring = sampler.ring
    draw = ring[0]
    ahead_block = (draw + LOOKAHEAD) % m
    begin = done[0]
    for t in range(begin, begin + n_iters):
        for b in range(m):
            k, ahead, half = _next_row(sampler, draw, ahead_block)
            draw += 1
            ahead_block = ahead_block + 1 if ahead_block + 1 < m else 0
            prefetch_draw(indptr, indices, values, ahead, half)
            prefetch(flat_y, half * K)
            following = ring[1 + (draw & (LOOKAHEAD - 1))]  # the next draw's row
            prefetch_columns(indptr, indices, flat_x, K, following)
            prefetch_columns(indptr, indices, flat_u, K, following)
            start, end = indptr[k], indptr[k + 1]
            for c in range(K):
                z[c] = 0.0
            for q in range(start, end):  # catch up the K columns on aₖ's support, ū = X̄ᵀaₖ
                j = indices[q]
                behind = t - last[j]
                if behind > 0:
                    steps = behind - 1
                    contraction = contraction_at(table, steps, log_r)
                    _steps_since_columns(x, x_prev, u, j, steps, contraction, prox, hard)
                    last[j] = t
                a = values[q]
                for c in range(K):
                    xj = x[j, c]
                    z[c] += a * (xj + theta * (xj - x_prev[j, c]))
            moved = _dual_row(loss, multinomial, warm, y, k, labels[k], z, inv_s[k], delta, work)
            visited += end - start
            if m > 1:
                rows[b] = k
                for c in range(K):
                    deltas[b, c] = delta[c]
            elif moved:  # X ← prox_{τg}(X − τ(U + aₖδᵀ/(n·pₖ))), U ← U + aₖδᵀ/n
                for c in range(K):
                    g[c] = delta[c] * coef[k]
                    h[c] = delta[c] * inv_n
                for q in range(start, end):
                    j = indices[q]
                    a = values[q]
                    for c in range(K):
                        xj = x[j, c]
                        x_prev[j, c] = xj
                        x[j, c] = _primal_step(xj, u[j, c], g[c] * a, tau, lam, shrink)
                        u[j, c] += h[c] * a
                    last[j] = t + 1
        if m > 1:
            _accumulate_k(rows, deltas, indptr, indices, values, coef, inv_n, scratch)
            for b in range(m):  # step the moved rows' support once, K columns a feature
                k = rows[b]
                moved = False
                for c in range(K):
                    moved |= deltas[b, c] != 0.0
                if not moved:
                    continue
                for q in range(indptr[k], indptr[k + 1]):
                    j = indices[q]
                    if last[j] == t:  # not yet stepped by another row of the batch
                        for c in range(K):
                            xj = x[j, c]
                            x_prev[j, c] = xj
                            x[j, c] = _primal_step(xj, u[j, c], scratch[j, 0, c], tau, lam, shrink)
                            u[j, c] += scratch[j, 1, c]
                            scratch[j, 0, c] = 0.0
                            scratch[j, 1, c] = 0.0
                        last[j] = t + 1
    done[0] = begin + n_iters
    ring[0] = draw
    return visited


@njit(cache=True)
def _caught_up_k(primal, last, now, prox):
    """X at iteration ``now`` of the lazy K-class kernel's planes ``primal`` (a new
    array; the state is left as it is): each feature behind brought up to date."""
    x, x_prev = primal[X].copy(), primal[X_PREV].copy()
    u = primal[U]
    hard = np.empty(x.shape[1], np.int64)
    for j in range(x.shape[0]):
        behind = now - last[j]
        if behind > 0:
            steps = behind - 1
            contraction = contraction_at(prox.table, steps, prox.log_r)
            _steps_since_columns(x, x_prev, u, j, steps, contraction, prox, hard)
    return x


@njit(cache=True)
def _spdc_k_l2(data, loss, multinomial, prox, sampler, it, n_iters):
    """:func:`_spdc_l2` for a K-class problem: X in the scaled form column by column
    (X = S·v − w, one global S), a row's K scores from one read. With m = 1 only the
    classes whose dual variable moved are stepped (the others' step is the line's own):
    the pending list holds the stepped features and ``pending_classes`` those classes
    (count, then classes), ``saved`` their true w and corrections in that order; with
    m > 1 every class. Returns nnz visited."""
    indptr, indices, values = data.csr
    labels = data.b
    tau, l2 = prox.step, prox.l2
    y, warm, inv_s, coef, primal, classes, scratch, rows, deltas, theta, pending, saved, _ = it
    n, K = y.shape
    m = rows.shape[0]
    inv_n = 1.0 / n
    inv_l2 = 1.0 / l2
    tau_l2 = tau * l2
    r = 1.0 / (1.0 + tau_l2)
    bar = 1.0 - theta * tau_l2  # S̄/S: x̄ = x + θ(x − x_prev) on the line
    flat_y = y.reshape(-1)
    flat_primal = primal.reshape(-1)
    z = np.empty(K)
    delta = np.empty(K)
    dv = np.empty(K)
    dw = np.empty(K)
    fix = np.empty(K)
    work = np.empty((2, K))
    for p in range(pending[0]):  # the corrections of the last run's last step
        for q in range(classes[0]):
            primal[pending[1 + p], W, classes[1 + q]] = saved[p, 0, q] - saved[p, 1, q]
    if m > 1:  # a batch steps every class
        classes[0] = K
        for c in range(K):
            classes[1 + c] = c
    visited = 0
    ring = sampler.ring
    draw = ring[0]
    ahead_block = (draw + LOOKAHEAD) % m
    scale = 1.0  # S
    for _ in range(n_iters):
        if scale < RESCALE_BELOW:
            fold_columns(primal, scale)
            scale = 1.0
        scale_bar = scale * bar
        inv_next = 1.0 / (scale * r)
        moved = False
        for b in range(m):
            k, ahead, half = _next_row(sampler, draw, ahead_block)
            draw += 1
            ahead_block = ahead_block + 1 if ahead_block + 1 < m else 0
            prefetch_draw(indptr, indices, values, ahead, half)
            prefetch(flat_y, half * K)
            following = ring[1 + (draw & (LOOKAHEAD - 1))]  # the next draw's row
            prefetch_columns(indptr, indices, flat_primal, 2 * K, following)
            start, end = indptr[k], indptr[k + 1]
            for c in range(K):
                z[c] = 0.0
            for q in range(start, end):  # ū = X̄ᵀaₖ
                j = indices[q]
                a = values[q]
                for c in range(K):
                    z[c] += a * (scale_bar * primal[j, V, c] - primal[j, W, c])
            moved = _dual_row(loss, multinomial, warm, y, k, labels[k], z, inv_s[k], delta, work)
            rows[b] = k
            for c in range(K):
                deltas[b, c] = delta[c]
            visited += end - start
        for p in range(pending[0]):  # the true w of the last step's features
            for q in range(classes[0]):
                primal[pending[1 + p], W, classes[1 + q]] = saved[p, 0, q]
        pending[0] = 0
        if m == 1:  # gⱼ = aₖⱼδ/(n·pₖ), hⱼ = aₖⱼδ/n, in the classes that moved
            if moved:
                k = rows[0]
                count = 0
                for c in range(K):
                    if delta[c] != 0.0:
                        dw[count] = delta[c] * inv_n * inv_l2
                        dv[count] = (dw[count] - r * tau * delta[c] * coef[k]) * inv_next
                        fix[count] = theta * tau * delta[c] * (inv_n - coef[k])
                        classes[1 + count] = c
                        count += 1
                classes[0] = count
                p = 0
                for q in range(indptr[k], indptr[k + 1]):
                    j = indices[q]
                    a = values[q]
                    if count == K:  # every class: one vector loop
                        for c in range(K):
                            w = primal[j, W, c] + dw[c] * a
                            primal[j, V, c] += dv[c] * a
                            primal[j, W, c] = w - fix[c] * a
                            saved[p, 0, c] = w
                            saved[p, 1, c] = fix[c] * a
                    else:
                        for e in range(count):
                            c = classes[1 + e]
                            w = primal[j, W, c] + dw[e] * a
                            primal[j, V, c] += dv[e] * a
                            primal[j, W, c] = w - fix[e] * a
                            saved[p, 0, e] = w
                            saved[p, 1, e] = fix[e] * a
                    pending[1 + p] = j
                    p += 1
                pending[0] = p
        else:
            _accumulate_k(rows, deltas, indptr, indices, values, coef, inv_n, scratch)
            count = 0
            for b in range(m):  # each feature of the batch's support once
                k = rows[b]
                for q in range(indptr[k], indptr[k + 1]):
                    j = indices[q]
                    touched = False
                    for c in range(K):
                        touched |= scratch[j, 0, c] != 0.0 or scratch[j, 1, c] != 0.0
                    if touched:  # (zero: the step is the line's own, or done already)
                        for c in range(K):
                            gj, hj = scratch[j, 0, c], scratch[j, 1, c]
                            w = primal[j, W, c] + hj * inv_l2
                            fj = theta * tau * (hj - gj)
                            primal[j, V, c] += (hj * inv_l2 - r * tau * gj) * inv_next
                            primal[j, W, c] = w - fj
                            saved[count, 0, c] = w
                            saved[count, 1, c] = fj
                            scratch[j, 0, c] = 0.0
                            scratch[j, 1, c] = 0.0
                        pending[1 + count] = j
                        count += 1
            pending[0] = count
        scale *= r
    for p in range(pending[0]):  # true w on exit; the list is kept for the next run
        for q in range(classes[0]):
            primal[pending[1 + p], W, classes[1 + q]] = saved[p, 0, q]
    fold_columns(primal, scale)
    ring[0] = draw
    return visited


@njit(cache=True)
def _spdc_k_dense(data, loss, multinomial, prox, sampler, it, n_iters):
    """:func:`_spdc_dense` for a K-class problem (O(d·K) primal updates); returns nnz
    visited."""
    indptr, indices, values = data.csr
    labels = data.b
    tau, l1, l2 = prox.step, prox.l1, prox.l2
    y, warm, inv_s, coef, primal, _, scratch, rows, deltas, theta, _, _, _ = it
    x, x_prev, u = primal[X], primal[X_PREV], primal[U]
    n, K = y.shape
    m = rows.shape[0]
    inv_n = 1.0 / n
    lam = tau * l1
    shrink = 1.0 / (1.0 + tau * l2)
    z = np.empty(K)
    delta = np.empty(K)
    work = np.empty((2, K))
    visited = 0
    ring = sampler.ring
    draw = ring[0]
    ahead_block = (draw + LOOKAHEAD) % m
    for _ in range(n_iters):
        for b in range(m):
            k = _next_row(sampler, draw, ahead_block)[0]
            draw += 1
            ahead_block = ahead_block + 1 if ahead_block + 1 < m else 0
            start, end = indptr[k], indptr[k + 1]
            for c in range(K):
                z[c] = 0.0
            for q in range(start, end):  # ū = X̄ᵀaₖ
                j = indices[q]
                a = values[q]
                for c in range(K):
                    xj = x[j, c]
                    z[c] += a * (xj + theta * (xj - x_prev[j, c]))
            _dual_row(loss, multinomial, warm, y, k, labels[k], z, inv_s[k], delta, work)
            rows[b] = k
            for c in range(K):
                deltas[b, c] = delta[c]
            visited += end - start
        _accumulate_k(rows, deltas, indptr, indices, values, coef, inv_n, scratch)
        for j in range(x.shape[0]):  # X ← prox_{τg}(X − τ(U + G)), U ← U + H
            for c in range(K):
                xj = x[j, c]
                x_prev[j, c] = xj
                x[j, c] = _primal_step(xj, u[j, c], scratch[j, 0, c], tau, lam, shrink)
                u[j, c] += scratch[j, 1, c]
                scratch[j, 0, c] = 0.0
                scratch[j, 1, c] = 0.0
    ring[0] = draw
    return visited


# ----------------------------------------------------------------------------- method


class SPDC(PrimalMethod):
    """State of one spdc run (see module docstring).

    Parameters
    ----------
    problem : Problem
    params : Params
        batch_size, sampling, alpha, tau, sigma, theta, updates (checked by the spec).
    seed : int
    """

    state: SpdcState | SpdcKState

    def __init__(self, problem: Problem, params: Params, seed: int) -> None:
        data = problem.data
        n, d = data.n_samples, data.n_features
        m = params.batch_size
        if m > n:
            raise ValueError(f"batch_size {m} exceeds the number of samples {n}; use 1 to {n}")
        weighted = params.sampling == "weighted"
        self.problem = problem
        self.lazy = params.updates == "lazy"
        row_norms = np.sqrt(data.row_sq_norms)
        tau, sigma, theta, alpha = step_sizes(
            row_norms,
            problem.penalty.l2,
            1.0 / problem.smoothness,  # γ: 2 for the multinomial form (module docstring)
            m,
            weighted,
            params.alpha,
        )
        self.tau = tau if params.tau is None else params.tau
        self.sigma = sigma if params.sigma is None else params.sigma
        self.theta = theta if params.theta is None else params.theta
        self.alpha = alpha
        if weighted:  # eq. (20): (1 − α)/n + α‖aᵢ‖/Σ‖aⱼ‖, up to a common factor
            total = float(row_norms.sum()) or 1.0
            weights = (1.0 - alpha) / n + alpha * row_norms / total
        else:
            weights = np.ones(n)
        self.sampler = PartitionSampler(weights, m, seed)
        p = self.sampler.probabilities
        self.n_coords = n / m  # iterations per coordinate epoch
        self.nnz_per_update = float(p @ data.row_nnz)
        with np.errstate(divide="ignore"):  # rows of probability 0 are never drawn
            inv_s = p * n / (m * self.sigma)  # the dual step's 1/σ of eq. (5), (9), (21)
            coef = 1.0 / (n * p)  # the primal step's weight of eq. (6), (10), (23)
        self.prox = lazy_prox(self.tau, problem.penalty)
        self.scaled = self.lazy and scales(self.tau, problem.penalty)
        # the most coordinates one batch steps: its m longest rows (or d), in O(n)
        longest = np.partition(data.row_nnz, n - m)[n - m :].sum() if self.scaled else 0
        touched = int(min(longest, d))
        self.k_class = problem.multiclass is not None
        if self.k_class:
            self.multinomial = problem.multiclass == "multinomial"
            self.state = self._k_state(inv_s, coef, touched)
            self.y = self.state.y
            return
        self.state = SpdcState(
            y=np.zeros(n),
            warm=warm_starts(n),
            inv_s=inv_s,
            coef=coef,
            primal=np.zeros((d, 2 if self.scaled else 4)),  # V, W or X, X_PREV, U, LAST
            scratch=np.zeros((d if m > 1 or not self.lazy else 0, 2)),
            rows=np.zeros(m, dtype=np.int64),
            deltas=np.zeros(m),
            theta=self.theta,
            pending=np.zeros(1 + touched, dtype=np.int64),
            saved=np.zeros((touched, 2)),
            done=np.zeros(1, dtype=np.int64),
        )
        self.y = self.state.y

    def _k_state(self, inv_s: np.ndarray, coef: np.ndarray, touched: int) -> SpdcKState:
        """The state of the K-class kernels (:class:`SpdcKState`)."""
        problem = self.problem
        n, d, K = problem.n_samples, problem.n_features, problem.n_classes
        m = self.sampler.offsets.shape[0] - 1
        warm = 0 if self.multinomial else n * K  # one-vs-rest keeps the binary warm starts
        return SpdcKState(
            y=np.zeros((n, K)),
            warm=warm_starts(warm),
            inv_s=inv_s,
            coef=coef,
            # (d, 2, K): V, W side by side; (3, d, K): the planes X, X_PREV, U
            primal=np.zeros((d, 2, K) if self.scaled else (3, d, K)),
            # lazy: the iteration of each feature; scaled form: the pending classes
            last=np.zeros(K + 1 if self.scaled else d if self.lazy else 0, dtype=np.int64),
            scratch=np.zeros((d if m > 1 or not self.lazy else 0, 2, K)),
            rows=np.zeros(m, dtype=np.int64),
            deltas=np.zeros((m, K)),
            theta=self.theta,
            pending=np.zeros(1 + touched, dtype=np.int64),
            saved=np.zeros((touched, 2, K)),
            done=np.zeros(1, dtype=np.int64),
        )

    @property
    def x(self) -> np.ndarray:
        """The primal iterate (a copy; v − w in the l2 kernel's scaled form, every
        coordinate brought up to date for the lazy kernels); X, shape (n_features, K), for
        a K-class problem."""
        state = self.state
        primal, now = state.primal, int(state.done[0])
        if self.k_class:
            assert isinstance(state, SpdcKState)
            if self.scaled:
                return scaled_columns(primal)
            return (
                _caught_up_k(primal, state.last, now, self.prox) if self.lazy else primal[X].copy()
            )
        if self.scaled:
            return scaled_x(primal)
        return _caught_up(primal, now, self.prox) if self.lazy else primal[:, X].copy()

    def run(self, n_updates: int) -> int:
        problem = self.problem
        if self.k_class:
            kernel_k = _spdc_k_l2 if self.scaled else _spdc_k_lazy if self.lazy else _spdc_k_dense
            return kernel_k(
                problem.rows,
                problem.loss.params,
                self.multinomial,
                self.prox,
                self.sampler.state,
                self.state,
                n_updates,
            )
        kernel = _spdc_l2 if self.scaled else _spdc_lazy if self.lazy else _spdc_dense
        return kernel(
            problem.rows,
            problem.loss.params,
            self.prox,
            self.sampler.state,
            self.state,
            n_updates,
        )

    def extras(self) -> dict:
        return {"nnz_y": int(np.count_nonzero(self.y))}


def solve(problem: Problem, params: Params, recorder: Recorder, seed: int) -> str:
    method = SPDC(problem, params, seed)
    return run_chunked(method, recorder, problem.data.nnz)
