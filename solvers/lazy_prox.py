"""Lazy (just-in-time) proximal steps: m skipped steps of the elastic-net prox in closed form.

SAGA and SPDC with sparse rows leave a coordinate j untouched while the sampled rows miss
it; in between it only undergoes

    xⱼ ← prox_{ηg}(xⱼ − η·ḡⱼ) = soft(xⱼ − η·ḡⱼ, η·l1)/(1 + η·l2),

with ḡⱼ constant (SAGA's average gradient, SPDC's uⱼ = (Aᵀy/n)ⱼ). That map is monotone and
piecewise affine (positive branch, dead zone at 0, negative branch), so m of its steps are
applied in closed form segment by segment when j is next read (:func:`catch_up`): SPDC §6,
eq. (36) for l2 and Cases I-III, eqs. (38)-(44), for l1 + l2, and the same map as SAGA's
lazy updates (the "just-in-time" updates SPDC §6 credits to SAG).

The contraction 1 − rᵐ, r = 1/(1 + η·l2), is read from a two-level table for m below
``TABLE_SIZE`` (:func:`contraction_table`), so the common catch-up needs no exponential.
The functions are inlined into the kernels and take scalars (and the table) only.

For l2 alone (l1 = 0) nothing needs catching up: the map is x ← r(x − η·ḡⱼ), a contraction
toward the coordinate's own fixed point −ḡⱼ/l2 by the same factor r for every j, so
xⱼ = S·vⱼ − wⱼ with wⱼ = ḡⱼ/l2 and one global S = rᵗ (the *scaled form*, columns ``V`` and
``W`` of a (d, 2) array): a read is S·vⱼ − wⱼ, and a step that changes xⱼ by −η·gⱼ and ḡⱼ
by hⱼ is vⱼ += (hⱼ/l2 − r·η·gⱼ)/(r·S), wⱼ += hⱼ/l2. S is folded into v (:func:`fold`)
when it falls below ``RESCALE_BELOW`` and at the end of each run, where x = v − w
(:func:`scaled_x`).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from faceoff.solvers.penalties import ElasticNet
from faceoff.solvers.prefetch import prefetch

TABLE_BITS = 8
TABLE_LOW = 1 << TABLE_BITS  # entries of each level of the table
TABLE_SIZE = 1 << (2 * TABLE_BITS)  # 1 − rᵐ is tabulated for m below this

V, W = 0, 1  # columns of the scaled form: x = S·v − w
RESCALE_BELOW = 1e-100  # S below this is folded into v, which stays below 1e100·|x + w|
MIN_RATIO = 1e-50  # r = 1/(1 + η·l2) below this (η·l2 > 1e50): the catch-up kernels instead


class LazyProx(NamedTuple):
    """prox_{ηg} of the elastic net as the lazy kernels read it (a Numba tuple): the step η,
    the weights, log r = −log(1 + η·l2) and the :func:`contraction_table` of log r."""

    step: float
    l1: float
    l2: float
    log_r: float
    table: np.ndarray


def lazy_prox(step: float, penalty: ElasticNet) -> LazyProx:
    """The :class:`LazyProx` of step η = ``step`` on ``penalty``."""
    log_r = -math.log1p(step * penalty.l2)
    return LazyProx(float(step), penalty.l1, penalty.l2, log_r, contraction_table(log_r))


def contraction_table(log_r: float) -> np.ndarray:
    """1 − rᵃ for a = 0, …, TABLE_LOW − 1, then 1 − r^(TABLE_LOW·b) for b = 0, …,
    TABLE_LOW − 1, r = exp(log_r), without cancellation: two levels of 2 KB each, which
    :func:`tabulated` combines for any m below TABLE_SIZE, small enough to stay in L1."""
    steps = np.arange(TABLE_LOW)
    return -np.expm1(np.concatenate((steps, steps * TABLE_LOW)) * log_r)


@njit(cache=True, inline="always")
def tabulated(low, high):
    """1 − rᵃ⁺ᵇ from ``low`` = 1 − rᵃ and ``high`` = 1 − rᵇ, without cancellation."""
    return low + high - low * high


@njit(cache=True, inline="always")
def contraction_at(table, m, log_r):
    """1 − rᵐ, r = exp(log_r), from ``table`` = :func:`contraction_table` (log_r) when m is
    below TABLE_SIZE."""
    if m < TABLE_SIZE:
        return tabulated(table[m & (TABLE_LOW - 1)], table[TABLE_LOW + (m >> TABLE_BITS)])
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
def catch_up_steps(x, gbar, m, contraction, step, l1, l2, log_r):
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
def catch_up(x, gbar, m, step, l1, l2, log_r, table):
    """:func:`catch_up_steps` with 1 − rᵐ read from ``table`` = :func:`contraction_table`
    (log_r)."""
    return catch_up_steps(x, gbar, m, contraction_at(table, m, log_r), step, l1, l2, log_r)


@njit(cache=True, _nrt=False)
def fold(primal, scale):
    """v ← S·v for the scaled form ``primal`` (columns V, W) with S = ``scale``: S is then 1."""
    for j in range(primal.shape[0]):
        primal[j, V] *= scale


def scales(step: float, penalty: ElasticNet) -> bool:
    """Whether the kernels hold x in the scaled form for this step and penalty (l2 alone)."""
    return penalty.l1 == 0.0 and 1.0 / (1.0 + step * penalty.l2) >= MIN_RATIO


def scaled_x(primal: np.ndarray) -> np.ndarray:
    """x = v − w of the scaled form at S = 1 (a new array)."""
    return primal[:, V] - primal[:, W]


# ------------------------------------------------------------------ K columns (K-class X)
#
# A K-class problem's iterate X has shape (n_features, K): the K coefficients of a feature
# are read and stepped together (one read of a row of A serves the K classes), so a
# feature's lazy state is shared by its K coefficients (one ``last``, one 1 − rᵐ) and each
# coefficient takes :func:`catch_up_steps` with its own ḡ. The scaled form holds V and W
# as the two planes of a (n_features, 2, K) array: X = S·v − w, one global S.


@njit(cache=True, inline="always")
def common_walk(x, gbar, m, contraction, step, l1, l2, log_r):
    """(x after m steps, True) when :func:`catch_up_steps` takes its common walk (one
    region, or into the dead zone for good), else (anything, False): that walk decided
    with selects only, the same operations, so that a loop over a feature's K coefficients
    vectorizes; a kernel hands the others to :func:`catch_up_steps`. Requires l1 > 0."""
    c = step * gbar
    lam = step * l1
    outside = abs(x - c) > lam
    sign = math.copysign(1.0, x - c)
    fixed = -(gbar + sign * l1) * (1.0 / l2)
    gap = sign * (fixed - c) - lam
    common = min(abs(c) - lam, max(lam - abs(x - c), -gap)) < 0.0
    walk = x - contraction * (x - fixed)
    before = fixed + (1.0 - contraction) * math.exp(-log_r) * (x - fixed)
    keep = (outside & ((gap >= 0.0) | (sign * (before - c) > lam))) | (m == 0)
    return (walk if keep else 0.0), common


@njit(cache=True, _nrt=False)
def catch_up_columns(x, gbar, j, m, contraction, step, l1, l2, log_r, hard):
    """x[j, :] ← m lazy steps of each of the K coefficients of feature j (:func:`catch_up_steps`
    with ḡ = gbar[j, :], 1 − rᵐ = ``contraction``): the common walks in one vector loop
    (:func:`common_walk`), the others one by one; ``hard`` is scratch of length K.

    A function of its own, not inlined by Numba: its arrays come in as arguments, which
    LLVM's vectorizer handles with cheap overlap checks (the same loop inlined in a kernel,
    on arrays unpacked from a tuple, ran 2.6× slower)."""
    K = x.shape[1]
    rare = 0
    for c in range(K):
        value, common = common_walk(x[j, c], gbar[j, c], m, contraction, step, l1, l2, log_r)
        x[j, c] = value if common else x[j, c]
        flag = 0 if common else 1  # (an integer flag: a bool one defeats the vectorizer)
        hard[c] = flag
        rare |= flag
    if rare != 0:
        for c in range(K):
            if hard[c] != 0:
                x[j, c] = catch_up_steps(x[j, c], gbar[j, c], m, contraction, step, l1, l2, log_r)


@njit(cache=True, _nrt=False)
def prefetch_columns(indptr, indices, flat, width, i):
    """Prefetch the blocks of ``width`` values that the features of row i own in ``flat``
    (a K-column array viewed flat: a plane of shape (d, K), width K, or a scaled form of
    shape (d, 2, K), width 2K), one hint a cache line. The K-column kernels call it for the
    next draw's row: its features' blocks then arrive while the current row is worked on
    (measured on news20, K = 20: a SAGA elastic-net epoch 163 → 115 ms)."""
    for q in range(indptr[i], indptr[i + 1]):
        base = width * indices[q]
        for offset in range(0, width, 8):
            prefetch(flat, base + offset)
        prefetch(flat, base + width - 1)


@njit(cache=True, _nrt=False)
def fold_columns(primal, scale):
    """v ← S·v for the K-column scaled form ``primal`` (shape (d, 2, K)) with S =
    ``scale``: S is then 1."""
    for j in range(primal.shape[0]):
        for c in range(primal.shape[2]):
            primal[j, V, c] *= scale


def scaled_columns(primal: np.ndarray) -> np.ndarray:
    """X = v − w of the K-column scaled form at S = 1 (a new (d, K) array)."""
    return primal[:, V, :] - primal[:, W, :]
