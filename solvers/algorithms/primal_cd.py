"""Primal randomized coordinate descent: NSync, Faceoff Algorithm 1 (serial sampling).

Coordinate j steps by −∇ⱼP(x)/u'ⱼ with u'ⱼ = β·uⱼ/n + l2, uⱼ = ‖A_:ⱼ‖² (Faceoff eq. (7)),
and a soft-threshold (proximal coordinate step) when l1 > 0. Ax is maintained, so a step
costs O(nnz of column j). Sampling: uniform, or importance pⱼ ∝ β·uⱼ + l2·n (eq. (14)).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from faceoff.solvers.driver import PrimalMethod, run_chunked
from faceoff.solvers.losses import loss_deriv
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
    """

    x: np.ndarray
    Ax: np.ndarray
    lipschitz: np.ndarray


@njit(cache=True)
def _primal_cd(data, loss, penalty, sampler, state, n_updates):
    """Run ``n_updates`` steps of Algorithm 1 on the CSC arrays of A; returns nnz visited."""
    indptr, indices, values = data.csc
    b = data.b
    l1, l2 = penalty
    x, Ax, lipschitz = state
    n_samples = b.shape[0]
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
        grad = 0.0
        for k in range(start, end):  # ∇ⱼ (1/n Σ φ(Ax)) = 1/n Σᵢ φ'(aᵢᵀx) A_ij
            i = indices[k]
            grad += loss_deriv(loss, Ax[i], b[i]) * values[k]
        grad = grad / n_samples + l2 * x[j]
        x_new = x[j] - grad / lipschitz[j]
        if l1 > 0.0:
            x_new = soft_threshold(x_new, l1 / lipschitz[j])
        delta = x_new - x[j]
        if delta != 0.0:
            x[j] = x_new
            for k in range(start, end):  # Ax += delta · A_:j
                Ax[indices[k]] += delta * values[k]
        visited += end - start
    sampler.ring[0] = draws
    return visited


class PrimalCD(PrimalMethod):
    """State of one primal_cd run (see module docstring)."""

    def __init__(self, problem: Problem, sampling: str, seed: int) -> None:
        data = problem.data
        self.problem = problem
        self.n_coords = data.n_features
        beta = problem.loss.smoothness
        n, l2 = data.n_samples, problem.penalty.l2
        weights = beta * data.col_sq_norms + l2 * n if sampling == "importance" else None
        self.sampler = Sampler(self.n_coords, sampling, seed, weights)
        self.nnz_per_update = float(self.sampler.probabilities @ data.col_nnz)
        self.state = PrimalState(
            x=np.zeros(self.n_coords),
            Ax=np.zeros(n),
            lipschitz=beta * data.col_sq_norms / n + l2,
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


def solve(problem: Problem, params: dict, recorder: Recorder, seed: int) -> str:
    method = PrimalCD(problem, params["sampling"], seed)
    return run_chunked(method, recorder, problem.data.nnz)
