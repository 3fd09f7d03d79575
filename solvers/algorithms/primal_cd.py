"""Primal randomized coordinate descent: NSync, Faceoff Algorithm 1 (serial sampling).

Coordinate j steps by −∇ⱼP(x)/u'ⱼ with u'ⱼ = β·uⱼ/n + l2, uⱼ = ‖A_:ⱼ‖² (Faceoff eq. (7)),
and a soft-threshold (proximal coordinate step) when l1 > 0. Ax is maintained, so a step
costs O(nnz of column j). Sampling: uniform, or importance pⱼ ∝ β·uⱼ + l2·n (eq. (14)).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from faceoff.solvers.driver import PrimalMethod, run_chunked
from faceoff.solvers.losses import loss_deriv
from faceoff.solvers.penalties import soft_threshold
from faceoff.solvers.prefetch import prefetch
from faceoff.solvers.problem import Problem
from faceoff.solvers.sampling import Sampler, next_coordinate
from faceoff.solvers.trace import Recorder


@njit(cache=True)
def _primal_cd(
    indptr,
    indices,
    data,
    b,
    x,
    Ax,
    lipschitz,
    l1,
    l2,
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
    """Run ``n_updates`` steps of Algorithm 1 on the CSC arrays of A; returns nnz visited."""
    n_samples = b.shape[0]
    visited = 0
    draws = ring[0]  # the sampler's step counter, kept in a register
    for _ in range(n_updates):
        j, ahead, half = next_coordinate(rng_state, ring, draws, mode, prob, alias, perm)
        draws += 1
        prefetch(indptr, ahead)
        col = indptr[half]
        prefetch(indices, col)
        prefetch(data, col)
        prefetch(x, half)
        prefetch(lipschitz, half)
        start, end = indptr[j], indptr[j + 1]
        grad = 0.0
        for k in range(start, end):  # ∇ⱼ (1/n Σ φ(Ax)) = 1/n Σᵢ φ'(aᵢᵀx) A_ij
            i = indices[k]
            grad += loss_deriv(loss_code, gamma, Ax[i], b[i]) * data[k]
        grad = grad / n_samples + l2 * x[j]
        x_new = x[j] - grad / lipschitz[j]
        if l1 > 0.0:
            x_new = soft_threshold(x_new, l1 / lipschitz[j])
        delta = x_new - x[j]
        if delta != 0.0:
            x[j] = x_new
            for k in range(start, end):  # Ax += delta · A_:j
                Ax[indices[k]] += delta * data[k]
        visited += end - start
    ring[0] = draws
    return visited


class PrimalCD(PrimalMethod):
    """State of one primal_cd run (see module docstring)."""

    def __init__(self, problem: Problem, sampling: str, seed: int) -> None:
        data = problem.data
        self.problem = problem
        self.n_coords = data.n_features
        beta = problem.loss.smoothness
        n, l2 = data.n_samples, problem.penalty.l2
        self.lipschitz = beta * data.col_sq_norms / n + l2
        weights = beta * data.col_sq_norms + l2 * n if sampling == "importance" else None
        self.sampler = Sampler(self.n_coords, sampling, seed, weights)
        self.nnz_per_update = float(self.sampler.probabilities @ data.col_nnz)
        self.x = np.zeros(self.n_coords)
        self.Ax = np.zeros(n)

    def run(self, n_updates: int) -> int:
        csc, p, loss = self.problem.data.csc, self.problem.penalty, self.problem.loss
        return _primal_cd(
            csc.indptr,
            csc.indices,
            csc.data,
            self.problem.b,
            self.x,
            self.Ax,
            self.lipschitz,
            p.l1,
            p.l2,
            loss.code,
            loss.gamma,
            n_updates,
            *self.sampler.args(),
        )


def solve(problem: Problem, params: dict, recorder: Recorder, seed: int) -> str:
    method = PrimalCD(problem, params["sampling"], seed)
    return run_chunked(method, recorder, problem.data.nnz)
