"""Independent reference optima: scipy L-BFGS-B at tight tolerance.

For l1 + l2 the objective is made smooth with split variables x = x⁺ − x⁻, x± ≥ 0
(l1·‖x‖₁ = l1·Σ(x⁺ + x⁻) on the optimal split), solved with bounds. A K-class problem is
solved on vec(X), its loss summed over the K columns (one-vs-rest) or taken over a row's K
scores (multinomial).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize

from faceoff.solvers.losses import loss_derivs, loss_values
from faceoff.solvers.problem import Problem


def reference_optimum(problem: Problem) -> tuple[float, np.ndarray]:
    """(P*, x*) by L-BFGS-B, independent of every Faceoff solver."""
    A = problem.data.csr_matrix
    b, n, shape = problem.b, problem.n_samples, problem.coef_shape
    d = int(np.prod(shape))  # the variables: d, or d·K of a K-class problem
    loss = problem.loss.params
    l1, l2 = problem.penalty.l1, problem.penalty.l2
    deriv = np.empty(n)

    def sums(z):
        """(Σ φ, φ') at the margins z (K-class: through the Problem's sums over (n, K))."""
        if problem.multiclass is None:
            return loss_values(loss, z, b), loss_derivs(loss, z, b, deriv)
        return problem.loss_sum(z), problem.loss_derivs(z)

    def fun(w):
        x = w[:d] - w[d:] if l1 > 0 else w
        values, derivs = sums(A @ x.reshape(shape))
        g = (A.T @ derivs).reshape(-1) / n + l2 * x
        value = values / n + 0.5 * l2 * (x @ x)
        if l1 > 0:
            value += l1 * w.sum()
            return value, np.concatenate([g + l1, -g + l1])
        return value, g

    size = 2 * d if l1 > 0 else d
    bounds = [(0, None)] * size if l1 > 0 else None
    best = None
    w = np.zeros(size)
    for _ in range(5):  # restarts from the last point tighten the last digits
        res = minimize(
            fun,
            w,
            jac=True,
            method="L-BFGS-B",
            bounds=bounds,
            options={"maxiter": 20000, "maxcor": 30, "ftol": 1e-16, "gtol": 1e-13},
        )
        if best is not None and res.fun >= best.fun - 1e-16 * abs(best.fun):
            best = res if res.fun < best.fun else best
            break
        best, w = res, res.x
    x = (best.x[:d] - best.x[d:] if l1 > 0 else best.x).reshape(shape)
    return problem.primal_value(x), x
