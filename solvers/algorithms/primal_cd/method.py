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
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from faceoff.solvers.algorithms.primal_cd import Params
from faceoff.solvers.driver import PrimalMethod, run_chunked
from faceoff.solvers.losses import (
    curvature_growth,
    loss_deriv,
    loss_derivs12,
    loss_increment,
)
from faceoff.solvers.penalties import soft_threshold
from faceoff.solvers.prefetch import prefetch
from faceoff.solvers.problem import Problem
from faceoff.solvers.sampling import Sampler, next_coordinate
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
        if newton:
            h = curvature * inv_n + l2
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
        self.n_coords = data.n_features
        beta = problem.loss.smoothness
        n, l2 = data.n_samples, problem.penalty.l2
        weights = beta * data.col_sq_norms + l2 * n if sampling == "importance" else None
        self.sampler = Sampler(self.n_coords, sampling, seed, weights)
        self.nnz_per_update = float(self.sampler.probabilities @ data.col_nnz)
        newton = step == "newton"
        loss_bound = beta * data.col_sq_norms / n
        self.state = PrimalState(
            x=np.zeros(self.n_coords),
            Ax=np.zeros(n),
            lipschitz=loss_bound + l2,
            newton=newton,
            loss_bound=loss_bound if newton else np.empty(0),
            col_max=_col_max_abs(data.csc) if newton else np.empty(0),
        )
        self.x = self.state.x

    def run(self, n_updates: int) -> int:
        problem = self.problem
        return _primal_cd(
            problem.arrays,
            problem.loss.params,
            problem.penalty.params,
            self.sampler.state,
            self.state,
            n_updates,
        )


def solve(problem: Problem, params: Params, recorder: Recorder, seed: int) -> str:
    method = PrimalCD(problem, params.sampling, seed, params.step)
    return run_chunked(method, recorder, problem.data.nnz)
