"""SpaRSA (Wright, Nowak & Figueiredo 2009) for P(x) = f(x) + l1‖x‖₁, f the loss plus l2/2‖x‖².

From x, with gradient g = ∇f(x) = Aᵀφ'(Ax)/n + l2·x and a step 1/α, the trial point is

    x⁺ = soft(x − g/α, l1/α),

accepted when P(x⁺) ≤ max(P of the last M iterates) − σα/2 ‖x⁺ − x‖² (σ = 1e-4), else α is
doubled. After an accepted step α restarts from the Barzilai–Borwein value
α = sᵀ(g⁺ − g)/sᵀs, s = x⁺ − x, clipped to [α_min, α_max]. Each trial costs a product with A,
each accepted step one with Aᵀ.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from faceoff.solvers.driver import PrimalMethod, run_chunked
from faceoff.solvers.problem import Problem
from faceoff.solvers.trace import Recorder
from faceoff_plugin_example.spec import Params

SIGMA = 1e-4


class SpaRSA(PrimalMethod):
    """State of one run: x, Ax, the gradient, the step parameter α and the last P values."""

    n_coords = 1  # an update is one accepted step

    def __init__(self, problem: Problem, memory: int) -> None:
        data = problem.data
        self.problem, self.data, self.n = problem, data, problem.n_samples
        self.l1, self.l2 = problem.penalty.l1, problem.penalty.l2
        # β‖A‖²_F/n + l2 bounds the curvature of f: the first trial step is safe
        bound = problem.loss.smoothness * float(data.row_sq_norms.sum()) / self.n + self.l2
        self.alpha_min, self.alpha_max = 1e-12 * bound, 1e12 * bound
        self.alpha = bound
        self.nnz_per_update = float(data.nnz)  # two products, nnz/2 visits each
        self.x = np.zeros(problem.n_features)
        self.Ax = np.zeros(self.n)
        self.grad = self._gradient(self.x, self.Ax)
        self.values = deque([problem.primal_value(self.x, self.Ax)], maxlen=memory)
        self.products = 0

    def _gradient(self, x: np.ndarray, Ax: np.ndarray) -> np.ndarray:
        return self.data.rmatvec(self.problem.dual_from_primal(x, Ax)) / self.n + self.l2 * x

    def _step(self) -> None:
        reference = max(self.values)
        while True:
            v = self.x - self.grad / self.alpha
            x_new = np.sign(v) * np.maximum(np.abs(v) - self.l1 / self.alpha, 0.0)
            Ax_new = self.data.matvec(x_new)
            self.products += 1
            value = self.problem.primal_value(x_new, Ax_new)
            s = x_new - self.x
            ss = float(s @ s)
            if value <= reference - 0.5 * SIGMA * self.alpha * ss or ss == 0.0:
                break
            if self.alpha >= self.alpha_max:
                break
            self.alpha = min(2.0 * self.alpha, self.alpha_max)
        grad_new = self._gradient(x_new, Ax_new)
        self.products += 1
        sy = float(s @ (grad_new - self.grad))
        self.alpha = min(max(sy / ss, self.alpha_min), self.alpha_max) if ss > 0 else self.alpha
        self.x, self.Ax, self.grad = x_new, Ax_new, grad_new
        self.values.append(value)

    def run(self, n_updates: int) -> int:
        before = self.products
        for _ in range(n_updates):
            self._step()
        return (self.products - before) * self.data.nnz // 2

    def extras(self) -> dict:
        return {"alpha": self.alpha}


def solve(problem: Problem, params: Params, recorder: Recorder, seed: int) -> str:
    return run_chunked(SpaRSA(problem, params.memory), recorder, problem.data.nnz)
