"""Trace-point evaluation in one pass over the data, on every core.

:meth:`Problem.evaluate <faceoff.solvers.problem.Problem.evaluate>` takes two products
with A per point (Ax, then Aᵀy). :func:`evaluate` gives the same P(x), D(y) and gap with
fewer passes, from what the method maintains:

- a primal iterate x: Ax, y = φ'(Ax) and Aᵀy in one sweep over the rows of A (row i's
  margin aᵢᵀx gives yᵢ, which is scattered back at once), or no pass at all when the
  method hands over Ax and Aᵀφ'(Ax) it computed at this very x (L-BFGS);
- a dual iterate y with the primal point x the method keeps beside it (x = ∇g*(−Aᵀy/n),
  maintained): Ax and Aᵀy in one sweep. P(x) and D(y) are each computed exactly from
  fresh products, so P − D stays a certificate even when the maintained x has drifted
  from ∇g*(−Aᵀy/n) by rounding;
- a dual iterate alone: Aᵀy, then x and Ax (two passes, as before).

Sparse data too small to share among threads (under ``_MIN_NNZ_PER_THREAD`` non-zeros a
core, a9a for one) takes scipy's two loops instead of one sweep: they are faster there.

The sweep is cut into one block of rows per core, run on threads (the kernel releases the
GIL); each block scatters into its own Aᵀy buffer, summed at the end. The threads are made
per process on first use (a forked worker process makes its own).
"""

from __future__ import annotations

import os
import weakref
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
from numba import njit

from faceoff.solvers.losses import loss_conjs, loss_deriv, loss_derivs, loss_values
from faceoff.solvers.problem import Data, Objective, Problem

AX = 0  # Ax only
AX_ATY = 1  # Ax and Aᵀy for a given y
AX_Y_ATY = 2  # Ax, y = φ'(Ax), Aᵀy
ATY = 3  # Aᵀy only

_MIN_NNZ_PER_THREAD = 500_000  # below this one thread does the whole sweep (a9a: one)


@njit(cache=True, nogil=True, inline="always")
def _margin(loss, b, i, z, mode, Ax, y):
    """Keep row i's margin z = aᵢᵀx, and y[i] = φ'(z) when ``mode`` derives y."""
    Ax[i] = z
    if mode == AX_Y_ATY:
        y[i] = loss_deriv(loss, z, b[i])


@njit(cache=True, nogil=True)
def _sweep(csr, x, b, loss, y, lo, hi, mode, Ax, w):
    """Rows lo..hi of the products ``mode`` asks for: Ax[i] = aᵢᵀx; y[i] = φ'(Ax[i]) for
    AX_Y_ATY; w += y[i]·aᵢ (w zeroed by the caller)."""
    indptr, indices, values = csr
    for i in range(lo, hi):
        start, end = indptr[i], indptr[i + 1]
        if mode != ATY:
            z = 0.0
            for k in range(start, end):
                z += values[k] * x[indices[k]]
            _margin(loss, b, i, z, mode, Ax, y)
        if mode != AX and y[i] != 0.0:
            yi = y[i]
            for k in range(start, end):
                w[indices[k]] += yi * values[k]


@njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def _sweep_dense(rows, x, b, loss, y, lo, hi, mode, Ax, w):
    """:func:`_sweep` on dense rows (A stored with its full pattern, seen as an n × d
    array): no index reads, and the row dot product is vectorized (its sum reassociated)."""
    d = x.shape[0]
    for i in range(lo, hi):
        row = rows[i]
        if mode != ATY:
            z = 0.0
            for j in range(d):
                z += row[j] * x[j]
            _margin(loss, b, i, z, mode, Ax, y)
        if mode != AX and y[i] != 0.0:
            yi = y[i]
            for j in range(d):
                w[j] += yi * row[j]


_POOL: tuple[int, ThreadPoolExecutor] | None = None
_FULL: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # Data → full pattern?


