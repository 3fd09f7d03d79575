"""Doubly greedy primal-dual coordinate descent (DGPD): Lei, Yen, Wu, Dhillon & Ravikumar,
"Doubly Greedy Primal-Dual Coordinate Descent for Sparse ERM", ICML 2017, Algorithms 1-2.

DGPD works on the saddle form L(x, y) = g(x) + 1/n yᵀAx − 1/n Σ φ*(yᵢ) with
g(x) = l1‖x‖₁ + l2/2‖x‖² (the paper's λ and μ) and keeps w = Ax and z = Aᵀy.

* Primal candidates, eq. (4): x̄ₖ = argmin_α zₖα/n + gₖ(α) = −soft(zₖ/n, l1)/l2, i.e. x̄(y).
  Algorithm 1 moves the coordinate whose move to x̄ₖ decreases L(·, y) most, eq. (5);
  Algorithm 2 admits the largest |x̄ₖ| outside the active set, eq. (10).
* Dual step, eqs. (8) and (13) with the 1/n of the saddle form on φ* (as in the proof of
  Lemma A.2): yᵢ ← argmax_β {wᵢβ/n − φ*(β)/n − (β − yᵢ)²/(2η)}, the 1-D problem that
  :func:`faceoff.solvers.losses.loss_dual_step` solves with ``inv_s = n/η``.
* Dual selection, eqs. (7) and (12): the Gauss–Southwell rule on the partial gradient
  (wᵢ − φᵢ*'(yᵢ))/n, taken as the length |β − yᵢ| of the step (8) it leads to (the GS-r form
  of Nutini et al. 2015). For the squared loss this is |wᵢ − φᵢ*'(yᵢ)|/(1 + n/η): the same
  argmax as eq. (7). For the classification losses it is eq. (7) projected on dom φ*: a
  coordinate at the edge of the domain whose gradient points outwards is not chosen (with
  y = 0 and a margin ≥ 1 the smoothed hinge cannot move), and it stays finite for logistic,
  whose φ*' is infinite at y = 0, where every coordinate starts.
* Step size, Theorem 4.2 eq. (16): η₁₆ = 2n²μ / (s(5R² + nγμ)), γ = 1/β the strong
  convexity of φ*, R = maxᵢ‖aᵢ‖ and s = ‖x − x̄‖₀ counted at the current iterate (at least
  1): ``step="theorem"``, or a fixed ``eta``. It is safe but small: on standardized
  breast_cancer (smoothed hinge, l2 = 1e-3) η₁₆ ≈ 0.01 leaves a gap of 1e3 after 5000
  epochs, where η = 5 certifies 1e-9 in 1100 and η = 7 diverges.
* ``step="adaptive"`` (the default, Algorithm 1 only): η = m·η₁₆, the factor m ≥ 1 found
  by step doubling with backtracking on the theorem's own potential (as Nesterov's
  adaptive composite gradient method, Math. Program. 140, 2013, adapts its Lipschitz
  estimate). Definition 4.1's Δ = Δ_p + Δ_d is, up to the constant D*,
  Φ(x, y) = Δ_p − D(y) with Δ_p = L(x, y) − D(y), both computable in O(n + d) from w and z
  (Δ_p taken at the current x rather than after the next primal step). Every ``PERIOD``
  iterations the period is tested for sufficient decrease,
  Φ_old − Φ_new ≥ (1 − ρ)·Δ_p,old with ρ = Π 2n/(2n + η₁₆γ) over the period: eq. (15)
  for η₁₆ gives Δ_old − Δ_new ≥ (1 − ρ)·Δ_old ≥ (1 − ρ)·Δ_p,old, so the theorem's step
  passes it (up to that shift). A passing period is kept and m doubles (once the back-off
  below allows); a failing one is undone (x, y, w, z restored from its start) and m
  halves, and the periods to pass before the next doubling double, up to ``MAX_WAIT``
  (back-off: m settles below the stability edge instead of oscillating across it, and
  can still grow later). At m = 1 every period is kept: the fallback is the theorem's η.
  Deterministic: no randomness. The rejected periods' reads of A count in the epochs, and
  a trace point taken inside a period that is then undone shows an iterate the run left.

``variant="basic"`` is Algorithm 1: per iteration one primal and one dual coordinate, each
chosen by a scan of all d (resp. n) candidates from the maintained z (resp. w); the scans
read no entry of A, the updates (6) and (9) read one column and one row.

``variant="active_set"`` is Algorithm 2 with the sparse implementation of §3.2. A search
recomputes Aᵀy over the active rows and Ax over the active columns (eq. (14)), resets x to
x̄ on A_x (eq. (11)), drops the zeros (step 6) and admits primal candidates by eq. (10) and
dual ones by eq. (12); it then copies the submatrix [A]_{A_y × A_x}, and ``inner_passes``
rounds of updates follow on it alone (§5 uses 5). A round visits the active rows in order:
step (13) on yᵢ from the submatrix row, then (11) on the primal coordinates that row
touches, so x = x̄(y) on A_x throughout and ‖x − x̄‖₀ only counts candidates not yet
admitted. Deviation from the printed algorithm, with the batch extension §3 calls
straightforward: a search admits up to max(1, |A|) candidates per set (the best ones with a
non-zero score) instead of one, so an active set can double per search; with one per
search, reaching the dual support of a9a (thousands of rows) takes thousands of searches,
each a pass over the active rows.

Epochs count the entries of A read: a column or a row per update in Algorithm 1; the active
rows (twice: Aᵀy and the submatrix copy) and active columns per search, and the
submatrix row per update in Algorithm 2.

One-vs-rest K-class problems (the paper's own setting, §5: K classes, smoothed hinge,
l1 + l2; X of shape (n_features, K), Y of shape (n_samples, K)). The objective is the sum
of K binary problems on the same A, so the saddle function is Σₖ Lₖ(xₖ, yₖ):

* ``active_set`` shares the active sets across classes (:func:`_search_k`,
  :func:`_active_set_k`): A_x holds features, A_y rows. A search admits the features with
  the largest maxₖ|x̄ⱼₖ| (eq. (10) over the d·K primal coordinates, a coordinate admitting
  its feature) and the rows with the largest maxₖ|βᵢₖ| (eq. (12) likewise), up to
  max(1, |A|) of each as in the binary case; step 6 drops a feature (row) once all its K
  coefficients (dual variables) are 0; on A_x all K coefficients follow x̄(y), eq. (11).
  That is how §3.2's sparse implementation wins with K classes: Aᵀy, Ax and the
  submatrix [A]_{A_y × A_x} are built once for the K classes (one submatrix, at most
  nnz(A) entries; per-class sets need K of them, up to K·nnz(A)), and a round reads each
  submatrix row once for its K dual steps (13) and the K-column updates of z and x of the
  classes that moved; the greedy scans are O((n + d)·K) arithmetic over the maintained
  W = AX and Z = AᵀY, with no read of A. The price: a class also works on the features
  and rows the other classes made active. Measured on news20 (K = 20, smoothed hinge,
  l1 = 0.1/n; bench/results/ovr_epoch_stoch.md), against K binary active-set runs:
  with l2 = 1/n the shared sets certify a relative gap of 1e-6 2.5× sooner (1.3 s
  against 3.3 s: searches 27 against 68 ms); with l2 = 0.01/n, the paper's Figure 1,
  1.3× later (30 s against 23 s), the union sets holding 5× the per-class coefficients,
  so the rounds take 2.6× the per-class time (60 against 23 ms an outer iteration) while
  the searches take 0.6×. Each class keeps its own step η₁₆ (eq. (16) with its own
  sₖ = ‖xₖ − x̄ₖ‖₀: Theorem 4.2 holds class by class, the classes being independent
  problems). Cost per outer iteration (a search and ``inner_passes`` rounds):
  K·(2·Σ_{A_y} nnz(Aᵢ) + Σ_{A_x} nnz(Aʲ) + inner_passes·nnz([A]_{A_y × A_x}))
  multiply-adds plus the (n + d)·K scans, each entry of A read once for the K classes:
  §3.2's sparse count, K-fold; against the paper's O(s(n + d)) per iteration (Theorem
  2.1, s = nnz(X)) it measured 1-4 % of s(n + d) on news20.
* ``basic`` (Algorithm 1) picks one primal and one dual coordinate per iteration by scans
  of the whole z and w; its greedy choices are per class (the classes share no
  coordinate), so no read of A can serve two classes: a K-class run advances the K binary
  runs (labels ±1 of each class, the binary kernel, its adaptive step per class) by the
  same number of iterations per chunk, which is the same as running them in lock-step.

The multinomial form is not supported: the dual greedy rule (7)/(12) and the step (8)/(13)
are scalar per dual coordinate, and a row's K dual variables of the multinomial form are
coupled on the simplex (no coordinate of them moves alone), while the analysis of
Theorem 4.2 (Lemma A.3) uses the scalar 1-D step; a block version is a different method.
Its catalogue entry takes one-vs-rest only, so a multinomial problem is refused before it
runs (``SolverSpec.check``).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from faceoff.solvers.algorithms.dgpd import Params
from faceoff.solvers.driver import PrimalMethod, run_chunked
from faceoff.solvers.losses import (
    EXACT_TOL,
    dual_step,
    loss_conj,
    loss_dual_step,
    warm_starts,
)
from faceoff.solvers.penalties import soft_threshold
from faceoff.solvers.problem import Problem
from faceoff.solvers.sampling import make_rng_state, shuffle_prefix
from faceoff.solvers.trace import Recorder

BASIC, ACTIVE_SET = 0, 1
VARIANTS = {"basic": BASIC, "active_set": ACTIVE_SET}
ADAPTIVE, THEOREM = 0, 1
STEPS = {"adaptive": ADAPTIVE, "theorem": THEOREM}
MAX_FACTOR = 2.0**40  # bound of the adaptive step's factor m in η = m·η₁₆
PERIOD = 100  # iterations between two tests of the adaptive step (a test costs ~one iteration)
MAX_WAIT = 64  # bound of the back-off: kept periods before m may double again

# state of the adaptive step: integers, then floats
_COUNT, _WAIT, _STREAK, _ACCEPTED, _REJECTED = range(5)
_FACTOR, _POTENTIAL, _PRIMAL_GAP, _LOG_RATE = range(4)

# integer state of the active-set kernel
_N_AX, _N_AY, _PASS, _CURSOR, _SEARCHES = range(5)


class DgpdParams(NamedTuple):
    """The step rule of a dgpd run (a Numba tuple): γ = 1/β (φ* is γ-strongly convex), η
    (≤ 0: eq. (16) at every step), R² = maxᵢ‖aᵢ‖², the rounds per search (Algorithm 2),
    the step rule (ADAPTIVE or THEOREM, when η ≤ 0) and the iterations between two tests
    of the adaptive step (Algorithm 1)."""

    gamma_dual: float
    eta: float
    r_sq: float
    inner_passes: int
    step: int
    period: int


class StepSearch(NamedTuple):
    """The adaptive step of Algorithm 1 (a Numba tuple): the last accepted iterate
    (x, y, w, z, warm, restored when a period is rejected), ``istate`` (_COUNT, _WAIT,
    _STREAK, _ACCEPTED, _REJECTED) and ``fstate`` (_FACTOR m, _POTENTIAL Φ and _PRIMAL_GAP
    Δ_p at the accepted iterate, _LOG_RATE: Σ log of eq. (15)'s factor over the period)."""

    x: np.ndarray
    y: np.ndarray
    w: np.ndarray
    z: np.ndarray
    warm: np.ndarray
    istate: np.ndarray
    fstate: np.ndarray


class DgpdState(NamedTuple):
    """The iterate of a dgpd run (a Numba tuple): x, y, w = Ax, z = Aᵀy, the dual step's
    warm starts and ``fstate`` = (η, n/η, s) of the last step."""

    x: np.ndarray
    y: np.ndarray
    w: np.ndarray
    z: np.ndarray
    warm: np.ndarray
    fstate: np.ndarray


class ActiveSets(NamedTuple):
    """Algorithm 2's active sets and submatrix (a Numba tuple).

    act_x, in_x / act_y, in_y : the active columns / rows (list and mask);
    sub_ptr, sub_idx, sub_val : the submatrix [A]_{A_y × A_x} in CSR, rows in A_y order;
    istate : counters _N_AX, _N_AY, _PASS, _CURSOR, _SEARCHES;
    score, cand : scratch of a search; order, rng_state : the random order of a round.
    """

    act_x: np.ndarray
    in_x: np.ndarray
    act_y: np.ndarray
    in_y: np.ndarray
    sub_ptr: np.ndarray
    sub_idx: np.ndarray
    sub_val: np.ndarray
    istate: np.ndarray
    score: np.ndarray
    cand: np.ndarray
    order: np.ndarray
    rng_state: np.ndarray


@njit(cache=True)
def _theorem_eta(n_samples, l2, gamma_dual, r_sq, s):
    """Step size η of Theorem 4.2, eq. (16): 2n²μ / (s(5R² + nγμ)), s ≥ 1."""
    n = float(n_samples)
    return 2.0 * n * n * l2 / (max(s, 1) * (5.0 * r_sq + n * gamma_dual * l2))


@njit(cache=True)
def _primal_candidate(zk, xk, inv_n, l1, l2):
    """(x̄ₖ, Δₖ): eq. (4), x̄ₖ = argmin_α zₖα/n + l1|α| + l2α²/2, and the change of
    L(·, y) when xₖ moves there, the criterion of eq. (5) (≤ 0)."""
    v = zk * inv_n
    xb = -soft_threshold(v, l1) / l2
    change = v * (xb - xk) + l1 * (abs(xb) - abs(xk)) + 0.5 * l2 * (xb * xb - xk * xk)
    return xb, change


@njit(cache=True)
def _greedy_primal(z, x, n_samples, l1, l2):
    """Algorithm 1's primal choice: (j, x̄ⱼ, s) with j the argmin of eq. (5) (−1 if no
    coordinate decreases L) and s = ‖x − x̄‖₀ after xⱼ ← x̄ⱼ."""
    inv_n = 1.0 / n_samples
    j = -1
    best = 0.0
    xb_j = 0.0
    s = 0
    for k in range(z.shape[0]):
        xb, change = _primal_candidate(z[k], x[k], inv_n, l1, l2)
        if xb != x[k]:
            s += 1
        if change < best:
            best = change
            j = k
            xb_j = xb
    if j >= 0:
        s -= 1
    return j, xb_j, s


@njit(cache=True)
def _greedy_dual(w, y, b, warm, loss, inv_s):
    """Algorithm 1's dual choice, eq. (7) in its GS-r form: (i, β, warm) with i the argmax
    of |β − yᵢ|, β the step (8) from yᵢ (−1 if no coordinate moves)."""
    i = -1
    best = 0.0
    beta_i = 0.0
    warm_i = np.nan
    for k in range(y.shape[0]):
        beta, warm_k, _ = loss_dual_step(loss, y[k], w[k], b[k], inv_s, warm[k], EXACT_TOL)
        length = abs(beta - y[k])
        if length > best:
            best = length
            i = k
            beta_i = beta
            warm_i = warm_k
    return i, beta_i, warm_i


@njit(cache=True)
def _potential(loss, penalty, b, x, y, w, z):
    """(Δ_p, Δ − D*) of Definition 4.1 at (x, y), from the maintained w = Ax and z = Aᵀy in
    O(n + d) without reading A: Δ_p = L(x, y) − D(y) = g(x) + yᵀw/n + g*(−z/n) ≥ 0 and
    Δ − D* = Δ_p − D(y), with D(y) = −Σ φ*(yᵢ)/n − g*(−z/n), g*(v) = Σ soft(vₖ, l1)²/(2l2)."""
    l1, l2 = penalty
    n = y.shape[0]
    coupling = 0.0
    conj = 0.0
    for i in range(n):
        coupling += y[i] * w[i]
        conj += loss_conj(loss, y[i], b[i])
    g = 0.0
    g_conj = 0.0
    for k in range(x.shape[0]):
        g += l1 * abs(x[k]) + 0.5 * l2 * x[k] * x[k]
        v = soft_threshold(z[k] / n, l1)
        g_conj += v * v / (2.0 * l2)
    primal_gap = g + coupling / n + g_conj
    return primal_gap, primal_gap + conj / n + g_conj


@njit(cache=True)
def _test_period(loss, penalty, b, it, search):
    """The end of a period of the adaptive step (module docstring): accept the period and
    keep its iterate, or reject it and go back to the last accepted one; update m."""
    istate, fstate = search.istate, search.fstate
    primal_gap, potential = _potential(loss, penalty, b, it.x, it.y, it.w, it.z)
    factor = fstate[_FACTOR]
    # sufficient decrease: Δ fell by (1 − ρ)·Δ_p ≤ (1 − ρ)·Δ, ρ = eq. (15)'s factor for
    # η₁₆ over the period, as Theorem 4.2 guarantees with η₁₆
    decrease = -math.expm1(fstate[_LOG_RATE]) * fstate[_PRIMAL_GAP]
    enough = potential <= fstate[_POTENTIAL] - decrease
    if factor <= 1.0 or (enough and math.isfinite(potential)):  # m = 1: η₁₆, kept
        search.x[:] = it.x
        search.y[:] = it.y
        search.w[:] = it.w
        search.z[:] = it.z
        search.warm[:] = it.warm
        fstate[_POTENTIAL], fstate[_PRIMAL_GAP] = potential, primal_gap
        istate[_ACCEPTED] += 1
        istate[_STREAK] += 1
        if istate[_STREAK] > istate[_WAIT]:
            fstate[_FACTOR] = min(2.0 * factor, MAX_FACTOR)
            istate[_STREAK] = 0
    else:
        it.x[:] = search.x
        it.y[:] = search.y
        it.w[:] = search.w
        it.z[:] = search.z
        it.warm[:] = search.warm
        fstate[_FACTOR] = max(0.5 * factor, 1.0)
        istate[_REJECTED] += 1
        istate[_WAIT] = min(max(1, 2 * istate[_WAIT]), MAX_WAIT)  # back off
        istate[_STREAK] = 0
    istate[_COUNT] = 0
    fstate[_LOG_RATE] = 0.0


@njit(cache=True)
def _basic(data, loss, penalty, params, it, search, n_updates):
    """``n_updates`` iterations of Algorithm 1 (CSC and CSR arrays of A); returns the
    entries of A read. ``params.eta`` ≤ 0 asks for eq. (16) at every iteration, times the
    factor m of ``search`` with the adaptive step; ``it.fstate`` receives (η, n/η, s) of
    the last one."""
    col_ptr, col_idx, col_val = data.csc
    row_ptr, row_idx, row_val = data.csr
    b = data.b
    l1, l2 = penalty
    gamma_dual, eta, r_sq = params.gamma_dual, params.eta, params.r_sq
    adaptive = eta <= 0.0 and params.step == ADAPTIVE
    x, y, w, z, warm, fstate = it
    n_samples = y.shape[0]
    visited = 0
    for _ in range(n_updates):
        j, xb_j, s = _greedy_primal(z, x, n_samples, l1, l2)  # eqs. (4)-(5)
        if j >= 0:
            delta = xb_j - x[j]
            x[j] = xb_j
            for k in range(col_ptr[j], col_ptr[j + 1]):  # eq. (6): w += Δ·A^j
                w[col_idx[k]] += delta * col_val[k]
            visited += col_ptr[j + 1] - col_ptr[j]
        if eta > 0.0:
            step = eta
        else:
            step = _theorem_eta(n_samples, l2, gamma_dual, r_sq, s)
            if adaptive:  # eq. (15)'s factor for η₁₆, then η = m·η₁₆
                search.fstate[_LOG_RATE] -= math.log1p(0.5 * step * gamma_dual / n_samples)
                step *= search.fstate[_FACTOR]
        fstate[0], fstate[1], fstate[2] = step, n_samples / step, s
        i, beta, warm_i = _greedy_dual(w, y, b, warm, loss, fstate[1])
        if i >= 0:  # eq. (8)
            delta = beta - y[i]
            y[i] = beta
            warm[i] = warm_i
            for k in range(row_ptr[i], row_ptr[i + 1]):  # eq. (9): z += Δ·A_i
                z[row_idx[k]] += delta * row_val[k]
            visited += row_ptr[i + 1] - row_ptr[i]
        if adaptive:
            search.istate[_COUNT] += 1
            if search.istate[_COUNT] >= params.period:
                _test_period(loss, penalty, b, it, search)
    return visited


@njit(cache=True)
def _top(score, cand, count, m):
    """The (at most) ``m`` entries of cand[:count] with the largest score."""
    if count <= m:
        return cand[:count].copy()
    order = np.argsort(-score[:count], kind="mergesort")
    return cand[order[:m]]


@njit(cache=True)
def _members(member, active):
    """active[:count] ← the indices k with member[k], in increasing order; returns count.

    (Index order keeps the submatrix rows in memory order; rounds visit them in a random
    order, see :func:`_active_set`.)"""
    count = 0
    for k in range(member.shape[0]):
        if member[k]:
            active[count] = k
            count += 1
    return count


@njit(cache=True)
def _search(data, loss, penalty, params, it, active):
    """One search of Algorithm 2 (steps 6, 4 and 5, sparse as in §3.2) and the copy of the
    submatrix [A]_{A_y × A_x} (CSR, rows in A_y order); returns the entries of A read."""
    x, y, w, z, _, fstate = it
    act_x, in_x, act_y, in_y, sub_ptr, sub_idx, sub_val, istate, score, cand, _, _ = active
    col_ptr, col_idx, col_val = data.csc
    row_ptr, row_idx, row_val = data.csr
    b = data.b
    l1, l2 = penalty
    gamma_dual, eta, r_sq = params.gamma_dual, params.eta, params.r_sq
    n_samples, n_features = y.shape[0], x.shape[0]
    inv_n = 1.0 / n_samples
    inv_l2 = 1.0 / l2
    visited = 0
    n_ay = 0
    for p in range(istate[_N_AY]):  # step 6 on y
        i = act_y[p]
        if y[i] != 0.0:
            act_y[n_ay] = i
            n_ay += 1
        else:
            in_y[i] = False
    z[:] = 0.0
    for p in range(n_ay):  # eq. (14): z = Aᵀy = Σ_{i ∈ A_y} yᵢ·A_i
        i = act_y[p]
        for k in range(row_ptr[i], row_ptr[i + 1]):
            z[row_idx[k]] += y[i] * row_val[k]
        visited += row_ptr[i + 1] - row_ptr[i]
    n_ax = 0
    for p in range(istate[_N_AX]):  # eq. (11) on A_x, then step 6 on x
        j = act_x[p]
        x[j] = -soft_threshold(z[j] * inv_n, l1) * inv_l2
        if x[j] != 0.0:
            act_x[n_ax] = j
            n_ax += 1
        else:
            in_x[j] = False
    count = 0
    for k in range(n_features):  # eq. (10): |x̄ₖ| outside A_x
        if not in_x[k]:
            xb = soft_threshold(z[k] * inv_n, l1)
            if xb != 0.0:
                score[count] = abs(xb)
                cand[count] = k
                count += 1
    chosen = _top(score, cand, count, max(1, n_ax))
    for j in chosen:  # eq. (11) on the new coordinates
        x[j] = -soft_threshold(z[j] * inv_n, l1) * inv_l2
        in_x[j] = True
    n_ax = _members(in_x, act_x)
    support_gap = count - chosen.shape[0]  # ‖x − x̄‖₀: x = x̄ on A_x
    w[:] = 0.0
    for p in range(n_ax):  # eq. (14): w = Ax = Σ_{j ∈ A_x} xⱼ·A^j
        j = act_x[p]
        for k in range(col_ptr[j], col_ptr[j + 1]):
            w[col_idx[k]] += x[j] * col_val[k]
        visited += col_ptr[j + 1] - col_ptr[j]
    step = eta if eta > 0.0 else _theorem_eta(n_samples, l2, gamma_dual, r_sq, support_gap)
    inv_s = n_samples / step
    count = 0
    for k in range(n_samples):  # eq. (12): the step (13) from yₖ = 0 outside A_y
        if not in_y[k]:
            beta = loss_dual_step(loss, 0.0, w[k], b[k], inv_s, np.nan, EXACT_TOL)[0]
            if beta != 0.0:
                score[count] = abs(beta)
                cand[count] = k
                count += 1
    for i in _top(score, cand, count, max(1, n_ay)):
        in_y[i] = True
    n_ay = _members(in_y, act_y)
    nnz_sub = 0
    for p in range(n_ay):  # §3.2: the submatrix of active rows × active columns
        i = act_y[p]
        sub_ptr[p] = nnz_sub
        for k in range(row_ptr[i], row_ptr[i + 1]):
            if in_x[row_idx[k]]:
                sub_idx[nnz_sub] = row_idx[k]
                sub_val[nnz_sub] = row_val[k]
                nnz_sub += 1
        visited += row_ptr[i + 1] - row_ptr[i]
    sub_ptr[n_ay] = nnz_sub
    istate[_N_AX] = n_ax
    istate[_N_AY] = n_ay
    istate[_SEARCHES] += 1
    fstate[0], fstate[1], fstate[2] = step, inv_s, support_gap
    return visited


@njit(cache=True)
def _shuffle_rows(rng_state, order, count):
    """order[:count] ← a random permutation of 0 … count − 1 (Fisher–Yates)."""
    for k in range(count):
        order[k] = k
    shuffle_prefix(rng_state, order, count)


@njit(cache=True)
def _active_set(data, loss, penalty, params, it, active, n_updates):
    """``n_updates`` dual updates of Algorithm 2, with a search after every
    ``inner_passes`` rounds over A_y; returns the entries of A read.

    Each round visits the active rows in a fresh random order (``order`` holds submatrix
    row positions): in any fixed order these Gauss–Seidel sweeps converged >10× slower on
    a9a, as cyclic coordinate methods can (dual_cd's ``permutation`` sampling does the same).
    """
    b = data.b
    l1, l2 = penalty
    inner_passes = params.inner_passes
    x, y, w, z, warm, fstate = it
    act_y, istate, order, rng_state = active.act_y, active.istate, active.order, active.rng_state
    sub_ptr, sub_idx, sub_val = active.sub_ptr, active.sub_idx, active.sub_val
    n_samples = y.shape[0]
    inv_n = 1.0 / n_samples
    inv_l2 = 1.0 / l2
    visited = 0
    cursor, rounds = istate[_CURSOR], istate[_PASS]
    inv_s = fstate[1]
    for _ in range(n_updates):
        if cursor >= istate[_N_AY]:
            cursor = 0
            rounds += 1
            _shuffle_rows(rng_state, order, istate[_N_AY])
        if rounds >= inner_passes:
            visited += _search(data, loss, penalty, params, it, active)
            inv_s = fstate[1]
            cursor = rounds = 0
            if istate[_N_AY] == 0:  # no dual coordinate can move: search again next
                rounds = inner_passes
                continue
            _shuffle_rows(rng_state, order, istate[_N_AY])
        p = order[cursor]
        i = act_y[p]
        start, end = sub_ptr[p], sub_ptr[p + 1]
        cursor += 1
        wi = 0.0
        for k in range(start, end):  # wᵢ = [A_i]_{A_x}·x
            wi += sub_val[k] * x[sub_idx[k]]
        beta = dual_step(loss, warm, i, y[i], wi, b[i], inv_s)[0]  # eq. (13)
        delta = beta - y[i]
        if delta != 0.0:
            y[i] = beta
            for k in range(start, end):  # z += Δ·[A_i]_{A_x}; eq. (11) where it changed
                j = sub_idx[k]
                z[j] += delta * sub_val[k]
                x[j] = -soft_threshold(z[j] * inv_n, l1) * inv_l2
        visited += end - start
    istate[_CURSOR], istate[_PASS] = cursor, rounds
    return visited


# ------------------------------------------------------------------- K-class (one-vs-rest)


class DgpdKState(NamedTuple):
    """The iterate of a one-vs-rest dgpd run, active-set variant (a Numba tuple): X, Y,
    W = AX, Z = AᵀY (shapes (d, K), (n, K), (n, K), (d, K)), the dual steps' warm starts
    (entry i·K + c) and ``fstate`` (3, K) = (η, n/η, s) of each class at the last search."""

    x: np.ndarray
    y: np.ndarray
    w: np.ndarray
    z: np.ndarray
    warm: np.ndarray
    fstate: np.ndarray


@njit(cache=True)
def _search_k(data, loss, penalty, params, it, active):
    """:func:`_search` with the active sets shared by the K classes (module docstring):
    step 6, Z = AᵀY over A_y and W = AX over A_x with one read of a row (column) for the K
    classes, eqs. (10)-(12) on the K-class scores, a step per class and one submatrix.
    Returns the entries of A read."""
    x, y, w, z, _, fstate = it
    act_x, in_x, act_y, in_y, sub_ptr, sub_idx, sub_val, istate, score, cand, _, _ = active
    col_ptr, col_idx, col_val = data.csc
    row_ptr, row_idx, row_val = data.csr
    labels = data.b
    l1, l2 = penalty
    gamma_dual, eta, r_sq = params.gamma_dual, params.eta, params.r_sq
    n_samples, K = y.shape
    n_features = x.shape[0]
    inv_n = 1.0 / n_samples
    inv_l2 = 1.0 / l2
    visited = 0
    n_ay = 0
    for p in range(istate[_N_AY]):  # step 6 on Y: a row leaves once its K duals are 0
        i = act_y[p]
        nonzero = False
        for c in range(K):
            nonzero |= y[i, c] != 0.0
        if nonzero:
            act_y[n_ay] = i
            n_ay += 1
        else:
            in_y[i] = False
    z[:] = 0.0
    for p in range(n_ay):  # eq. (14): Z = AᵀY = Σ_{i ∈ A_y} Aᵢᵀyᵢᵀ, a row read once
        i = act_y[p]
        for k in range(row_ptr[i], row_ptr[i + 1]):
            j = row_idx[k]
            a = row_val[k]
            for c in range(K):
                z[j, c] += a * y[i, c]
        visited += row_ptr[i + 1] - row_ptr[i]
    n_ax = 0
    for p in range(istate[_N_AX]):  # eq. (11) on A_x, then step 6 on X
        j = act_x[p]
        nonzero = False
        for c in range(K):
            x[j, c] = -soft_threshold(z[j, c] * inv_n, l1) * inv_l2
            nonzero |= x[j, c] != 0.0
        if nonzero:
            act_x[n_ax] = j
            n_ax += 1
        else:
            in_x[j] = False
    gaps = np.zeros(K, np.int64)  # sₖ = ‖xₖ − x̄ₖ‖₀: x = x̄ on A_x
    count = 0
    for j in range(n_features):  # eq. (10): maxₖ |x̄ⱼₖ| outside A_x
        if not in_x[j]:
            best = 0.0
            for c in range(K):
                xb = abs(soft_threshold(z[j, c] * inv_n, l1))
                gaps[c] += xb != 0.0
                best = max(best, xb)
            if best != 0.0:
                score[count] = best
                cand[count] = j
                count += 1
    for j in _top(score, cand, count, max(1, n_ax)):  # eq. (11) on the new features
        for c in range(K):
            x[j, c] = -soft_threshold(z[j, c] * inv_n, l1) * inv_l2
            gaps[c] -= x[j, c] != 0.0
        in_x[j] = True
    n_ax = _members(in_x, act_x)
    w[:] = 0.0
    for p in range(n_ax):  # eq. (14): W = AX = Σ_{j ∈ A_x} Aʲxⱼ, a column read once
        j = act_x[p]
        for k in range(col_ptr[j], col_ptr[j + 1]):
            i = col_idx[k]
            a = col_val[k]
            for c in range(K):
                w[i, c] += a * x[j, c]
        visited += col_ptr[j + 1] - col_ptr[j]
    for c in range(K):  # eq. (16) per class
        step = eta if eta > 0.0 else _theorem_eta(n_samples, l2, gamma_dual, r_sq, gaps[c])
        fstate[0, c], fstate[1, c], fstate[2, c] = step, n_samples / step, gaps[c]
    count = 0
    for i in range(n_samples):  # eq. (12): maxₖ of the step (13) from yᵢₖ = 0 outside A_y
        if not in_y[i]:
            best = 0.0
            label = labels[i]
            for c in range(K):
                b = 1.0 if c == label else -1.0
                beta = loss_dual_step(loss, 0.0, w[i, c], b, fstate[1, c], np.nan, EXACT_TOL)[0]
                best = max(best, abs(beta))
            if best != 0.0:
                score[count] = best
                cand[count] = i
                count += 1
    for i in _top(score, cand, count, max(1, n_ay)):
        in_y[i] = True
    n_ay = _members(in_y, act_y)
    nnz_sub = 0
    for p in range(n_ay):  # §3.2: one submatrix of active rows × active features
        i = act_y[p]
        sub_ptr[p] = nnz_sub
        for k in range(row_ptr[i], row_ptr[i + 1]):
            if in_x[row_idx[k]]:
                sub_idx[nnz_sub] = row_idx[k]
                sub_val[nnz_sub] = row_val[k]
                nnz_sub += 1
        visited += row_ptr[i + 1] - row_ptr[i]
    sub_ptr[n_ay] = nnz_sub
    istate[_N_AX] = n_ax
    istate[_N_AY] = n_ay
    istate[_SEARCHES] += 1
    return visited


@njit(cache=True)
def _active_set_k(data, loss, penalty, params, it, active, n_updates):
    """:func:`_active_set` for a one-vs-rest problem: an update reads a submatrix row once,
    forms its K scores, takes the K dual steps (13) and updates z and x (11) of its
    features in the classes that moved. Returns the entries of A read."""
    labels = data.b
    l1, l2 = penalty
    inner_passes = params.inner_passes
    x, y, w, z, warm, fstate = it
    act_y, istate, order, rng_state = active.act_y, active.istate, active.order, active.rng_state
    sub_ptr, sub_idx, sub_val = active.sub_ptr, active.sub_idx, active.sub_val
    n_samples, K = y.shape
    inv_n = 1.0 / n_samples
    inv_l2 = 1.0 / l2
    # scratch allocated here, not passed in: LLVM then knows it does not alias X
    zi = np.empty(K)
    delta = np.empty(K)
    moved = np.empty(K, np.int64)
    visited = 0
    cursor, rounds = istate[_CURSOR], istate[_PASS]
    for _ in range(n_updates):
        if cursor >= istate[_N_AY]:
            cursor = 0
            rounds += 1
            _shuffle_rows(rng_state, order, istate[_N_AY])
        if rounds >= inner_passes:
            visited += _search_k(data, loss, penalty, params, it, active)
            cursor = rounds = 0
            if istate[_N_AY] == 0:  # no dual coordinate can move: search again next
                rounds = inner_passes
                continue
            _shuffle_rows(rng_state, order, istate[_N_AY])
        p = order[cursor]
        i = act_y[p]
        start, end = sub_ptr[p], sub_ptr[p + 1]
        cursor += 1
        for c in range(K):
            zi[c] = 0.0
        for k in range(start, end):  # wᵢ = [Aᵢ]_{A_x}·X
            j = sub_idx[k]
            a = sub_val[k]
            for c in range(K):
                zi[c] += a * x[j, c]
        label = labels[i]
        count = 0
        for c in range(K):  # eq. (13) per class
            b = 1.0 if c == label else -1.0
            beta = dual_step(loss, warm, i * K + c, y[i, c], zi[c], b, fstate[1, c])[0]
            if beta != y[i, c]:
                delta[count] = beta - y[i, c]
                moved[count] = c
                count += 1
                y[i, c] = beta
        if count > 0:
            for k in range(start, end):  # z += [Aᵢ]_{A_x}ᵀδ; eq. (11) where it changed
                j = sub_idx[k]
                a = sub_val[k]
                for q in range(count):
                    c = moved[q]
                    z[j, c] += delta[q] * a
                    x[j, c] = -soft_threshold(z[j, c] * inv_n, l1) * inv_l2
        visited += end - start
    istate[_CURSOR], istate[_PASS] = cursor, rounds
    return visited


class DGPD(PrimalMethod):
    """State of one dgpd run (see module docstring).

    Parameters
    ----------
    problem : Problem
    variant : str
        ``basic`` (Algorithm 1) or ``active_set`` (Algorithm 2).
    eta : float or None
        Fixed dual step size η; None for the step rule ``step``.
    inner_passes : int
        Rounds of updates on the active sets per search (Algorithm 2).
    seed : int
        Seeds the random order of the rows within a round (Algorithm 2).
    step : str
        ``adaptive`` (m·η₁₆, Algorithm 1) or ``theorem`` (η₁₆ of eq. (16)); Algorithm 2
        always uses η₁₆.
    period : int or None
        Iterations between two tests of the adaptive step; None for ``PERIOD``.
    """

    variant: int
    params: DgpdParams
    n_coords: int
    nnz_per_update: float
    eta: float

    def __init__(
        self,
        problem: Problem,
        variant: str,
        eta: float | None,
        inner_passes: int,
        seed: int,
        step: str = "adaptive",
        period: int | None = None,
    ) -> None:
        if variant not in VARIANTS:
            raise ValueError(f"unknown variant {variant!r}; accepted: {', '.join(VARIANTS)}")
        if step not in STEPS:
            raise ValueError(f"unknown step {step!r}; accepted: {', '.join(STEPS)}")
        if eta is not None and not (eta > 0 and math.isfinite(eta)):
            raise ValueError(f"eta must be a positive number or None, got {eta!r}")
        if inner_passes < 1:
            raise ValueError(f"inner_passes must be >= 1, got {inner_passes!r}")
        self.columns: list[DGPD] = []  # Algorithm 1 on a K-class problem: a run per class
        if problem.multiclass is not None and variant == "basic":
            for k in range(problem.n_classes):  # class k against the rest, A shared
                labels = np.where(problem.b == k, 1.0, -1.0)
                column = Problem(problem.data, labels, problem.loss, problem.penalty)
                self.columns.append(DGPD(column, variant, eta, inner_passes, seed, step, period))
            first = self.columns[0]
            self.problem, self.variant, self.params = problem, first.variant, first.params
            self.n_coords = first.n_coords
            self.nnz_per_update = problem.n_classes * first.nnz_per_update
            self.eta = first.eta
            self.y = np.zeros(0)
            return
        data = problem.data
        n, d = data.n_samples, data.n_features
        self.problem = problem
        self.variant = VARIANTS[variant]
        self.inner_passes = int(inner_passes)
        self.n_coords = n  # one dual coordinate step per update in both variants
        self.eta = -1.0 if eta is None else float(eta)
        self.gamma_dual = 1.0 / problem.loss.smoothness  # γ: φ* is γ-strongly convex
        self.r_sq = float(data.row_sq_norms.max())  # R² = maxᵢ ‖aᵢ‖²
        first_eta = (
            self.eta
            if eta is not None
            else _theorem_eta(n, problem.penalty.l2, self.gamma_dual, self.r_sq, 1)
        )
        self.period = max(1, int(PERIOD if period is None else period))
        self.params = DgpdParams(
            self.gamma_dual, self.eta, self.r_sq, self.inner_passes, STEPS[step], self.period
        )
        self.k_class = problem.multiclass is not None
        if self.k_class:  # one-vs-rest, shared active sets
            K = problem.n_classes
            fstate = np.empty((3, K))
            fstate[0], fstate[1], fstate[2] = first_eta, n / first_eta, 0.0  # η, n/η, s
            self.state: DgpdState | DgpdKState = DgpdKState(
                x=np.zeros((d, K)),
                y=np.zeros((n, K)),
                w=np.zeros((n, K)),  # AX
                z=np.zeros((d, K)),  # AᵀY
                warm=warm_starts(n * K),
                fstate=fstate,
            )
        else:
            self.state = DgpdState(
                x=np.zeros(d),
                y=np.zeros(n),
                w=np.zeros(n),  # Ax
                z=np.zeros(d),  # Aᵀy
                warm=warm_starts(n),
                fstate=np.array([first_eta, n / first_eta, 0.0]),  # η, n/η, s
            )
        self.x, self.y, self.fstate = self.state.x, self.state.y, self.state.fstate
        if self.variant == BASIC:
            self.nnz_per_update = data.nnz / d + data.nnz / n  # a column and a row
            self.search = StepSearch(
                x=np.zeros(d),
                y=np.zeros(n),
                w=np.zeros(n),
                z=np.zeros(d),
                warm=warm_starts(n),
                istate=np.zeros(5, dtype=np.int64),
                fstate=np.array([1.0, np.inf, 0.0, 0.0]),  # m, Δ − D*, Δ_p, log ρ
            )
            return
        self.nnz_per_update = data.nnz / n  # a row, searches amortized
        self.active = ActiveSets(
            act_x=np.zeros(d, dtype=np.int64),
            in_x=np.zeros(d, dtype=np.bool_),
            act_y=np.zeros(n, dtype=np.int64),
            in_y=np.zeros(n, dtype=np.bool_),
            sub_ptr=np.zeros(n + 1, dtype=np.int64),
            sub_idx=np.zeros(data.nnz, dtype=np.int32),
            sub_val=np.zeros(data.nnz),
            istate=np.zeros(5, dtype=np.int64),
            score=np.zeros(max(n, d)),
            cand=np.zeros(max(n, d), dtype=np.int64),
            order=np.zeros(n, dtype=np.int64),
            rng_state=make_rng_state(seed),
        )
        self.active.istate[_PASS] = self.inner_passes  # the first update searches
        # read by bench.run_dgpd_cost and extras()
        self.istate, self.act_x, self.act_y = (
            self.active.istate,
            self.active.act_x,
            self.active.act_y,
        )
        self.sub_ptr = self.active.sub_ptr

    def run(self, n_updates: int) -> int:
        if self.columns:
            return sum(column.run(n_updates) for column in self.columns)
        problem = self.problem
        head = (
            problem.arrays,
            problem.loss.params,
            problem.penalty.params,
            self.params,
            self.state,
        )
        if self.variant == BASIC:
            return _basic(*head, self.search, n_updates)
        if self.k_class:
            return _active_set_k(*head, self.active, n_updates)
        return _active_set(*head, self.active, n_updates)

    def iterate(self) -> dict:
        if self.columns:  # X from the per-class runs of Algorithm 1
            return {"x": np.stack([column.x for column in self.columns], axis=1)}
        return {"x": self.x}

    def extras(self) -> dict:
        if self.columns:
            return self._column_extras()
        if self.k_class:
            return {
                "nnz_y": int(np.count_nonzero(self.y)),
                "eta": float(self.fstate[0].min()),  # the smallest class step
                "support_gap": int(self.fstate[2].sum()),  # Σₖ sₖ
                "active_x": int(self.istate[_N_AX]),
                "active_y": int(self.istate[_N_AY]),
                "submatrix_nnz": int(self.sub_ptr[self.istate[_N_AY]]),
                "searches": int(self.istate[_SEARCHES]),
            }
        out = {
            "nnz_y": int(np.count_nonzero(self.y)),
            "eta": float(self.fstate[0]),
            "support_gap": int(self.fstate[2]),  # s = ‖x − x̄‖₀ of eq. (16)
        }
        if self.variant == BASIC and self.eta <= 0 and self.params.step == ADAPTIVE:
            out.update(
                eta_factor=float(self.search.fstate[_FACTOR]),
                accepted_periods=int(self.search.istate[_ACCEPTED]),
                rejected_periods=int(self.search.istate[_REJECTED]),
            )
        if self.variant == ACTIVE_SET:
            out.update(
                active_x=int(self.istate[_N_AX]),
                active_y=int(self.istate[_N_AY]),
                submatrix_nnz=int(self.sub_ptr[self.istate[_N_AY]]),
                searches=int(self.istate[_SEARCHES]),
            )
        return out

    def _column_extras(self) -> dict:
        """The extras of a K-class Algorithm 1 run: sums over the classes' runs, the
        smallest step (and step factor)."""
        parts = [column.extras() for column in self.columns]
        out = {
            "nnz_y": sum(part["nnz_y"] for part in parts),
            "eta": min(part["eta"] for part in parts),
            "support_gap": sum(part["support_gap"] for part in parts),
        }
        if "eta_factor" in parts[0]:
            out.update(
                eta_factor=min(part["eta_factor"] for part in parts),
                accepted_periods=sum(part["accepted_periods"] for part in parts),
                rejected_periods=sum(part["rejected_periods"] for part in parts),
            )
        return out


def solve(problem: Problem, params: Params, recorder: Recorder, seed: int) -> str:
    """Run DGPD; ``seed`` drives the order of the active-set rounds (basic is deterministic)."""
    method = DGPD(
        problem,
        params.variant,
        params.eta,
        params.inner_passes,
        seed,
        params.step,
    )
    return run_chunked(method, recorder, problem.data.nnz)
