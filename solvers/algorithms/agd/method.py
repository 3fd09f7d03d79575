"""Accelerated proximal gradient with adaptive line search (Nesterov 2013, SPDC §7).

Smooth part f(x) = 1/n Σ φ(aᵢᵀx, bᵢ) + l2/2‖x‖², non-smooth part l1‖x‖₁ (soft-threshold
prox). One iteration (Nesterov 2013, "Gradient methods for minimizing composite
functions", §4, constant-momentum scheme for a known strong-convexity modulus μ = l2):

    y  = x + β(x − x₋),        β = (1 − √(μ/L)) / (1 + √(μ/L))
    x⁺ = prox_{g/L}(y − ∇f(y)/L),   L = L_loss + l2,

With l2 = 0 (the Lasso, l1-logistic: μ = 0) the momentum is FISTA's (Beck & Teboulle
2009, eq. (4.2)–(4.3)): β = (t − 1)/t⁺, t⁺ = (1 + √(1 + 4t²))/2, t reset to 1 at a restart;
so it is with an intercept c (one more coordinate, unpenalized, so μ = 0 along it), whose
gradient is 1/n Σᵢ φ'(aᵢᵀx + c) and which the prox leaves as it is.

The estimate L_loss of the loss curvature is first decreased and then doubled until
the quadratic upper bound holds on the loss part,

    1/n Σ [φ(aᵢᵀx⁺) − φ(aᵢᵀy) − φ'(aᵢᵀy)·aᵢᵀ(x⁺ − y)] ≤ L_loss/2 ‖x⁺ − y‖²

(the l2 part satisfies it with equality, so it is left out), or its second-order form once
the bound is too small to show in the loss values (see :meth:`AGD._upper_bound_holds`).
L_loss starts at β‖A‖²_F/n, a valid global bound, and stays within [1e-10, 1] times it. The
decrease is ×1/2 until the first failed trial (a fast search down from the loose start) and
×0.9 afterwards: on a9a that takes ~20% fewer passes than halving at every iteration, which
fails a trial about every other iteration. The momentum is reset by the gradient-mapping
restart of O'Donoghue & Candès (2015): when (y − x⁺)ᵀ(x⁺ − x) > 0 the next step starts
from y = x⁺.

A x is kept for x and x₋, so Ay = Ax + β(Ax − Ax₋) costs no product: an iteration does one
product with Aᵀ (the gradient at y) and one with A per line-search trial (A x⁺), each
counted as nnz/2 visits.
"""

from __future__ import annotations

import math

import numpy as np

from faceoff.solvers.algorithms.agd import Params
from faceoff.solvers.driver import run_chunked
from faceoff.solvers.problem import Problem
from faceoff.solvers.trace import Recorder

_FIRST_DECREASE = 0.5  # factor on L_loss before each line search, until a trial first fails
_DECREASE = 0.9  # the same factor afterwards
_INCREASE = 2.0  # factor on L_loss after a failed trial
_FLOOR = 1e-10  # lowest L_loss, relative to the global bound β‖A‖²_F/n
_RESOLVED = 1e-9  # L_loss/2‖Δ‖² above this times the loss: test on loss values (see below)


def _dot(u: np.ndarray, v: np.ndarray) -> float:
    """uᵀv of two vectors, or of two K-column arrays as vectors (vec(U)ᵀvec(V))."""
    return float(u.reshape(-1) @ v.reshape(-1))


