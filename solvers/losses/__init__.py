"""Losses φ(z, b) of P(x) = 1/n Σ φ(aᵢᵀx, bᵢ) + g(x), one module each, and their registry.

Every module of this package but :mod:`~faceoff.solvers.losses.dispatch` (and private
``_name`` modules) is one loss, named as its file (``squared.py`` is the loss ``squared``),
holding all of it: its metadata ``INFO = LossInfo(...)`` and its jitted functions (φ, φ',
φ'', φ* and the exact dual step, listed in ``dispatch.REQUIRED``), each taking the
dispatcher's arguments with the smoothing γ in place of the loss. Adding a loss is adding a
module; nothing else changes (CONTRIBUTING.md, "Recipe: add a loss").

This module is light (no Numba; the API imports it through ``solvers.vocabulary``): it lists
the loss modules with :mod:`pkgutil` and reads each one's ``INFO`` from its source with
:mod:`ast`, without importing it (so ``INFO`` is a ``LossInfo`` call with literal keyword
arguments). The functions the kernels call (``loss_value(loss, z, b)``, ``dual_step``, …)
are those of :mod:`~faceoff.solvers.losses.dispatch`, which imports every loss module and
builds them; they are importable from here, and importing one imports Numba then.

Dual variables follow the saddle-point form shared by the three papers,
L(x, y) = g(x) + 1/n yᵀAx − 1/n Σ φ*(yᵢ): at the optimum yᵢ = φ'(aᵢᵀx).
For the classification losses (labels b = ±1) the dual domain is t = −b·y ∈ [0, 1].
"""

from __future__ import annotations

import ast
import importlib
import math
import pkgutil
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import NamedTuple

# φ*'s domain admits this much rounding on either side (the point is then clipped to it)
CONJ_DOMAIN_TOL = 1e-12
# The dual step's default stopping tolerance on its optimality violation (an iterative step
# is then exact to ~1e-12); kernels that solve coordinates inexactly (dual_cd) pass more.
EXACT_TOL = 1e-12

# the modules of this package that are not losses (beside the private ``_name`` ones)
NOT_LOSSES = frozenset({"dispatch"})
# what :mod:`~faceoff.solvers.losses.dispatch` provides, importable from here
KERNEL_NAMES = (
    "loss_value",
    "loss_deriv",
    "loss_derivs12",
    "loss_increment",
    "curvature_growth",
    "loss_conj",
    "loss_dual_step",
    "dual_box_violation",
    "dual_step",
    "prefetch_warm",
    "warm_starts",
    "loss_values",
    "loss_derivs",
    "loss_values_derivs",
    "loss_conjs",
    "multinomial_values",
    "multinomial_derivs",
    "multinomial_values_derivs",
    "multinomial_conjs",
    "simplex_step",
    "softmax_row",
    "multinomial_row_increment",
    "loss_deriv_lanes",
    "ovr_row_gradient",
)


class LossModuleError(ImportError):
    """A loss module that cannot be registered: what is wrong, in which module."""


@dataclass(frozen=True)
class LossInfo:
    """What the service needs to know about a loss φ(z, b), without its kernels.

    Parameters
    ----------
    name : str
        The loss's name in requests, on the command line and in the database: its module's.
    code : int
        The loss's kernel code (``LossParams.code``), unique among the losses.
    title : str
        A short description, φ(z, b) written out.
    beta : float
        φ'' ≤ beta (for γ = 1 when ``smoothed``): the smoothness, 1/β the strong convexity
        of φ* (SPDC assumption A, Faceoff §2).
    smoothed : bool
        The loss takes the smoothing parameter γ and is beta/γ-smooth (the smoothed hinge,
        SPDC §7.2); other losses ignore γ.
    needs_binary_labels : bool
        Labels must be ±1 (classification); see ``data.labels.prepare_labels``.
    penalties : tuple of str
        The penalties the loss may be paired with (``solvers.vocabulary.PENALTY_NAMES``).
    warm_start : bool
        The exact dual step is iterative and keeps a per-coordinate warm start (the
        logistic's logit of t): ``dispatch.dual_step`` stores it for the kernels. The step
        of a loss without one receives NaN ("unknown") and must not depend on it.
    dual_box : bool
        The dual variable lives in a box t = −b·y ∈ [0, 1] where it can sit at a bound
        (the smoothed hinge): ``dual_box_violation`` reports it and dual_cd's shrinking
        applies.
    multinomial : bool
        The loss has a K-class form over a row's K scores (the logistic's softmax
        cross-entropy): the module then defines ``dispatch.MULTINOMIAL`` too. Every loss
        takes the one-vs-rest form (K binary problems on ±1 labels).
    """

    name: str
    code: int
    title: str
    beta: float
    smoothed: bool
    needs_binary_labels: bool
    penalties: tuple[str, ...]
    warm_start: bool
    dual_box: bool
    multinomial: bool = False

    @property
    def multiclass(self) -> tuple[str, ...]:
        """The K-class forms the loss takes (``solvers.vocabulary.MULTICLASS``)."""
        return ("ovr", "multinomial") if self.multinomial else ("ovr",)

    def __post_init__(self) -> None:
        problems = []
        if not self.name.isidentifier():
            problems.append(f"name {self.name!r} is not a module name")
        if not (isinstance(self.code, int) and 0 <= self.code < 2**31):
            problems.append(f"code {self.code!r} is not a non-negative int32")
        if not (isinstance(self.beta, float | int) and 0 < self.beta < math.inf):
            problems.append(f"beta {self.beta!r} is not a positive number")
        if not (isinstance(self.penalties, tuple) and self.penalties):
            problems.append(f"penalties {self.penalties!r} is not a non-empty tuple")
        if problems:
            raise ValueError(f"LossInfo of {self.name!r}: {'; '.join(problems)}")

    def smoothness(self, gamma: float = 1.0) -> float:
        """β such that φ is β-smooth: ``beta / gamma`` for a smoothed loss, ``beta`` else."""
        return self.beta / gamma if self.smoothed else self.beta


