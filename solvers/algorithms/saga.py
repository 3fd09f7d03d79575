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
so m of its steps are applied in closed form segment by segment (:func:`_catch_up`) when j
is next touched, and for all coordinates at the end of every chunk.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from faceoff.solvers.driver import PrimalMethod, run_chunked
from faceoff.solvers.losses import loss_deriv
from faceoff.solvers.penalties import soft_threshold
from faceoff.solvers.prefetch import prefetch
from faceoff.solvers.problem import Problem
from faceoff.solvers.sampling import Sampler, next_coordinate
from faceoff.solvers.trace import Recorder

_TABLE_BITS = 8
_TABLE_LOW = 1 << _TABLE_BITS  # entries of each level of the table
_TABLE_SIZE = 1 << (2 * _TABLE_BITS)  # 1 − rᵐ is tabulated for m below this


def _contraction_table(log_r: float) -> np.ndarray:
    """1 − rᵃ for a = 0, …, _TABLE_LOW − 1, then 1 − r^(_TABLE_LOW·b) for b = 0, …,
    _TABLE_LOW − 1, r = exp(log_r), without cancellation: two levels of 2 KB each, which
    :func:`_tabulated` combines for any m below _TABLE_SIZE, small enough to stay in L1."""
    steps = np.arange(_TABLE_LOW)
    return -np.expm1(np.concatenate((steps, steps * _TABLE_LOW)) * log_r)


@njit(cache=True, inline="always")
def _tabulated(low, high):
    """1 − rᵃ⁺ᵇ from ``low`` = 1 − rᵃ and ``high`` = 1 − rᵇ, without cancellation."""
    return low + high - low * high


@njit(cache=True, inline="always")
def _contraction(table, m, log_r):
    """1 − rᵐ, r = exp(log_r), from ``table`` = :func:`_contraction_table` (log_r) when m is
    below _TABLE_SIZE."""
    if m < _TABLE_SIZE:
        return _tabulated(table[m & (_TABLE_LOW - 1)], table[_TABLE_LOW + (m >> _TABLE_BITS)])
    return -math.expm1(m * log_r)


@njit(cache=True, inline="always")
def _steps_inside(x, fixed, boundary, m, r_m, log_r):
    """How many of m affine steps toward ``fixed`` start inside the half-line of x bounded by
    ``boundary`` (``fixed`` lies beyond it): the first k ≥ 1 with rᵏ(x − fixed) past it.
    ``r_m`` = rᵐ decides without a logarithm when all m do."""
    q = (boundary - fixed) / (x - fixed)  # in (0, 1)
    if q <= r_m:
        return m
    k = math.log(q) / log_r
    if k >= m:
        return m
    return max(1, int(math.ceil(k)))


@njit(cache=True, inline="always")
def _catch_up_steps(x, gbar, m, contraction, step, l1, l2, log_r):
    """Apply m steps of x ← soft(x − η·ḡ, η·l1)/(1 + η·l2) in closed form, given
    ``contraction`` = 1 − rᵐ, r = 1/(1 + η·l2) and ``log_r`` = log r.

    The map T is monotone, so its iterates move monotonically to the fixed point
    −soft(ḡ, l1)/l2 and cross each of the three regions at most once. On the positive branch
    (x − ηḡ > η·l1) T(x) = (x − η(ḡ + l1))/(1 + η·l2), an affine contraction toward
    −(ḡ + l1)/l2; on the negative branch toward (l1 − ḡ)/l2; the dead zone maps to 0.
    k affine steps toward ``fixed`` are x − (1 − rᵏ)(x − fixed); only a walk that changes
    region and passes 0 computes 1 − rᵏ (k < m) itself. Scalars only, so kernels inline it without
    reference counting.
    """
    inv_l2 = 1.0 / l2  # loop-invariant in a kernel: hoisted, a multiplication per call
    if l1 == 0.0:
        return x - contraction * (x + gbar * inv_l2)
    c = step * gbar
    lam = step * l1
    # The common walks are decided with selects and one comparison, without a logarithm
    # and without branches on the sign of x or on its region, which coordinates of random
    # sign would mispredict.
    outside = abs(x - c) > lam
    sign = math.copysign(1.0, x - c)
    fixed = -(gbar + sign * l1) * inv_l2  # the fixed point of x's branch
    gap = sign * (fixed - c) - lam  # > 0: the fixed point lies inside x's region
    # Common: 0 is the fixed point of T (|c| < λ), or x is outside the dead zone and its
    # branch's fixed point inside its region. One float comparison (a boolean expression
    # would be compiled to several branches); ties go to the general walk below.
    if min(abs(c) - lam, max(lam - abs(x - c), -gap)) < 0.0:
        walk = x - contraction * (x - fixed)  # m affine steps on x's branch
        # Outside the dead zone, a walk toward a fixed point beyond its region enters the
        # dead zone (T ≥ 0 on the positive branch, ≤ 0 on the negative one), which T maps
        # to 0 for good: x ends at 0 unless step m − 1 is still in the region, when all m
        # steps are affine. T is continuous, so both answers agree at the boundary.
        before = fixed + (1.0 - contraction) * math.exp(-log_r) * (x - fixed)
        keep = (outside & ((gap >= 0.0) | (sign * (before - c) > lam))) | (m == 0)
        return walk if keep else 0.0
    # Otherwise |c| ≥ λ: a walk from or through the dead zone goes on past 0 to the other
    # branch (or a tie): step through the regions.
    total = m
    r_m = 1.0 - contraction  # rᵐ, for the common walk that stays in one region
    while m > 0:
        r_k = r_m if m == total else 0.0  # after a step to 0, let the logarithm decide
        if x - c > lam:  # positive branch, region x > c + λ
            fixed = -(gbar + l1) / l2
            k = m if fixed >= c + lam else _steps_inside(x, fixed, c + lam, m, r_k, log_r)
        elif x - c < -lam:  # negative branch, region x < c − λ
            fixed = (l1 - gbar) / l2
            k = m if fixed <= c - lam else _steps_inside(x, fixed, c - lam, m, r_k, log_r)
        else:  # dead zone: one step to 0, where T stays if 0 is in the dead zone
            x = 0.0
            m = 0 if abs(c) <= lam else m - 1
            continue
        x -= (contraction if k == total else -math.expm1(k * log_r)) * (x - fixed)
        m -= k
    return x