class AGD:
    """State of one agd run (see module docstring)."""

    def __init__(self, problem: Problem) -> None:
        data = problem.data
        self.problem = problem
        self.n_coords = 1
        self.nnz_per_update = float(data.nnz)
        self.nnz = data.nnz
        self.l1, self.l2 = problem.penalty.l1, problem.penalty.l2
        self.d = data.n_features  # x[:d] are penalized; x[d] is the intercept, if any
        self.intercept = problem.intercept
        self.strongly_convex = self.l2 > 0 and not self.intercept
        # β‖A‖²_F/n ≥ β‖A‖²₂/n: the quadratic upper bound holds for any L_loss above it (with
        # an intercept, A has one more column of ones: n more)
        squares = float(data.row_sq_norms.sum()) + (data.n_samples if self.intercept else 0)
        frobenius = problem.smoothness * squares / data.n_samples
        self.lipschitz_max = max(frobenius, np.finfo(float).tiny)
        self.lipschitz_min = _FLOOR * self.lipschitz_max
        self.lipschitz = self.lipschitz_max
        self.x = np.zeros(problem.coef_shape)  # (d, K) for a K-class problem
        self.Ax = np.zeros(problem.dual_shape)
        self.x_prev, self.Ax_prev = self.x, self.Ax
        self.deriv = np.empty(problem.dual_shape)
        self.deriv_new = np.empty(problem.dual_shape)
        self.work = np.empty((3, self.deriv.size))  # scratch of the loss sums
        self.products = 0  # products with A or Aᵀ so far, nnz/2 visits each
        self.restarts = 0
        self.t = 1.0  # FISTA's t (l2 = 0)
        self.backtracked = False  # has a line-search trial failed yet

    def _prox(self, v: np.ndarray, step: float) -> np.ndarray:
        """prox of step·l1‖·‖₁ (l2 is in the smooth part): soft(v, step·l1)."""
        if self.l1 == 0:
            return v
        out = np.sign(v) * np.maximum(np.abs(v) - step * self.l1, 0.0)
        if self.intercept:  # c is not penalized
            out[self.d] = v[self.d]
        return out

    def _upper_bound_holds(self, r, loss_y, Ay, Ax_new, dx_sq) -> bool:
        """Whether L_loss passes the line-search test at x⁺ (y, x⁺ seen through Ay, Ax⁺).

        While the allowed curvature term L_loss/2‖Δ‖² is large next to the rounding of
        the loss values, the test is the quadratic upper bound itself; below that it is
        its second-order form (φ'(Ax⁺) − φ'(Ay))ᵀ(Ax⁺ − Ay)/n ≤ L_loss‖Δ‖², a sum of
        products of small differences, exact for the squared loss. Near the optimum the
        first form would fail on rounding alone and drive L_loss up for nothing.
        """
        problem = self.problem
        n = problem.n_samples
        if self.lipschitz >= self.lipschitz_max:  # a global bound: holds up to rounding
            return True
        budget = 0.5 * self.lipschitz * dx_sq
        dz = Ax_new - Ay
        if budget >= _RESOLVED * abs(loss_y):
            # loss part of f(x⁺) − f(y) − ∇f(y)ᵀ(x⁺ − y), the linear term in sample space
            bregman = (problem.loss_sum(Ax_new, self.work) - _dot(r, dz)) / n - loss_y
            return bregman <= budget
        deriv_new = problem.loss_derivs(Ax_new, self.deriv_new)
        return _dot(deriv_new - r, dz) / n <= 2.0 * budget

    def _iteration(self) -> None:
        problem, data = self.problem, self.problem.data
        n = data.n_samples
        if self.strongly_convex:
            theta = math.sqrt(self.l2 / (self.lipschitz + self.l2))
            momentum = (1.0 - theta) / (1.0 + theta)
        else:  # FISTA's schedule
            t_next = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * self.t * self.t))
            momentum, self.t = (self.t - 1.0) / t_next, t_next
        # y = x + β(x − x₋), Ay likewise: no product
        y = self.x + momentum * (self.x - self.x_prev)
        Ay = self.Ax + momentum * (self.Ax - self.Ax_prev)
        # r = φ'(Ay) and the loss at Ay together; ∇f(y) = Aᵀr/n + l2·y
        loss_y = problem.loss_sum_derivs(Ay, self.deriv, self.work) / n
        r = self.deriv
        if self.intercept:
            grad = np.append(data.rmatvec(r) / n + self.l2 * y[: self.d], r.sum() / n)
        else:
            grad = data.rmatvec(r) / n + self.l2 * y
        self.products += 1
        decrease = _DECREASE if self.backtracked else _FIRST_DECREASE
        self.lipschitz = max(self.lipschitz * decrease, self.lipschitz_min)
        while True:
            step = 1.0 / (self.lipschitz + self.l2)
            x_new = self._prox(y - step * grad, step)
            Ax_new = problem.margins(x_new)
            self.products += 1
            dx = x_new - y
            if self._upper_bound_holds(r, loss_y, Ay, Ax_new, _dot(dx, dx)):
                break
            self.lipschitz = min(self.lipschitz * _INCREASE, self.lipschitz_max)
            self.backtracked = True
        if _dot(dx, self.x - x_new) > 0.0:  # (y − x⁺)ᵀ(x⁺ − x) > 0: restart
            self.x_prev, self.Ax_prev = x_new, Ax_new
            self.restarts += 1
            self.t = 1.0
        else:
            self.x_prev, self.Ax_prev = self.x, self.Ax
        self.x, self.Ax = x_new, Ax_new

    def run(self, n_updates: int) -> int:
        before = self.products * self.nnz // 2
        for _ in range(n_updates):
            self._iteration()
        return self.products * self.nnz // 2 - before

    def iterate(self) -> dict:
        return {"x": self.x}

    def extras(self) -> dict:
        return {"lipschitz": self.lipschitz + self.l2, "restarts": self.restarts}


def solve(problem: Problem, params: Params, recorder: Recorder, seed: int) -> str:
    method = AGD(problem)
    if recorder.warm_start is not None:  # a path's previous solution, momentum reset
        method.x = np.array(recorder.warm_start, dtype=np.float64)
        if problem.multiclass is None:
            method.Ax = problem.margins(method.x)
        else:
            method.Ax = problem.data.matvec(method.x)
        method.x_prev, method.Ax_prev = method.x, method.Ax
    return run_chunked(method, recorder, problem.data.nnz)
