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
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from faceoff.solvers.driver import run_chunked
from faceoff.solvers.losses import (
    EXACT_TOL,
    dual_step,
    loss_deriv,
    prefetch_warm,
    warm_starts,
)
from faceoff.solvers.penalties import soft_threshold
from faceoff.solvers.prefetch import prefetch, prefetch_span
from faceoff.solvers.problem import Problem
from faceoff.solvers.sampling import Sampler, next_coordinate
from faceoff.solvers.trace import Recorder


class DualState(NamedTuple):
    """The iterate and per-coordinate steps of a dual_cd run (a Numba tuple).

    y : array, shape (n_samples,)
    z, x : arrays, shape (n_features,)
        z = −Aᵀy/n (kept only when l1 > 0) and x = ∇g*(z).
    inv_s : array, shape (n_samples,)
        ‖aᵢ‖²/(l2·n), the curvature of the exact step.
    warm : array, shape (n_samples,)
        The exact step's warm starts (:func:`~faceoff.solvers.losses.dual_step`).
    fixed_step : bool
        Quartz's fixed step yᵢ += ηᵢ(φ'(aᵢᵀx) − yᵢ) instead of the exact one.
    eta : array, shape (n_samples,)
        θ/qᵢ of the fixed step.
    inner : array, shape (3,)
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
        prefetch(indptr, ahead)
        row, row_end = indptr[half], indptr[half + 1]
        prefetch_span(indices, row, row_end)
        prefetch_span(values, row, row_end)
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
            coef = -delta / n_samples
            if l1 > 0.0:
                for k in range(start, end):  # z −= δ aᵢ / n ;  x = ∇g*(z) = soft(z, l1)/l2
                    j = indices[k]
                    z[j] += coef * values[k]
                    x[j] = soft_threshold(z[j], l1) * inv_l2
            else:  # x = z/l2: z is not needed, x −= δ aᵢ / (l2·n)
                coef *= inv_l2
                for k in range(start, end):
                    x[indices[k]] += coef * values[k]
        visited += end - start
    sampler.ring[0] = draws
    inner[0], inner[1], inner[2] = tol, newton, steps
    return visited


class DualCD:
    """State of one dual_cd run (see module docstring)."""

    def __init__(self, problem: Problem, sampling: str, step: str, seed: int) -> None:
        data = problem.data
        self.problem = problem
        n, l2 = data.n_samples, problem.penalty.l2
        beta = problem.loss.smoothness
        self.n_coords = n
        weights = beta * data.row_sq_norms + l2 * n if sampling == "importance" else None
        self.sampler = Sampler(n, sampling, seed, weights)
        q = self.sampler.probabilities
        self.nnz_per_update = float(q @ data.row_nnz)
        theta = float(np.min(q * l2 * n / (beta * data.row_sq_norms + l2 * n)))
        self.state = DualState(
            y=np.zeros(n),
            z=np.zeros(data.n_features),
            x=np.zeros(data.n_features),
            inv_s=data.row_sq_norms / (l2 * n),
            warm=warm_starts(n),
            fixed_step=step == "fixed",
            eta=theta / q,
            inner=np.array([INNER_TOL_START, 0.0, 0.0]),
        )
        self.y = self.state.y

    def run(self, n_updates: int) -> int:
        problem = self.problem
        return _dual_cd(
            problem.arrays,
            problem.loss.params,
            problem.penalty.params,
            self.sampler.state,
            self.state,
            n_updates,
        )

    def iterate(self) -> dict:
        return {"y": self.y, "x": self.state.x}  # x = ∇g*(−Aᵀy/n), kept: one pass a point

    def extras(self) -> dict:
        return {"nnz_y": int(np.count_nonzero(self.y))}


def solve(problem: Problem, params: dict, recorder: Recorder, seed: int) -> str:
    method = DualCD(problem, params["sampling"], params["step"], seed)
    return run_chunked(method, recorder, problem.data.nnz)