@njit(cache=True, inline="always")
def _catch_up(x, gbar, m, step, l1, l2, log_r, table):
    """:func:`_catch_up_steps` with 1 − rᵐ read from ``table`` = :func:`_contraction_table`
    (log_r)."""
    return _catch_up_steps(x, gbar, m, _contraction(table, m, log_r), step, l1, l2, log_r)


@njit(cache=True)
def _saga(
    indptr,
    indices,
    data,
    b,
    x,
    alpha,
    gbar,
    last,
    step,
    l1,
    l2,
    log_r,
    table,
    loss_code,
    gamma,
    n_updates,
    rng_state,
    ring,
    mode,
    prob,
    alias,
    perm,
):
    """Run ``n_updates`` SAGA steps on the CSR arrays of A, then bring every coordinate up
    to date; returns nnz visited. ``last[j]`` is the step from which x_j is behind."""
    inv_n = 1.0 / b.shape[0]
    lam = step * l1
    shrink = 1.0 / (1.0 + step * l2)
    visited = 0
    draws = ring[0]  # the sampler's step counter, kept in a register
    for t in range(n_updates):
        i, ahead, half = next_coordinate(rng_state, ring, draws, mode, prob, alias, perm)
        draws += 1
        prefetch(indptr, ahead)
        row = indptr[half]
        prefetch(indices, row)
        prefetch(data, row)
        prefetch(alpha, half)
        prefetch(b, half)
        start, end = indptr[i], indptr[i + 1]
        z = 0.0
        for k in range(start, end):  # catch up the support of aᵢ, then z = aᵢᵀx
            j = indices[k]
            if last[j] < t:
                x[j] = _catch_up(x[j], gbar[j], t - last[j], step, l1, l2, log_r, table)
                last[j] = t
            z += data[k] * x[j]
        deriv = loss_deriv(loss_code, gamma, z, b[i])
        delta = deriv - alpha[i]
        alpha[i] = deriv
        for k in range(start, end):  # x ← prox(x − η(δ·aᵢ + ḡ)) ;  ḡ += δ·aᵢ/n
            j = indices[k]
            v = x[j] - step * (delta * data[k] + gbar[j])
            x[j] = soft_threshold(v, lam) * shrink
            gbar[j] += delta * data[k] * inv_n
            last[j] = t + 1
        visited += end - start
    for j in range(x.shape[0]):
        if last[j] < n_updates:
            x[j] = _catch_up(x[j], gbar[j], n_updates - last[j], step, l1, l2, log_r, table)
        last[j] = 0
    ring[0] = draws
    return visited


class SAGA(PrimalMethod):
    """State of one saga run (see module docstring)."""

    def __init__(self, problem: Problem, step_scale: float, seed: int) -> None:
        data = problem.data
        self.problem = problem
        n, d = data.n_samples, data.n_features
        self.n_coords = n
        self.nnz_per_update = data.nnz / n
        l_max = problem.loss.smoothness * float(data.row_sq_norms.max()) + problem.penalty.l2
        self.step = float(step_scale) / (3.0 * l_max)
        self.log_r = -math.log1p(self.step * problem.penalty.l2)
        self.table = _contraction_table(self.log_r)
        self.sampler = Sampler(n, "uniform", seed)
        self.x = np.zeros(d)
        self.alpha = np.zeros(n)
        self.gbar = np.zeros(d)
        self.last = np.zeros(d, dtype=np.int64)

    def run(self, n_updates: int) -> int:
        csr, p, loss = self.problem.data.csr, self.problem.penalty, self.problem.loss
        return _saga(
            csr.indptr,
            csr.indices,
            csr.data,
            self.problem.b,
            self.x,
            self.alpha,
            self.gbar,
            self.last,
            self.step,
            p.l1,
            p.l2,
            self.log_r,
            self.table,
            loss.code,
            loss.gamma,
            n_updates,
            *self.sampler.args(),
        )


def solve(problem: Problem, params: dict, recorder: Recorder, seed: int) -> str:
    method = SAGA(problem, params["step_scale"], seed)
    return run_chunked(method, recorder, problem.data.nnz)
