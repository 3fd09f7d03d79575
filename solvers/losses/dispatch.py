"""The functions kernels call with a loss's :class:`~faceoff.solvers.losses.LossParams`
(code, γ), built from the registered loss modules.

Each scalar function (``loss_value(loss, z, b)``, …) runs its loss's module function through
an if-chain on the code generated from the registry, one link per loss, the last ending in
a ``raise`` for a code no loss has: exhaustive, never a fall-through to some loss's maths.
The links are closures compiled where they are called (:func:`register_jitable`), so a
kernel's compiled code holds the chain with the modules' functions inlined, as static as a
hand-written one, and Numba's on-disk cache keeps it.

Importing this module imports every loss module and checks that it defines each function
of :data:`REQUIRED`: a missing one fails here, naming the loss and the function.

The exact dual coordinate step :func:`dual_step` owns the per-coordinate warm starts of the
losses that declare them (``LossInfo.warm_start``: the logistic's): kernels keep an array
from :func:`warm_starts` and pass it along, whatever the loss.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable

import numpy as np
from numba import njit
from numba.core.dispatcher import Dispatcher
from numba.extending import register_jitable

from faceoff.solvers.losses import (
    EXACT_TOL,
    KERNEL_NAMES,
    LOSSES,
    LossModuleError,
)
from faceoff.solvers.prefetch import prefetch

__all__ = list(KERNEL_NAMES)

# The jitted functions every loss module defines, each with the arguments of the function
# here that calls it, the smoothing γ in place of the loss:
REQUIRED = (
    "value",  # (γ, z, b) -> φ(z, b)
    "deriv",  # (γ, z, b) -> φ'(z, b), the derivative in z
    "derivs12",  # (γ, z, b) -> (φ'(z, b), φ''(z, b))
    "increment",  # (γ, z, b, t) -> φ(z + t, b) − φ(z, b), without cancellation
    "curvature_growth",  # (γ, t) -> a bound on φ''(z + s, b)/φ''(z, b) over |s| ≤ t
    "conj",  # (γ, y, b) -> φ*(y, b), +inf outside its domain
    "dual_step",  # (γ, y, z, b, inv_s, warm, tol) -> (β, new warm, iterations)
    "dual_box_violation",  # (γ, y, z, b) -> (g, side) of a box's bound, (0, 0) without one
)
# Plain Python functions a loss module may define for a faster sum than the compiled pass of
# its scalar function (the logistic's numpy vector exp and log): (γ, z, b, work),
# (γ, z, b, out, work) and (γ, y, b, work), as loss_values, loss_values_derivs, loss_conjs.
VECTOR = ("values", "values_derivs", "conjs")
# What a loss with a K-class form (``LossInfo.multinomial``) defines besides: the sums over
# a row's K scores, plain Python on (n, K) arrays — (γ, Z, labels), (γ, Z, labels),
# (γ, Y, labels) — and the jitted exact dual step of a row, (γ, z, p, s, u, tol).
MULTINOMIAL = (
    "multinomial_values",
    "multinomial_derivs",
    "multinomial_values_derivs",
    "multinomial_conjs",
    "simplex_step",
    "softmax_row",
    "multinomial_row_increment",
)
# What a loss module may define for a kernel's loop over a row's K classes: φ' in code that
# loop vectorizes, (γ, z, b) -> φ'(z, b) (the logistic's exp as arithmetic, not a libm call);
# the loss's ``deriv`` serves where it has none.
LANES = ("deriv_lanes",)


def _load(name: str):
    """The loss module ``name``, checked: its INFO as read from its source, every function
    of REQUIRED jitted."""
    module = importlib.import_module(f"{__package__}.{name}")
    if getattr(module, "INFO", None) != LOSSES[name]:
        raise LossModuleError(
            f"loss {name!r}: the imported INFO {getattr(module, 'INFO', None)!r} is not the "
            f"one read from its source, {LOSSES[name]!r} (INFO must be a literal LossInfo)"
        )
    for function in REQUIRED:
        if not isinstance(getattr(module, function, None), Dispatcher):
            raise LossModuleError(
                f"loss {name!r} ({module.__file__}) has no jitted function {function!r}: "
                f"every loss module defines {', '.join(REQUIRED)} with @njit"
            )
    if module.INFO.multinomial:
        missing = [function for function in MULTINOMIAL if not hasattr(module, function)]
        jitted = ("simplex_step", "softmax_row", "multinomial_row_increment")
        if missing or not all(isinstance(getattr(module, f), Dispatcher) for f in jitted):
            raise LossModuleError(
                f"loss {name!r} ({module.__file__}) declares multinomial=True but lacks "
                f"{', '.join(missing) or 'a jitted function'}: it must define "
                f"{', '.join(MULTINOMIAL)} ({', '.join(jitted)} with @njit)"
            )
    return module


MODULES = tuple(_load(name) for name in LOSSES)
_UNKNOWN = "unknown loss code: the registered losses' codes are " + ", ".join(
    f"{info.code} ({info.name})" for info in sorted(LOSSES.values(), key=lambda i: i.code)
)


def _chain(functions: list[tuple[int, Callable]]) -> Callable:
    """``pick(code, gamma, args)``: the function of the loss whose code is ``code`` applied
    to (gamma, *args), as an if-chain over ``functions`` ((code, function) pairs) that
    raises ValueError for any other code. Compiled without reference counting (the links
    allocate nothing; ``args`` may hold an array)."""
    (code, function), rest = functions[0], functions[1:]
    if not rest:

        def last(code_, gamma, args):
            if code_ == code:
                return function(gamma, *args)
            raise ValueError(_UNKNOWN)

        return register_jitable(_nrt=False)(last)
    following = _chain(rest)

    def pick(code_, gamma, args):
        if code_ == code:
            return function(gamma, *args)
        return following(code_, gamma, args)

    return register_jitable(_nrt=False)(pick)


def _chain_of(name: str) -> Callable:
    """The chain of every loss module's function ``name``."""
    return _chain([(m.INFO.code, getattr(m, name)) for m in MODULES])


