"""Working-set coordinate descent with Anderson extrapolation (Massias et al. 2018, "Celer";
Johnson & Guestrin 2015, "Blitz"; Bertrand & Massias 2021, "Anderson acceleration of
coordinate descent"; the design of skglm's AndersonCD).

P(x) = F(x) + l1‖x‖₁, F(x) = 1/n Σᵢ φ(aᵢᵀx, bᵢ) + l2/2‖x‖². An outer iteration computes
∇F(x) = Aᵀφ'(Ax)/n + l2·x (one epoch) and each feature's optimality violation, the
distance of −∇ⱼF(x) to l1·∂|xⱼ| (the "subdiff" score of Bertrand & Massias 2021):

    sⱼ = |∇ⱼF + l1·sign xⱼ|  if xⱼ ≠ 0,      sⱼ = max(|∇ⱼF| − l1, 0)  if xⱼ = 0,

so that x is optimal iff maxⱼ sⱼ = 0. It then solves P restricted to a working set W, the
support of x and the features of highest priority, |W| = max(p0, 2·|supp x|) (the support
doubles from one set to the next, as Celer's and Blitz's sets grow). A feature off the
support ranks by

    (|∇ⱼF| − l1) / ‖A_:ⱼ‖,                                                         (W1)

the distance of the dual point to feature j's constraint (Celer's priority, Massias et
al. 2018; negative where the constraint holds): beside the violated features, W
holds those about to become violated, not zero-score ones in index order (on the
correlated design, ρ = 0.6, those left W, became violated in the next subproblem, and the
outer violation rose every other iteration). W is solved by cyclic proximal coordinate
descent (the proximal coordinate step):

    xⱼ ← prox_{l1|·|/Lⱼ}(xⱼ − ∇ⱼF(x)/Lⱼ),   Lⱼ = β‖A_:ⱼ‖²/n + l2,

keeping Ax (a step costs O(nnz of column j); a column with Lⱼ = 0 is empty or all zeros,
and its coordinate stays 0). One epoch in FULL_EVERY visits all of W; the others visit its
non-zero coefficients only (glmnet's active-set cycling): a full epoch moves every violated
zero off 0, and only a full epoch's sⱼ may end the subproblem.

Every K epochs the last K + 1 iterates x⁽⁰⁾…x⁽ᴷ⁾ on W are
extrapolated (Anderson; Bertrand & Massias 2021): with U = [x⁽¹⁾ − x⁽⁰⁾, …,
x⁽ᴷ⁾ − x⁽ᴷ⁻¹⁾], z = (UᵀU)⁻¹1 and c = z/Σz, x_e = Σₖ cₖx⁽ᵏ⁾ (k ≥ 1), and x_e replaces x
only if P(x_e) < P(x). Ax_e = Ax + A_W(x_e − x) is formed from the columns whose
coefficient moves, not as Σₖ cₖAx⁽ᵏ⁾: c is large when U is ill-conditioned, and that sum's
rounding (|c|·ε·‖Ax‖) left Ax off A·x by 1e-10 near the optimum of a smoothed-hinge
Lasso, where the kernel then saw converged steps while the gap stalled at 2e-9.

The subproblem ends when its violation max_{j∈W} sⱼ falls to 0.3 times the outer violation
(skglm's factor; Blitz ties the subproblem's accuracy to the outer gap the same way): a
coarse W is solved coarsely, and the target never falls below rounding's level (FLOOR).
The sⱼ taken as an epoch visits each coordinate serve as a screen; one at the target is
confirmed by sⱼ at x after the epoch, since the visits can undershoot (on dorothea's Lasso
at λmax/100 they did, by 3×, every epoch: 160 outer iterations of one epoch each, where a
confirmed target takes 14).

For a loss whose curvature φ'' varies, with a bounded growth (``curvature_growth``: the
logistic's), W is solved by proximal-Newton steps instead (Lee, Sun & Saunders 2014;
the inner solvers of celer's and skglm's l1-logistic; Tseng & Yun 2009 for the search). At
x, with D = diag φ''(Ax) and H = A_WᵀDA_W/n + l2·I, the direction δ on W minimizes,
inexactly, the quadratic model

    q(δ) = ∇_W F(x)ᵀδ + ½ δᵀHδ + l1‖x_W + δ‖₁                                      (N1)

by at most MAX_CD cyclic passes of CD from δ = 0 (step 1/Hⱼⱼ; Aδ kept), stopped when the
model's violation falls to INNER_FACTOR times the subproblem's target. Since those passes
lower q from q(0) = 0,

    Δ = ∇_W F(x)ᵀδ + l1(‖x_W + δ‖₁ − ‖x_W‖₁) ≤ −½ δᵀHδ < 0,                         (N2)

and x moves by sδ for the first s of 1, 1/2, 1/4, … with Armijo's decrease

    P(x + sδ) − P(x) ≤ σ·s·Δ,                                                     (N3)

P's change summed from the loss's increments φ(z + t) − φ(z) (no cancellation near the
optimum). The step never raises P; where no s passes (rounding's level) a CD epoch on W
steps instead. The subproblem's violation is taken exactly at the start of each step, from
∇_W F(x). Anderson's extrapolation belongs to the CD epochs, the Newton steps take none.

An intercept c (``Problem.intercept``; x = (w, c), Ax the margins Aw + c) is unpenalized:
it takes a Newton step (primal_cd's :func:`intercept_step`, Armijo's test, else 1/β) after
every epoch on W, as skglm's AndersonCD steps on its intercept once an epoch; its
violation |1/n Σᵢ φ'(aᵢᵀw + c)| counts in the outer violation and in the subproblem's, and
c is extrapolated with the coefficients on W. In a Newton step c is one more coordinate of
the model (N1), its curvature 1/n Σᵢ φ''ᵢ, moved with W along the search.

The state (x, Ax, W, the iterates of the extrapolation, the phase) lives in arrays, so a
run in chunks (solvers.driver) follows the same path whatever the chunks: a chunk ends
only between an outer iteration and an epoch on W.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from faceoff.solvers.algorithms.primal_cd.method import SIGMA, intercept_step
from faceoff.solvers.algorithms.ws_cd import Params
from faceoff.solvers.driver import PrimalMethod, run_chunked
from faceoff.solvers.losses import (
    curvature_growth,
    loss_deriv_lanes,
    loss_derivs12,
    loss_increment,
    loss_value,
)
from faceoff.solvers.penalties import soft_threshold
from faceoff.solvers.problem import Problem
from faceoff.solvers.trace import Recorder

INNER_FACTOR = 0.3  # the subproblem's violation target, a fraction of the outer one
FLOOR = 1e-14  # the smallest target, relative to max(l1, maxⱼ |∇ⱼF(0)|): rounding's level
FULL_EVERY = 5  # of the CD epochs on W, one in FULL_EVERY visits every feature of W
MAX_CD = 20  # CD passes on one quadratic model (N1), at most (skglm's MAX_CD_ITER)
MAX_BACKTRACK = 20  # halvings of the Newton step (N3), at most

# the phase (ints[PHASE]): next, an outer iteration or an epoch on the working set
OUTER, INNER = 0, 1
PHASE, WS_SIZE, STORED, EPOCH = 0, 1, 2, 3  # ints
TARGET, SCALE = 0, 1  # floats


class WsState(NamedTuple):
    """The iterate of a ws_cd run and everything the next step needs (a Numba tuple).

    x : array, shape (n_features,), or (n_features + 1,) with an intercept c = x[−1]
    Ax : array, shape (n_samples,)
        The margins Aw (+ c).
    lipschitz : array, shape (n_features,)
        Lⱼ = β‖A_:ⱼ‖²/n + l2.
    ws : array of int64, shape (n_features,)
        The working set, sorted, in ws[:ints[WS_SIZE]].
    score : array, shape (n_features,)
        Scratch: each feature's priority (W1) in the last outer iteration.
    inv_norm : array, shape (n_features,)
        1/‖A_:ⱼ‖, 0 for an empty column (or one of zeros).
    deriv : array, shape (n_samples,)
        Scratch: φ'(Ax).
    hist_x : array, shape (K + 1, n_features + intercept)
        The iterates on W of the extrapolation, hist_x[k, :|W|] (then c).
    backup : array, shape (n_samples,)
        Scratch: Ax before an extrapolation, put back if it is rejected.
    hess : array, shape (n_samples,), or (0,) without Newton steps
        Scratch: φ''(Ax), the weights of the quadratic model (N1).
    grad_ws, curv_ws : arrays, shape (n_features,), or (0,)
        Scratch: ∇ⱼF(x) and Hⱼⱼ = 1/n Σᵢ φ''ᵢA_ij² + l2 for W's t-th feature j at [t].
    direction : array, shape (n_features + 1,), or (0,)
        Scratch: the Newton direction δ on W at [t] (then c's at [|W|]).
    Adir : array, shape (n_samples,), or (0,)
        Scratch: Aδ (+ δ_c).
    ints : array of int64, shape (4,)
        The phase, |W|, the iterates stored, the CD epochs on W so far.
    floats : array, shape (2,)
        The subproblem's violation target, the floor's scale.
    p0 : int
    dense : bool
        Every entry of A stored (dense data): column loops run contiguously.
    intercept : bool
        x ends with an unpenalized intercept c.
    beta : float
        The loss's smoothness (c's fallback step 1/β).
    newton : bool
        Proximal-Newton steps on W (a loss whose φ'' varies with a bounded growth: the
        logistic), else proximal CD epochs with extrapolation.
    """

    x: np.ndarray
    Ax: np.ndarray
    lipschitz: np.ndarray
    ws: np.ndarray
    score: np.ndarray
    inv_norm: np.ndarray
    deriv: np.ndarray
    hist_x: np.ndarray
    backup: np.ndarray
    hess: np.ndarray
    grad_ws: np.ndarray
    curv_ws: np.ndarray
    direction: np.ndarray
    Adir: np.ndarray
    ints: np.ndarray
    floats: np.ndarray
    p0: int
    dense: bool
    intercept: bool
    beta: float
    newton: bool


@njit(cache=True, _nrt=False, error_model="numpy")
def _violation(xj, grad, l1):
    """sⱼ: the distance of −∇ⱼF to l1·∂|xⱼ| (``grad`` = ∇ⱼF, l2·xⱼ included)."""
    if xj > 0.0:
        return abs(grad + l1)
    if xj < 0.0:
        return abs(grad - l1)
    return max(abs(grad) - l1, 0.0)


@njit(cache=True)
def _outer(data, loss, penalty, state):
    """An outer iteration: sⱼ for every feature from ∇F(x) = Aᵀφ'(Ax)/n + l2·x, then the
    next working set (support first, then the largest sⱼ) and its violation target.
    Returns the non-zeros visited."""
    indptr, indices, values = data.csc
    b = data.b
    l1, l2 = penalty
    x, Ax, score, deriv, ws, ints, floats = (
        state.x,
        state.Ax,
        state.score,
        state.deriv,
        state.ws,
        state.ints,
        state.floats,
    )
    n, d = Ax.shape[0], state.lipschitz.shape[0]
    inv_n = 1.0 / n
    g_c = 0.0  # 1/n Σᵢ φ'(aᵢᵀw + c): c's violation
    for i in range(n):  # φ'(Ax)
        deriv[i] = loss_deriv_lanes(loss, Ax[i], b[i])
        g_c += deriv[i]
    worst = abs(g_c) * inv_n if state.intercept else 0.0
    largest = 0.0  # maxⱼ |∇ⱼF|, the floor's scale
    support = 0
    for j in range(d):
        grad = _column_dot(data, state.dense, indptr[j], indptr[j + 1], deriv) * inv_n
        grad += l2 * x[j]
        worst = max(worst, _violation(x[j], grad, l1))
        largest = max(largest, abs(grad))
        if x[j] != 0.0:
            support += 1
            score[j] = np.inf  # the support always belongs to W
        elif state.inv_norm[j] > 0.0:  # (|∇ⱼF| − l1)/‖A_:ⱼ‖, the dual's distance (W1)
            score[j] = (abs(grad) - l1) * state.inv_norm[j]
        else:  # an empty column (or one of zeros): last
            score[j] = -np.inf
    if floats[SCALE] == 0.0:  # at x = 0: the scale of λ_max
        floats[SCALE] = max(l1, largest)
    floats[TARGET] = max(INNER_FACTOR * worst, FLOOR * floats[SCALE])
    size = min(max(state.p0, 2 * support), d)
    # the size-th largest score; then W = {sⱼ > it}, filled up with sⱼ = it
    threshold = np.partition(score, d - size)[d - size]
    count = 0
    for j in range(d):
        if score[j] > threshold:
            ws[count] = j
            count += 1
    for j in range(d):
        if count == size:
            break
        if score[j] == threshold:
            ws[count] = j
            count += 1
    ws[:size].sort()
    ints[WS_SIZE] = size
    ints[PHASE] = INNER
    ints[EPOCH] = 0
    _remember(state, 0)
    return indptr[d] - indptr[0]


@njit(cache=True, _nrt=False, error_model="numpy")
def _remember(state, k):
    """Store x on W as the k-th iterate of the extrapolation (none when K = 0)."""
    if state.hist_x.shape[0] == 1:
        return
    ws, x, size = state.ws, state.x, state.ints[WS_SIZE]
    for t in range(size):
        state.hist_x[k, t] = x[ws[t]]
    if state.intercept:
        state.hist_x[k, size] = x[x.shape[0] - 1]
    state.ints[STORED] = k + 1


@njit(cache=True, _nrt=False, error_model="numpy", fastmath={"reassoc"})
def _column_grad(data, loss, dense, start, end, Ax):
    """Σᵢ A_ij·φ'(aᵢᵀx) over column j = A's CSC [start, end). ``dense`` (every entry
    stored: the column is rows 0..n−1 in order): a contiguous loop that vectorizes, the
    sum reassociated and φ' the loss's ``deriv_lanes`` (the logistic's exp as arithmetic,
    within 2 ulp of libm's)."""
    _, indices, values = data.csc
    b = data.b
    grad = 0.0
    if dense:
        for i in range(end - start):
            grad += values[start + i] * loss_deriv_lanes(loss, Ax[i], b[i])
    else:
        for k in range(start, end):
            i = indices[k]
            grad += values[k] * loss_deriv_lanes(loss, Ax[i], b[i])
    return grad


@njit(cache=True, _nrt=False, error_model="numpy", fastmath={"reassoc"})
def _column_dot(data, dense, start, end, r):
    """Σᵢ A_ij·rᵢ over column j = A's CSC [start, end) (contiguous when ``dense``)."""
    _, indices, values = data.csc
    s = 0.0
    if dense:
        for i in range(end - start):
            s += values[start + i] * r[i]
    else:
        for k in range(start, end):
            s += values[k] * r[indices[k]]
    return s


@njit(cache=True, _nrt=False, error_model="numpy", fastmath={"reassoc"})
def _column_weighted_dot(data, dense, start, end, h, r):
    """Σᵢ A_ij·hᵢ·rᵢ over column j = A's CSC [start, end) (contiguous when ``dense``)."""
    _, indices, values = data.csc
    s = 0.0
    if dense:
        for i in range(end - start):
            s += values[start + i] * h[i] * r[i]
    else:
        for k in range(start, end):
            i = indices[k]
            s += values[k] * h[i] * r[i]
    return s


@njit(cache=True, _nrt=False, error_model="numpy", fastmath={"reassoc"})
def _column_weighted_sq(data, dense, start, end, h):
    """Σᵢ hᵢ·A_ij² over column j = A's CSC [start, end) (contiguous when ``dense``)."""
    _, indices, values = data.csc
    s = 0.0
    if dense:
        for i in range(end - start):
            s += h[i] * values[start + i] * values[start + i]
    else:
        for k in range(start, end):
            s += h[indices[k]] * values[k] * values[k]
    return s


@njit(cache=True, _nrt=False, error_model="numpy")
def _column_axpy(data, dense, start, end, delta, Ax):
    """Ax += delta · A_:j over column j = A's CSC [start, end) (contiguous when ``dense``)."""
    _, indices, values = data.csc
    if dense:
        for i in range(end - start):
            Ax[i] += delta * values[start + i]
    else:
        for k in range(start, end):
            Ax[indices[k]] += delta * values[k]


@njit(cache=True, _nrt=False, error_model="numpy")
def _epoch(data, loss, penalty, state, full):
    """One cyclic pass of proximal coordinate steps over W (module docstring), or, unless
    ``full``, over W's non-zero coefficients only; then the intercept's step. Returns
    (non-zeros visited, coordinates visited, the largest of sⱼ at each visit and c's
    violation before its step)."""
    indptr = data.csc.indptr
    l1, l2 = penalty
    x, Ax, lipschitz, ws, dense = state.x, state.Ax, state.lipschitz, state.ws, state.dense
    inv_n = 1.0 / Ax.shape[0]
    worst = 0.0
    visited = 0
    coords = 0
    for t in range(state.ints[WS_SIZE]):
        j = ws[t]
        if not full and x[j] == 0.0:
            continue
        coords += 1
        start, end = indptr[j], indptr[j + 1]
        visited += end - start
        if lipschitz[j] == 0.0:  # an empty column (or one of zeros) and l2 = 0: xⱼ = 0
            continue
        xj = x[j]
        # ∇ⱼF = 1/n Σᵢ φ'(aᵢᵀx) A_ij + l2·xⱼ
        grad = _column_grad(data, loss, dense, start, end, Ax) * inv_n + l2 * xj
        worst = max(worst, _violation(xj, grad, l1))
        x_new = soft_threshold(xj - grad / lipschitz[j], l1 / lipschitz[j])
        delta = x_new - xj
        if delta != 0.0:
            x[j] = x_new
            _column_axpy(data, dense, start, end, delta, Ax)
    if state.intercept:
        seen, violation = intercept_step(loss, data.b, Ax, x, state.beta)
        visited += seen
        worst = max(worst, violation)
    return visited, coords, worst


@njit(cache=True, _nrt=False, error_model="numpy")
def _newton_step(data, loss, penalty, state):
    """One proximal-Newton step on W (module docstring): φ'(Ax), φ''(Ax), ∇ⱼF and Hⱼⱼ on
    W, the subproblem's violation at x; unless it meets the target, up to MAX_CD passes of
    CD on the model (N1) from δ = 0, then the backtracking search (N3) along δ.

    Returns (non-zeros visited, coordinate visits, the subproblem's violation at x, whether
    x moved: False when the search found no decrease, rounding's level)."""
    indptr = data.csc.indptr
    b = data.b
    l1, l2 = penalty
    x, Ax, ws, dense, deriv = state.x, state.Ax, state.ws, state.dense, state.deriv
    hess, grad, curv = state.hess, state.grad_ws, state.curv_ws
    direction, Adir = state.direction, state.Adir
    size = state.ints[WS_SIZE]
    n = Ax.shape[0]
    inv_n = 1.0 / n
    g_c = h_c = 0.0  # c's derivative and curvature, 1/n Σᵢ φ'ᵢ and 1/n Σᵢ φ''ᵢ
    for i in range(n):
        deriv[i], hess[i] = loss_derivs12(loss, Ax[i], b[i])
        g_c += deriv[i]
        h_c += hess[i]
    g_c *= inv_n
    h_c *= inv_n
    worst = abs(g_c) if state.intercept else 0.0
    visited = n
    for t in range(size):
        j = ws[t]
        start, end = indptr[j], indptr[j + 1]
        # ∇ⱼF = 1/n Σᵢ φ'ᵢA_ij + l2·xⱼ,  Hⱼⱼ = 1/n Σᵢ φ''ᵢA_ij² + l2
        grad[t] = _column_dot(data, dense, start, end, deriv) * inv_n + l2 * x[j]
        curv[t] = _column_weighted_sq(data, dense, start, end, hess) * inv_n + l2
        worst = max(worst, _violation(x[j], grad[t], l1))
        visited += 2 * (end - start)
    if worst <= state.floats[TARGET]:
        return visited, size, worst, True
    # (N1): CD on q(δ) = ∇_W Fᵀδ + ½ δᵀ(A_WᵀDA_W/n + l2·I)δ + l1‖x_W + δ‖₁, D = diag φ''
    for t in range(size + 1):
        direction[t] = 0.0
    for i in range(n):
        Adir[i] = 0.0
    tol = INNER_FACTOR * state.floats[TARGET]
    fit_c = state.intercept and h_c > 0.0
    coords = size
    for _ in range(MAX_CD):
        model = 0.0  # the model's violation, each coordinate's taken at its visit
        for t in range(size):
            if curv[t] == 0.0:  # φ'' = 0 on the column's rows and l2 = 0: δⱼ stays 0
                continue
            j = ws[t]
            start, end = indptr[j], indptr[j + 1]
            # ∇ⱼq(δ) = ∇ⱼF + 1/n Σᵢ A_ij φ''ᵢ (Aδ)ᵢ + l2·δⱼ
            q = grad[t] + _column_weighted_dot(data, dense, start, end, hess, Adir) * inv_n
            q += l2 * direction[t]
            z = x[j] + direction[t]
            model = max(model, _violation(z, q, l1))
            z_new = soft_threshold(z - q / curv[t], l1 / curv[t])
            if z_new != z:
                direction[t] = z_new - x[j]
                _column_axpy(data, dense, start, end, z_new - z, Adir)
            visited += 2 * (end - start)
        if fit_c:  # c's exact minimizer of q: δ_c −= (g_c + 1/n Σᵢ φ''ᵢ(Aδ)ᵢ) / h_c
            q = g_c
            for i in range(n):
                q += hess[i] * Adir[i] * inv_n
            model = max(model, abs(q))
            direction[size] -= q / h_c
            for i in range(n):
                Adir[i] -= q / h_c
            visited += 2 * n
        coords += size
        if model <= tol:
            break
    # (N2): Δ = ∇_W Fᵀδ + l1(‖x_W + δ‖₁ − ‖x_W‖₁) < 0 for an inexact minimizer of q too
    decrease = g_c * direction[size] if fit_c else 0.0
    for t in range(size):
        xj = x[ws[t]]
        decrease += grad[t] * direction[t] + l1 * (abs(xj + direction[t]) - abs(xj))
    if not decrease < 0.0:
        return visited, coords, worst, False
    # (N3): the first of s = 1, 1/2, 1/4, … with P(x + sδ) − P(x) ≤ σ·s·Δ
    s = 1.0
    for _ in range(MAX_BACKTRACK):
        change = 0.0
        for i in range(n):
            change += loss_increment(loss, Ax[i], b[i], s * Adir[i])
        change *= inv_n
        for t in range(size):
            xj, dj = x[ws[t]], s * direction[t]
            change += l1 * (abs(xj + dj) - abs(xj)) + l2 * dj * (xj + 0.5 * dj)
        visited += n
        if change <= SIGMA * s * decrease:
            for t in range(size):
                x[ws[t]] += s * direction[t]
            if fit_c:
                x[x.shape[0] - 1] += s * direction[size]
            for i in range(n):
                Ax[i] += s * Adir[i]
            visited += n
            if state.intercept and not fit_c:  # φ'' = 0 on every row: c's own step
                visited += intercept_step(loss, b, Ax, x, state.beta)[0]
            return visited, coords, worst, True
        s *= 0.5
    return visited, coords, worst, False


@njit(cache=True, _nrt=False, error_model="numpy")
def _ws_violation(data, loss, penalty, state):
    """The subproblem's violation at x: max_{j∈W} sⱼ from ∇ⱼF(x), and c's |1/n Σᵢ φ'ᵢ|.
    Returns (non-zeros visited, the violation)."""
    indptr = data.csc.indptr
    l1, l2 = penalty
    x, Ax, ws = state.x, state.Ax, state.ws
    n = Ax.shape[0]
    worst = 0.0
    visited = 0
    if state.intercept:
        g_c = 0.0
        for i in range(n):
            g_c += loss_deriv_lanes(loss, Ax[i], data.b[i])
        worst = abs(g_c) / n
        visited += n
    for t in range(state.ints[WS_SIZE]):
        j = ws[t]
        start, end = indptr[j], indptr[j + 1]
        grad = _column_grad(data, loss, state.dense, start, end, Ax) / n + l2 * x[j]
        worst = max(worst, _violation(x[j], grad, l1))
        visited += end - start
    return visited, worst


@njit(cache=True, _nrt=False, error_model="numpy")
def _objective(loss, penalty, b, Ax, x, ws, size):
    """P up to the terms of the features outside W: 1/n Σ φ(Ax) + Σ_{j∈W} g(xⱼ)."""
    l1, l2 = penalty
    value = 0.0
    for i in range(Ax.shape[0]):
        value += loss_value(loss, Ax[i], b[i])
    value /= Ax.shape[0]
    for t in range(size):
        xj = x[ws[t]]
        value += l1 * abs(xj) + 0.5 * l2 * xj * xj
    return value


@njit(cache=True, error_model="numpy")
def _coefficients(hist_x, size, c):
    """c = z/Σz with (UᵀU)z = 1, U's columns the K differences of the stored iterates
    (Gaussian elimination with partial pivoting on the K×K system); False when UᵀU is
    singular to working precision (the iterates stalled) or c is not finite."""
    K = c.shape[0]
    M = np.zeros((K, K + 1))
    for p in range(K):
        for q in range(p, K):
            s = 0.0
            for t in range(size):
                s += (hist_x[p + 1, t] - hist_x[p, t]) * (hist_x[q + 1, t] - hist_x[q, t])
            M[p, q] = s
            M[q, p] = s
        M[p, K] = 1.0
    scale = 0.0
    for p in range(K):
        scale = max(scale, M[p, p])
    if not scale > 0.0:
        return False
    for p in range(K):
        pivot = p
        for q in range(p + 1, K):
            if abs(M[q, p]) > abs(M[pivot, p]):
                pivot = q
        if not abs(M[pivot, p]) > 1e-15 * scale:
            return False
        for r in range(K + 1):
            M[p, r], M[pivot, r] = M[pivot, r], M[p, r]
        for q in range(p + 1, K):
            f = M[q, p] / M[p, p]
            for r in range(p, K + 1):
                M[q, r] -= f * M[p, r]
    total = 0.0
    for p in range(K - 1, -1, -1):
        s = M[p, K]
        for r in range(p + 1, K):
            s -= M[p, r] * c[r]
        c[p] = s / M[p, p]
        total += c[p]
    if not (np.isfinite(total) and total != 0.0):
        return False
    for p in range(K):
        c[p] /= total
    return True


@njit(cache=True)
def _extrapolate(data, loss, penalty, state):
    """Anderson's extrapolation of the K + 1 stored iterates (module docstring), kept if
    it lowers P; then the current point starts the next K + 1. Returns the non-zeros
    visited forming Ax_e."""
    indptr, indices, values = data.csc
    x, Ax, ws, hist_x, backup = state.x, state.Ax, state.ws, state.hist_x, state.backup
    size = state.ints[WS_SIZE]
    K = hist_x.shape[0] - 1
    c = np.empty(K)
    visited = 0
    last = x.shape[0] - 1  # c's index, with an intercept
    if _coefficients(hist_x, size + state.intercept, c):
        before = _objective(loss, penalty, data.b, Ax, x, ws, size)
        saved_x = x[ws[:size]]  # the current point, put back if x_e is no better
        saved_c = x[last]
        backup[:] = Ax
        for t in range(size):
            s = 0.0
            for k in range(K):
                s += c[k] * hist_x[k + 1, t]
            j = ws[t]
            delta = s - x[j]
            if delta != 0.0:
                x[j] = s
                _column_axpy(data, state.dense, indptr[j], indptr[j + 1], delta, Ax)
                visited += indptr[j + 1] - indptr[j]
        if state.intercept:  # c_e, and Ax_e += c_e − c
            s = 0.0
            for k in range(K):
                s += c[k] * hist_x[k + 1, size]
            delta = s - x[last]
            x[last] = s
            for i in range(Ax.shape[0]):
                Ax[i] += delta
            visited += Ax.shape[0]
        if not _objective(loss, penalty, data.b, Ax, x, ws, size) < before:
            x[ws[:size]] = saved_x
            if state.intercept:
                x[last] = saved_c
            Ax[:] = backup
    _remember(state, 0)
    return visited


@njit(cache=True)
def _ws_cd(data, loss, penalty, state, n_updates):
    """Outer iterations and epochs on W until ``n_updates`` coordinate visits are done
    (an outer iteration counts n_features, an epoch |W|); returns the non-zeros visited
    (at least 1 a step, so that a run on empty columns still advances its epochs)."""
    ints = state.ints
    K = state.hist_x.shape[0] - 1
    done = 0
    visited = 0
    while done < n_updates:
        if ints[PHASE] == OUTER:
            visited += max(_outer(data, loss, penalty, state), 1)
            done += state.lipschitz.shape[0]
            continue
        if state.newton:
            seen, coords, worst, moved = _newton_step(data, loss, penalty, state)
            visited += max(seen, 1)
            done += max(coords, 1)
            if worst <= state.floats[TARGET]:
                ints[PHASE] = OUTER
            if moved:
                continue
            # no decrease along δ (rounding's level): a CD epoch, whose steps each lower P
        full = state.newton or ints[EPOCH] % FULL_EVERY == 0
        ints[EPOCH] += 1
        seen, coords, worst = _epoch(data, loss, penalty, state, full)
        visited += max(seen, 1)
        done += max(coords, 1)
        if full and worst <= state.floats[TARGET]:  # confirmed at x: sⱼ can undershoot
            seen, worst = _ws_violation(data, loss, penalty, state)
            visited += seen
        if full and worst <= state.floats[TARGET]:
            ints[PHASE] = OUTER
        elif K > 0:
            _remember(state, ints[STORED])
            if ints[STORED] == K + 1:
                visited += _extrapolate(data, loss, penalty, state)
    return visited


class WsCD(PrimalMethod):
    """State of one ws_cd run (see module docstring)."""

    def __init__(self, problem: Problem, p0: int, anderson: int) -> None:
        data = problem.data
        self.problem = problem
        n, d = data.n_samples, data.n_features
        loss = problem.loss.params
        newton = bool(1.0 < curvature_growth(loss, 1.0) < np.inf)
        anderson = 0 if newton else anderson
        m, k = (n, d) if newton else (0, 0)
        norms = np.sqrt(data.col_sq_norms)
        self.n_coords = d
        self.nnz_per_update = data.nnz / max(d, 1)
        self.state = WsState(
            x=np.zeros(problem.coef_shape),
            Ax=np.zeros(n),
            lipschitz=problem.smoothness * data.col_sq_norms / n + problem.penalty.l2,
            ws=np.zeros(d, dtype=np.int64),
            score=np.empty(d),
            inv_norm=np.divide(1.0, norms, out=np.zeros(d), where=norms > 0.0),
            deriv=np.empty(n),
            hist_x=np.empty((anderson + 1, d + problem.intercept if anderson else 0)),
            backup=np.empty(n if anderson else 0),
            hess=np.empty(m),
            grad_ws=np.empty(k),
            curv_ws=np.empty(k),
            direction=np.empty(k + 1 if newton else 0),
            Adir=np.empty(m),
            ints=np.zeros(4, dtype=np.int64),
            floats=np.zeros(2),
            p0=int(p0),
            dense=data.dense is not None,
            intercept=problem.intercept,
            beta=float(problem.smoothness),
            newton=newton,
        )
        self.x = self.state.x

    def run(self, n_updates: int) -> int:
        problem = self.problem
        return _ws_cd(
            problem.arrays, problem.loss.params, problem.penalty.params, self.state, n_updates
        )


def solve(problem: Problem, params: Params, recorder: Recorder, seed: int) -> str:
    method = WsCD(problem, params.p0, params.anderson)
    if recorder.warm_start is not None:  # a path's previous solution: its support first
        method.x[...] = recorder.warm_start
        method.state.Ax[...] = problem.margins(method.x)
    return run_chunked(method, recorder, problem.data.nnz)