def read_info(path: Path) -> LossInfo:
    """The ``INFO = LossInfo(name=..., ...)`` assignment of the loss module at ``path``, read
    from its source (literal keyword arguments only), without importing the module."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in tree.body:
        if not (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == "INFO"
        ):
            continue
        call = node.value
        if not (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name)
            and call.func.id == "LossInfo"
            and not call.args
            and all(keyword.arg for keyword in call.keywords)
        ):
            break
        try:
            arguments = {str(kw.arg): ast.literal_eval(kw.value) for kw in call.keywords}
            return LossInfo(**arguments)
        except (TypeError, ValueError) as exc:
            raise LossModuleError(f"{path}, line {node.lineno}: {exc}") from None
    raise LossModuleError(
        f"{path}: a loss module assigns INFO = LossInfo(name=..., code=..., ...) at its top "
        "level, with literal keyword arguments only (it is read without importing the "
        f"module); modules of {__name__} that are not losses: "
        f"{', '.join(sorted(NOT_LOSSES))} and private _name modules"
    )


def read_losses(folder: Path = Path(__file__).parent) -> dict[str, LossInfo]:
    """The ``INFO`` of every loss module in ``folder``, by name (sorted); LossModuleError for
    a module whose INFO is missing or malformed, names a loss other than its module, or
    takes another loss's code."""
    infos: dict[str, LossInfo] = {}
    for module in sorted(pkgutil.iter_modules([str(folder)]), key=lambda m: m.name):
        if module.ispkg or module.name in NOT_LOSSES or module.name.startswith("_"):
            continue
        path = folder / f"{module.name}.py"
        info = read_info(path)
        if info.name != module.name:
            raise LossModuleError(f"{path}: INFO names the loss {info.name!r}, not its module")
        infos[info.name] = info
    codes: dict[int, str] = {}
    for info in infos.values():
        if info.code in codes:
            raise LossModuleError(
                f"losses {codes[info.code]!r} and {info.name!r} both have code {info.code}; "
                f"codes in use: {sorted(codes)}"
            )
        codes[info.code] = info.name
    return infos


LOSSES: dict[str, LossInfo] = read_losses()


def get_loss(name: str) -> LossInfo:
    """The metadata of loss ``name``; ValueError listing the accepted names otherwise."""
    if name not in LOSSES:
        raise ValueError(f"unknown loss {name!r}; accepted: {', '.join(LOSSES)}")
    return LOSSES[name]


class LossParams(NamedTuple):
    """What kernels read of a loss: its ``code`` and smoothing ``gamma`` (a Numba tuple)."""

    code: int
    gamma: float


@dataclass(frozen=True)
class Loss:
    """A loss function: ``name``, kernel ``code`` and smoothing ``gamma`` (smoothed hinge)."""

    name: str
    code: int
    gamma: float = 1.0

    @property
    def smoothness(self) -> float:
        """β such that φ is β-smooth (φ'' ≤ β): 1 squared, 1/4 logistic, 1/γ smoothed hinge."""
        return get_loss(self.name).smoothness(self.gamma)

    @property
    def needs_binary_labels(self) -> bool:
        """Labels are ±1 (logistic, smoothed hinge); else any real targets (squared)."""
        return get_loss(self.name).needs_binary_labels

    @property
    def dual_box(self) -> bool:
        """The dual variable lives in a box where it can sit at a bound (LossInfo)."""
        return get_loss(self.name).dual_box

    @cached_property
    def params(self) -> LossParams:
        """The kernels' view of this loss."""
        return LossParams(int(self.code), float(self.gamma))


def make_loss(name: str, gamma: float = 1.0) -> Loss:
    """Build a loss by name, one of :data:`LOSSES` (smoothed hinge: SPDC §7.2)."""
    info = get_loss(name)  # ValueError listing the accepted names
    if not (gamma > 0 and math.isfinite(gamma)):
        raise ValueError(f"smoothing gamma must be a positive number, got {gamma!r}")
    return Loss(name, info.code, float(gamma))


def __getattr__(name: str):
    """The kernels' functions (:data:`KERNEL_NAMES`), from ``dispatch`` on first use (then
    set here: later lookups are plain attribute reads)."""
    if name not in KERNEL_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    dispatch = importlib.import_module(f"{__name__}.dispatch")
    globals().update({kernel: getattr(dispatch, kernel) for kernel in KERNEL_NAMES})
    return globals()[name]