_value = _chain_of("value")
_deriv_lanes = _chain([(m.INFO.code, getattr(m, "deriv_lanes", m.deriv)) for m in MODULES])


def _class_gradient(module) -> Callable:
    """``row(gamma, Z, i, label, v, grad)``: grad[c] += v·φ'(Z[i, c], bᵢ꜀) for the K classes
    of sample i, bᵢ꜀ = +1 for its class, −1 for the others, with the module's vectorizable
    φ' (``deriv_lanes``, else ``deriv``): one loss's loop, which vectorizes (a dispatch inside
    the loop over the classes would not)."""
    deriv = getattr(module, "deriv_lanes", module.deriv)

    def row(gamma, Z, i, label, v, grad):
        for c in range(Z.shape[1]):
            grad[c] += deriv(gamma, Z[i, c], 1.0 if c == label else -1.0) * v

    return register_jitable(_nrt=False, error_model="numpy")(row)


_ovr_row_gradient = _chain([(m.INFO.code, _class_gradient(m)) for m in MODULES])
_deriv = _chain_of("deriv")
_derivs12 = _chain_of("derivs12")
_increment = _chain_of("increment")
_curvature_growth = _chain_of("curvature_growth")
_conj = _chain_of("conj")
_dual_step = _chain_of("dual_step")
_dual_box_violation = _chain_of("dual_box_violation")


@njit(cache=True)
def loss_value(loss, z, b):
    """φ(z, b)."""
    code, gamma = loss
    return _value(code, gamma, (z, b))


@njit(cache=True)
def loss_deriv(loss, z, b):
    """φ'(z, b), the derivative in z."""
    code, gamma = loss
    return _deriv(code, gamma, (z, b))


@njit(cache=True)
def loss_deriv_lanes(loss, z, b):
    """φ'(z, b) as :func:`loss_deriv`, in the form a loop over a row's K classes vectorizes
    (a loss module's ``deriv_lanes`` where it has one: the logistic's exp as arithmetic)."""
    code, gamma = loss
    return _deriv_lanes(code, gamma, (z, b))