def full_pattern(data) -> bool:
    """Whether every entry of A is stored, row by row in column order (dense input, or
    a dense matrix stored as CSR): its values are then the dense n × d array. Checked once
    per :class:`~faceoff.solvers.problem.Data`."""
    if data not in _FULL:
        n, d = data.n_samples, data.n_features
        indptr, indices, _ = data.csr
        _FULL[data] = bool(
            data.nnz == n * d
            and np.array_equal(indptr, np.arange(0, n * d + 1, d))
            and (n * d == 0 or (indices.reshape(n, d) == np.arange(d, dtype=indices.dtype)).all())
        )
    return _FULL[data]


def threads() -> int:
    """Threads an evaluation runs on: the cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _pool() -> ThreadPoolExecutor:
    global _POOL
    if _POOL is None or _POOL[0] != os.getpid():  # threads do not survive a fork
        _POOL = (os.getpid(), ThreadPoolExecutor(threads(), thread_name_prefix="evaluate"))
    return _POOL[1]


def products(problem: Problem, mode: int, x=None, y=None) -> tuple[np.ndarray, np.ndarray]:
    """(Ax, Aᵀy) as ``mode`` asks (the other one empty); for AX_Y_ATY, ``y`` (length n) is
    filled with φ'(Ax)."""
    data = problem.data
    n, d = data.n_samples, data.n_features
    values = data.csr.data
    x = np.zeros(d) if x is None else np.ascontiguousarray(x, dtype=np.float64)
    y = np.zeros(n) if y is None else y
    Ax = np.empty(n if mode != ATY else 0)
    parts = max(1, min(threads(), n, data.nnz // _MIN_NNZ_PER_THREAD))
    if parts == 1 and not full_pattern(data):  # small and sparse: scipy's two loops are faster
        return _scipy_products(problem, mode, x, y)
    bounds = np.linspace(0, n, parts + 1).astype(np.int64)
    buffers = [np.zeros(d if mode != AX else 0) for _ in range(parts)]
    head: tuple[Any, ...]
    if full_pattern(data):  # the values are the dense array
        kernel, head = _sweep_dense, (values.reshape(n, d),)
    else:
        kernel, head = _sweep, (data.csr,)
    args = (*head, x, problem.b, problem.loss.params, y)

    def run(k: int) -> None:
        kernel(*args, bounds[k], bounds[k + 1], mode, Ax, buffers[k])

    if parts == 1:
        run(0)
    else:
        list(_pool().map(run, range(parts)))
    ATy = buffers[0]
    for extra in buffers[1:]:
        ATy += extra
    return Ax, ATy


def _scipy_products(problem: Problem, mode: int, x, y) -> tuple[np.ndarray, np.ndarray]:
    """:func:`products` by scipy's CSR loops, one product after the other."""
    data = problem.data
    Ax = data.matvec(x) if mode != ATY else np.empty(0)
    if mode == AX_Y_ATY:
        loss_derivs(problem.loss.params, Ax, problem.b, y)
    ATy = data.rmatvec(y) if mode != AX else np.empty(0)
    return Ax, ATy


def passes(x=None, y=None, Ax=None, ATy=None) -> int:
    """Passes over A that :func:`evaluate` takes with what is given."""
    if x is None:
        return 2
    if y is None and Ax is not None:
        return 0 if ATy is not None else 1
    return 1


def evaluate(
    problem: Problem,
    x: np.ndarray | None = None,
    y: np.ndarray | None = None,
    Ax: np.ndarray | None = None,
    ATy: np.ndarray | None = None,
) -> Objective:
    """P(x), D(y), the gap and nnz(x), as :meth:`Problem.evaluate`, in as few passes as
    what is given allows.

    ``x`` and/or ``y`` are the iterates (copied here); ``Ax`` may come with ``x`` (A·x at
    this x), and ``ATy`` with it (Aᵀφ'(Ax) for the dual point φ'(Ax) a primal iterate
    certifies with). With only ``y`` given, x = ∇g*(−Aᵀy/n)."""
    if x is None and y is None:
        raise ValueError("evaluate needs x or y")
    n = problem.n_samples
    x = None if x is None else np.array(x, dtype=np.float64, copy=True)
    y = None if y is None else np.array(y, dtype=np.float64, copy=True)
    if problem.multiclass is not None:
        return _evaluate_classes(problem, x, y, Ax, ATy)
    if problem.intercept:
        return _evaluate_intercept(problem, x, Ax)
    if x is None:  # a dual iterate alone: Aᵀy, then x(y) and Ax
        assert y is not None  # checked above
        _, ATy = products(problem, ATY, y=y)
        x = problem.penalty.conjugate_grad(-ATy / n)
        Ax, _ = products(problem, AX, x=x)
    elif y is not None:  # a dual iterate and the primal point kept beside it
        Ax, ATy = products(problem, AX_ATY, x=x, y=y)
    elif Ax is not None:  # a primal iterate with its product
        y = loss_derivs(problem.loss.params, Ax, problem.b, np.empty(n))
        if ATy is None:
            _, ATy = products(problem, ATY, y=y)
    else:  # a primal iterate alone: one sweep
        y = np.empty(n)
        Ax, ATy = products(problem, AX_Y_ATY, x=x, y=y)
    y, ATy = problem.feasible(y, ATy)  # l2 = 0: scaled into g*'s domain
    loss = problem.loss.params
    primal = loss_values(loss, Ax, problem.b) / n + problem.penalty.value(x)
    dual = -loss_conjs(loss, y, problem.b) / n - problem.penalty.conjugate(-ATy / n)
    return Objective(primal, dual, primal - dual, int(np.count_nonzero(x)), x, y)


def _evaluate_intercept(problem: Problem, x, Ax) -> Objective:
    """:func:`evaluate` with an intercept, x = (w, c): margins Aw + c, then y = φ'(margins)
    balanced onto Σᵢ yᵢ = 0 and scaled (``Problem.feasible``), and Aᵀy of that y: scipy's
    products (a primal iterate only: the dual methods take no intercept)."""
    if x is None:
        raise ValueError("a problem with an intercept is certified from a primal iterate x")
    n = problem.n_samples
    if Ax is None:
        Ax = problem.margins(x)
    y, ATy = problem.feasible(problem.loss_derivs(Ax), None)
    weights = problem.weights(x)
    primal = problem.loss_sum(Ax) / n + problem.penalty.value(weights)
    dual = -problem.conj_sum(y) / n - problem.penalty.conjugate(-ATy / n)
    return Objective(primal, dual, primal - dual, int(np.count_nonzero(weights)), x, y)


def _evaluate_classes(problem: Problem, x, y, Ax, ATy) -> Objective:
    """:func:`evaluate` for a K-class problem: scipy's products with the K columns at once
    (``A @ X``, ``Aᵀ @ Y``: one pass each over A, K values a non-zero)."""
    data, n = problem.data, problem.n_samples
    if x is None:
        ATy = data.rmatvec(y)
        x = problem.penalty.conjugate_grad(-ATy / n)
        Ax = data.matvec(x)
    else:
        if Ax is None:
            Ax = data.matvec(x)
        if y is None:
            y = problem.loss_derivs(Ax)
            if ATy is not None:
                ATy = np.asarray(ATy)
        else:
            ATy = None
        if ATy is None:
            ATy = data.rmatvec(y)
    y, ATy = problem.feasible(y, ATy)  # l2 = 0: scaled into g*'s domain
    primal = problem.loss_sum(Ax) / n + problem.penalty.value(x)
    dual = -problem.conj_sum(y) / n - problem.penalty.conjugate(-ATy / n)
    return Objective(primal, dual, primal - dual, int(np.count_nonzero(x)), x, y)


def compile_kernels(problem: Problem) -> None:
    """Compile the sweeps ``problem`` and its dense twin run (warm-up: no job pays for it)."""
    dense = Problem(
        Data(problem.data.csr_matrix.toarray()),
        problem.b,
        problem.loss,
        problem.penalty,
        problem.multiclass,
        problem.classes,
        problem.intercept,
    )
    for each in (problem, dense):
        x = np.zeros(each.coef_shape)
        y = each.dual_from_primal(x)  # a dual point in the domain of every loss's φ*
        evaluate(each, x=x)
        if each.intercept:  # certified from x alone
            continue
        if each.penalty.strongly_convex:  # a dual point alone gives x only when l2 > 0
            evaluate(each, y=y)
        evaluate(each, x=x, y=y)
