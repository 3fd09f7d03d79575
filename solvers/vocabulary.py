"""The vocabulary of a problem: losses, penalties and normalizations, defined once.

Pure metadata, like the catalogue beside it: importing this module imports no Numba, so
the API, the CLI, the core and the dashboard derive their choices, enums, labels and the
loss smoothness β from here. The losses are the registry of ``solvers.losses`` (one module
a loss, its ``INFO`` read without importing it); ``data.transforms`` implements each
normalization under the names listed here.
"""

from __future__ import annotations

from faceoff.solvers.losses import LOSSES, get_loss

PENALTIES: dict[str, str] = {
    "l2": "g(x) = l2/2·‖x‖²",
    "elastic_net": "g(x) = l1·‖x‖₁ + l2/2·‖x‖² (l1 > 0)",
    "l1": "g(x) = l1·‖x‖₁ (l2 = 0: the Lasso, l1-logistic; not strongly convex)",
}
PENALTY_NAMES = tuple(PENALTIES)
# the penalties with l2 > 0: μ-strongly convex, which the dual and primal–dual methods need
# (their steps divide by l2, and x(y) = ∇g*(−Aᵀy/n) exists only then); a solver's spec
# takes these by default and lists "l1" only when it converges without strong convexity
STRONGLY_CONVEX = ("l2", "elastic_net")

MULTICLASS: dict[str, str] = {
    "ovr": "one-vs-rest: K binary problems, one column of X a class, summed",
    "multinomial": "softmax cross-entropy over the K columns (logistic loss)",
}
MULTICLASS_NAMES = tuple(MULTICLASS)
MULTICLASS_TITLES = {"ovr": "one-vs-rest", "multinomial": "multinomial"}

NORMALIZATIONS: dict[str, str] = {
    "none": "the data as it is",
    "rows": "every row aᵢ scaled to unit l2 norm (SPDC §7.2)",
    "mean": "A divided by the mean row norm R̄ (Faceoff §7, SPDC §7.3)",
}
NORMALIZATION_NAMES = tuple(NORMALIZATIONS)


def _check_penalties() -> None:
    """Every loss's penalties are among PENALTY_NAMES (ValueError naming the loss)."""
    for info in LOSSES.values():
        if not set(info.penalties) <= set(PENALTY_NAMES):
            raise ValueError(
                f"loss {info.name!r} takes the penalties {info.penalties!r}; "
                f"the penalties are {', '.join(PENALTY_NAMES)}"
            )


_check_penalties()
LOSS_NAMES = tuple(LOSSES)
BINARY_LOSS_NAMES = tuple(name for name, info in LOSSES.items() if info.needs_binary_labels)
SMOOTHED_LOSS_NAMES = tuple(name for name, info in LOSSES.items() if info.smoothed)


def penalty_name(l1: float, l2: float = 1.0) -> str:
    """The penalty the weights make: ``l1`` if l2 = 0, ``elastic_net`` if both are > 0,
    plain ``l2`` if l1 = 0."""
    if l2 == 0:
        return "l1"
    return "elastic_net" if l1 > 0 else "l2"


def smoothness(loss: str, gamma: float = 1.0) -> float:
    """β such that loss ``loss`` with smoothing ``gamma`` is β-smooth (φ'' ≤ β)."""
    return get_loss(loss).smoothness(gamma)


def form_error(loss: str, multiclass: str | None) -> str | None:
    """Why ``multiclass`` is not a K-class form of ``loss`` (a name that is no form, or a
    form the loss does not have), or None when it is one or is None (binary, regression):
    the one check of the form, for the problem builder, the solvers' specs and the API."""
    if multiclass is None:
        return None
    if multiclass not in MULTICLASS_NAMES:
        return (
            f"multiclass must be one of {', '.join(MULTICLASS_NAMES)} or None, got {multiclass!r}"
        )
    takes = get_loss(loss).multiclass
    if multiclass not in takes:
        return (
            f"loss {loss!r} has no {multiclass!r} form; it takes multiclass "
            f"{', '.join(takes) or 'none'}"
        )
    return None


def loss_label(loss: str, gamma: float) -> str:
    """``"logistic"``, or ``"smooth_hinge(γ=0.5)"`` for a loss that γ changes."""
    return f"{loss}(γ={gamma:g})" if get_loss(loss).smoothed else loss


def multiclass_label(multiclass: str | None, n_classes: int | None = None) -> str:
    """``"K = 20, one-vs-rest"``, ``"multinomial"`` while K is not known, ``""`` for a
    binary or regression problem."""
    if multiclass is None:
        return ""
    title = MULTICLASS_TITLES.get(multiclass, multiclass)
    return f"K = {n_classes}, {title}" if n_classes else title


# regularization paths (solvers.path, the job spec's ``path``): the default grid
# λ_max·geomspace(1, ratio, n) and the most λs a path holds
PATH_LAMBDAS = 50
PATH_RATIO = 1e-3
PATH_MAX_LAMBDAS = 1000