@njit(cache=True, _nrt=False, error_model="numpy")
def ovr_row_gradient(loss, Z, i, label, v, grad):
    """grad[c] += v·φ'(Z[i, c], bᵢ꜀) over the K classes of row i of a one-vs-rest problem's
    margins Z (bᵢ꜀ = +1 for c = ``label``, −1 otherwise): a column step's K partial
    derivatives, one non-zero Aᵢⱼ = v at a time, as a loop that vectorizes."""
    code, gamma = loss
    _ovr_row_gradient(code, gamma, (Z, i, label, v, grad))


@njit(cache=True)
def loss_increment(loss, z, b, t):
    """φ(z + t, b) − φ(z, b), without the cancellation of subtracting two losses where the
    loss is smooth (squared t·(z − b + t/2), logistic log1p(σ(−bz)·expm1(−bt)))."""
    code, gamma = loss
    return _increment(code, gamma, (z, b, t))


@njit(cache=True)
def curvature_growth(loss, t):
    """A bound on φ''(z + s, b) / φ''(z, b) over |s| ≤ t, for every z: logistic e^t,
    squared 1 (φ'' is constant), smoothed hinge +inf (φ'' jumps from 0 to 1/γ at its kinks:
    no bound from the curvature at z, callers fall back on β)."""
    code, gamma = loss
    return _curvature_growth(code, gamma, (t,))


@njit(cache=True)
def loss_derivs12(loss, z, b):
    """(φ'(z, b), φ''(z, b)); where φ'' jumps (the smoothed hinge's kinks) it is taken as 0
    (a generalized second derivative: callers safeguard their steps)."""
    code, gamma = loss
    return _derivs12(code, gamma, (z, b))


@njit(cache=True)
def loss_conj(loss, y, b):
    """φ*(y, b) = sup_z {y·z − φ(z, b)}; +inf outside the domain."""
    code, gamma = loss
    return _conj(code, gamma, (y, b))


@njit(cache=True)
def loss_dual_step(loss, y, z, b, inv_s, warm, tol):
    """argmax_β {β·z − φ*(β) − inv_s·(β − y)²/2}: the 1-D dual coordinate step.

    With ``inv_s = ‖aᵢ‖²/(μn)`` this is SDCA's coordinate maximization (Faceoff Algorithm 2,
    Quartz). Closed form for squared and smoothed hinge; for logistic a safeguarded Newton
    solve warm-started from ``warm`` (NaN when unknown) that stops once its optimality
    violation is within ``tol`` (:data:`EXACT_TOL` for an exact step), leaving a coordinate
    already within ``tol`` as it is (liblinear's inexact inner solve). Returns (β, new warm,
    Newton iterations); kernels call :func:`dual_step`, which keeps the warm starts itself.
    """
    code, gamma = loss
    return _dual_step(code, gamma, (y, z, b, inv_s, warm, tol))


@njit(cache=True, _nrt=False)
def dual_box_violation(loss, y, z, b):
    """(g, side) for the dual coordinate y with z = aᵢᵀx, for a loss whose dual variable
    lives in a box t = −b·y ∈ [0, 1] (``LossInfo.dual_box``: the smoothed hinge): g is the
    derivative in t of the coordinate's dual objective (before its coupling term) and side
    −1 when t sits at 0, +1 at 1, 0 inside; other losses return (0, 0). Shrinking
    (liblinear's) leaves out a coordinate at a bound whose g pushes it further out."""
    code, gamma = loss
    return _dual_box_violation(code, gamma, (y, z, b))


def warm_starts(n: int) -> np.ndarray:
    """The per-coordinate warm starts :func:`dual_step` keeps, none yet (NaN)."""
    return np.full(n, np.nan)


def _stepper(module) -> Callable:
    """``step(gamma, warm, i, y, z, b, inv_s, tol) -> (β, iterations)``: the module's dual
    step, started from ``warm[i]`` and storing the new warm start there if the loss keeps
    one; NaN ("unknown") to a step that keeps none."""
    step = module.dual_step
    if module.INFO.warm_start:

        def with_warm(gamma, warm, i, y, z, b, inv_s, tol):
            beta, warm[i], iterations = step(gamma, y, z, b, inv_s, warm[i], tol)
            return beta, iterations

        return register_jitable(_nrt=False)(with_warm)

    def without_warm(gamma, warm, i, y, z, b, inv_s, tol):
        beta, _, iterations = step(gamma, y, z, b, inv_s, math.nan, tol)
        return beta, iterations

    return register_jitable(_nrt=False)(without_warm)


