"""Dual randomized coordinate ascent: Quartz / SDCA, Faceoff Algorithm 2 (serial sampling).

The dual point y determines x = ∇g*(z), z = −Aᵀy/n (prox-SDCA for elastic net); x (and z
when l1 > 0) is maintained, so a step costs O(nnz of row i). The step on yᵢ maximizes
−φ*(β) + β·aᵢᵀx − ‖aᵢ‖²(β − yᵢ)²/(2·l2·n) exactly (closed form for squared and smoothed
hinge, safeguarded Newton for logistic), or with ``step="fixed"`` takes the fixed step of
Faceoff §7 in Quartz's form (Qu et al. 2015), yᵢ += (θ/qᵢ)(φ'(aᵢᵀx) − yᵢ) with
θ = minⱼ qⱼ·l2·n/(β·vⱼ + l2·n): a convex combination, so yᵢ stays in the domain of φ*.
Sampling: uniform, importance qᵢ ∝ β·vᵢ + l2·n with vᵢ = ‖aᵢ‖² (eq. (14)), or a random
permutation per epoch (as liblinear and lightning do; outside the paper's analysis).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from faceoff.solvers.driver import run_chunked
from faceoff.solvers.losses import LOGISTIC, loss_deriv, loss_dual_step
from faceoff.solvers.penalties import soft_threshold
from faceoff.solvers.prefetch import prefetch
from faceoff.solvers.problem import Problem
from faceoff.solvers.sampling import Sampler, next_coordinate
from faceoff.solvers.trace import Recorder


@njit(cache=True)
def _dual_cd(
    indptr,
    indices,
    data,
    b,
    y,
    z,
    x,
    inv_s,
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
    fixed_step,
    eta,
    warm,
):
    """Run ``n_updates`` steps of Algorithm 2 on the CSR arrays of A; returns nnz visited."""
    n_samples = b.shape[0]
    inv_l2 = 1.0 / l2
    visited = 0
    draws = ring[0]  # the sampler's step counter, kept in a register
    for _ in range(n_updates):
        i, ahead, half = next_coordinate(rng_state, ring, draws, mode, prob, alias, perm)
        draws += 1
        prefetch(indptr, ahead)
        row = indptr[half]
        prefetch(indices, row)
        prefetch(data, row)
        prefetch(y, half)
        prefetch(b, half)
        prefetch(inv_s, half)
        if loss_code == LOGISTIC:
            prefetch(warm, half)
        start, end = indptr[i], indptr[i + 1]
        zi = 0.0
        for k in range(start, end):  # aᵢᵀx
            zi += data[k] * x[indices[k]]
        if fixed_step:
            y_new = y[i] + eta[i] * (loss_deriv(loss_code, gamma, zi, b[i]) - y[i])
        else:
            if loss_code == LOGISTIC:  # only its Newton solve keeps a warm start
                y_new, warm[i] = loss_dual_step(loss_code, gamma, y[i], zi, b[i], inv_s[i], warm[i])
            else:
                y_new = loss_dual_step(loss_code, gamma, y[i], zi, b[i], inv_s[i], 0.0)[0]
        delta = y_new - y[i]
        if delta != 0.0:
            y[i] = y_new
            coef = -delta / n_samples
            if l1 > 0.0:
                for k in range(start, end):  # z −= δ aᵢ / n ;  x = ∇g*(z) = soft(z, l1)/l2
                    j = indices[k]
                    z[j] += coef * data[k]
                    x[j] = soft_threshold(z[j], l1) * inv_l2
            else:  # x = z/l2: z is not needed, x −= δ aᵢ / (l2·n)
                coef *= inv_l2
                for k in range(start, end):
                    x[indices[k]] += coef * data[k]
        visited += end - start
    ring[0] = draws
    return visited


class DualCD:
    """State of one dual_cd run (see module docstring)."""

    def __init__(self, problem: Problem, sampling: str, step: str, seed: int) -> None:
        data = problem.data
        self.problem = problem
        n, l2 = data.n_samples, problem.penalty.l2
        beta = problem.loss.smoothness
        self.n_coords = n
        self.inv_s = data.row_sq_norms / (l2 * n)
        weights = beta * data.row_sq_norms + l2 * n if sampling == "importance" else None
        self.sampler = Sampler(n, sampling, seed, weights)
        q = self.sampler.probabilities
        self.nnz_per_update = float(q @ data.row_nnz)
        self.fixed_step = step == "fixed"
        theta = float(np.min(q * l2 * n / (beta * data.row_sq_norms + l2 * n)))
        self.eta = theta / q
        self.y = np.zeros(n)
        self.warm = np.full(n, np.nan)  # per-coordinate warm start of the 1-D solve
        self.z = np.zeros(data.n_features)
        self.x = np.zeros(data.n_features)

    def run(self, n_updates: int) -> int:
        csr, p, loss = self.problem.data.csr, self.problem.penalty, self.problem.loss
        return _dual_cd(
            csr.indptr,
            csr.indices,
            csr.data,
            self.problem.b,
            self.y,
            self.z,
            self.x,
            self.inv_s,
            p.l1,
            p.l2,
            loss.code,
            loss.gamma,
            n_updates,
            *self.sampler.args(),
            self.fixed_step,
            self.eta,
            self.warm,
        )

    def iterate(self) -> dict:
        return {"y": self.y}

    def extras(self) -> dict:
        return {"nnz_y": int(np.count_nonzero(self.y))}


def solve(problem: Problem, params: dict, recorder: Recorder, seed: int) -> str:
    method = DualCD(problem, params["sampling"], params["step"], seed)
    return run_chunked(method, recorder, problem.data.nnz)