def _prefetcher(module) -> Callable:
    """``fetch(gamma, warm, i)``: prefetch ``warm[i]`` if the loss keeps warm starts."""
    if module.INFO.warm_start:

        def fetch(gamma, warm, i):
            prefetch(warm, i)

    else:

        def fetch(gamma, warm, i):
            pass

    return register_jitable(_nrt=False)(fetch)


_dual_step_warm = _chain([(m.INFO.code, _stepper(m)) for m in MODULES])
_prefetch_warm = _chain([(m.INFO.code, _prefetcher(m)) for m in MODULES])


@njit(cache=True, _nrt=False)
def dual_step(loss, warm, i, y, z, b, inv_s, tol=EXACT_TOL):
    """:func:`loss_dual_step` for coordinate i, warm-started from ``warm[i]`` and storing
    the new warm start there when the loss keeps one (``LossInfo.warm_start``); returns
    (β, Newton iterations).

    Compiled without reference counting (``_nrt=False``: it allocates nothing), so the call,
    which LLVM inlines, costs nothing; with it (or inlined by Numba), the reference counting
    of ``warm`` cost ~15 % of a dual_cd step on a9a."""
    code, gamma = loss
    return _dual_step_warm(code, gamma, (warm, i, y, z, b, inv_s, tol))


@njit(cache=True, _nrt=False)
def prefetch_warm(loss, warm, i):
    """Prefetch ``warm[i]`` for a coming :func:`dual_step`, when the loss reads it."""
    code, gamma = loss
    _prefetch_warm(code, gamma, (warm, i))


def _vector(name: str) -> dict[int, Callable]:
    """code -> the module's vector function ``name``, for the losses that define it."""
    return {m.INFO.code: getattr(m, name) for m in MODULES if hasattr(m, name)}


_VALUES, _VALUES_DERIVS, _CONJS = (_vector(name) for name in VECTOR)


def loss_values(loss, z, b, work=None):
    """Σᵢ φ(zᵢ, bᵢ): the loss's own vector sum if it has one (the logistic's numpy exp and
    log1p), else one compiled pass of :func:`loss_value`. ``work``: scratch of shape
    (≥ 2, n), else allocated."""
    values = _VALUES.get(loss.code)
    if values is None:
        return _values(loss, z, b)
    return values(loss.gamma, z, b, work)


@njit(cache=True)
def _values(loss, z, b):
    """Σᵢ φ(zᵢ, bᵢ) in one pass of the scalar :func:`loss_value`."""
    total = 0.0
    for i in range(z.shape[0]):
        total += loss_value(loss, z[i], b[i])
    return total


@njit(cache=True)
def loss_derivs(loss, z, b, out):
    """out ← φ'(z, b) elementwise."""
    for i in range(z.shape[0]):
        out[i] = loss_deriv(loss, z[i], b[i])
    return out


def loss_values_derivs(loss, z, b, out, work=None):
    """Σᵢ φ(zᵢ, bᵢ), with out ← φ'(z, b) elementwise: the loss's own vector form if it has
    one (the logistic's: one numpy exp serves both), else one compiled pass. Agrees with
    :func:`loss_values` and :func:`loss_derivs` to an ulp or so. ``work``: scratch of shape
    (3, n), else allocated."""
    values_derivs = _VALUES_DERIVS.get(loss.code)
    if values_derivs is None:
        return _values_derivs(loss, z, b, out)
    return values_derivs(loss.gamma, z, b, out, work)


@njit(cache=True)
def _values_derivs(loss, z, b, out):
    """Σᵢ φ(zᵢ, bᵢ), with out ← φ'(z, b), in one pass."""
    total = 0.0
    for i in range(z.shape[0]):
        total += loss_value(loss, z[i], b[i])
        out[i] = loss_deriv(loss, z[i], b[i])
    return total


def loss_conjs(loss, y, b, work=None):
    """Σᵢ φ*(yᵢ, bᵢ): the loss's own vector sum if it has one (the logistic's numpy log and
    log1p), else one compiled pass of :func:`loss_conj`. ``work``: scratch of shape
    (≥ 3, n), else allocated."""
    conjs = _CONJS.get(loss.code)
    if conjs is None:
        return _conjs(loss, y, b)
    return conjs(loss.gamma, y, b, work)


@njit(cache=True)
def _conjs(loss, y, b):
    """Σᵢ φ*(yᵢ, bᵢ) in one pass of the scalar :func:`loss_conj`."""
    total = 0.0
    for i in range(y.shape[0]):
        total += loss_conj(loss, y[i], b[i])
    return total


# ------------------------------------------------------- the K-class (multinomial) form

_MULTINOMIAL = {m.INFO.code: m for m in MODULES if m.INFO.multinomial}


def _multinomial(loss):
    """The module of ``loss``'s K-class form; ValueError if it has none."""
    module = _MULTINOMIAL.get(loss.code)
    if module is None:
        if all(m.INFO.code != loss.code for m in MODULES):
            raise ValueError(_UNKNOWN)
        takes = ", ".join(m.INFO.name for m in _MULTINOMIAL.values())
        raise ValueError(
            f"loss code {loss.code} has no multinomial form (the losses with one: {takes})"
        )
    return module


def multinomial_values(loss, Z, labels):
    """Σᵢ φ(Zᵢ, yᵢ) of the K-class form over scores Z, shape (n, K), classes ``labels``."""
    return _multinomial(loss).multinomial_values(loss.gamma, Z, labels)


def multinomial_derivs(loss, Z, labels):
    """∇φ of every row (shape (n, K)): the dual point a primal iterate certifies with."""
    return _multinomial(loss).multinomial_derivs(loss.gamma, Z, labels)


def multinomial_values_derivs(loss, Z, labels):
    """(Σᵢ φ(Zᵢ, yᵢ), ∇φ of every row) in one pass."""
    return _multinomial(loss).multinomial_values_derivs(loss.gamma, Z, labels)


def multinomial_conjs(loss, Y, labels):
    """Σᵢ φ*(yᵢ, yᵢ) for dual rows Y, shape (n, K); +inf outside the domain."""
    return _multinomial(loss).multinomial_conjs(loss.gamma, Y, labels)


if _MULTINOMIAL:
    _simplex_step = _chain([(m.INFO.code, m.simplex_step) for m in _MULTINOMIAL.values()])


@njit(cache=True, _nrt=False)
def simplex_step(loss, z, p, s, u, tol):
    """The exact dual step of a row of the K-class form: p (the row's dual point plus its
    class's unit vector, on the simplex) becomes the maximizer of
    −Σ p log p + ⟨p, z⟩ − s/2‖p − p₀‖² (see the logistic module); ``u`` is scratch of
    length K. Returns the iterations it took."""
    code, gamma = loss
    return _simplex_step(code, gamma, (z, p, s, u, tol))


if _MULTINOMIAL:
    _softmax_row = _chain([(m.INFO.code, m.softmax_row) for m in _MULTINOMIAL.values()])
    _row_increment = _chain(
        [(m.INFO.code, m.multinomial_row_increment) for m in _MULTINOMIAL.values()]
    )


@njit(cache=True, _nrt=False)
def softmax_row(loss, Z, i, p):
    """p ← ∇φ(Z[i]) + e_{yᵢ} = softmax(Z[i]) for the K-class form (length K, in place)."""
    code, gamma = loss
    _softmax_row(code, gamma, (Z, i, p))


@njit(cache=True, _nrt=False)
def multinomial_row_increment(loss, Z, i, v, d, label, p):
    """φ(Z[i] + v·d, label) − φ(Z[i], label) of the K-class form (``p``: scratch, K)."""
    code, gamma = loss
    return _row_increment(code, gamma, (Z, i, v, d, label, p))
