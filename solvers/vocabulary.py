"""The vocabulary of a problem: losses, penalties and normalizations, defined once.

Pure metadata, like the catalogue beside it: importing this module imports no Numba, so
the API, the CLI, the core and the dashboard derive their choices, enums, labels and the
loss smoothness β from here. ``solvers.losses`` implements each loss (its kernel code) and
``data.transforms`` each normalization under the names listed here.

Adding a loss: one :class:`LossInfo` entry below, and its kernel branches in
``solvers.losses``.
"""

from __future__ import annotations

from dataclasses import dataclass

PENALTIES: dict[str, str] = {
    "l2": "g(x) = l2/2·‖x‖²",
    "elastic_net": "g(x) = l1·‖x‖₁ + l2/2·‖x‖² (l1 > 0)",
}
PENALTY_NAMES = tuple(PENALTIES)

NORMALIZATIONS: dict[str, str] = {
    "none": "the data as it is",
    "rows": "every row aᵢ scaled to unit l2 norm (SPDC §7.2)",
    "mean": "A divided by the mean row norm R̄ (Faceoff §7, SPDC §7.3)",
}
NORMALIZATION_NAMES = tuple(NORMALIZATIONS)


@dataclass(frozen=True)
class LossInfo:
    """What the service needs to know about a loss φ(z, b), without its kernels.

    Parameters
    ----------
    name : str
        The loss's name in requests, on the command line and in the database.
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
        The penalties the loss may be paired with.
    """

    name: str
    title: str
    beta: float
    smoothed: bool
    needs_binary_labels: bool
    penalties: tuple[str, ...] = PENALTY_NAMES

    def smoothness(self, gamma: float = 1.0) -> float:
        """β such that φ is β-smooth: ``beta / gamma`` for a smoothed loss, ``beta`` else."""
        return self.beta / gamma if self.smoothed else self.beta


LOSSES: dict[str, LossInfo] = {
    info.name: info
    for info in (
        LossInfo("logistic", "log(1 + exp(−b·z))", 0.25, False, True),
        LossInfo(
            "smooth_hinge",
            "smoothed hinge: 0 for bz ≥ 1, 1 − bz − γ/2 for bz ≤ 1 − γ, (1 − bz)²/(2γ) between",
            1.0,
            True,
            True,
        ),
        LossInfo("squared", "(z − b)²/2", 1.0, False, False),
    )
}
LOSS_NAMES = tuple(LOSSES)
BINARY_LOSS_NAMES = tuple(name for name, info in LOSSES.items() if info.needs_binary_labels)
SMOOTHED_LOSS_NAMES = tuple(name for name, info in LOSSES.items() if info.smoothed)


def get_loss(name: str) -> LossInfo:
    """The metadata of loss ``name``; ValueError listing the accepted names otherwise."""
    if name not in LOSSES:
        raise ValueError(f"unknown loss {name!r}; accepted: {', '.join(LOSSES)}")
    return LOSSES[name]


def penalty_name(l1: float) -> str:
    """The penalty a weight l1 makes: ``elastic_net`` if l1 > 0, plain ``l2`` otherwise."""
    return "elastic_net" if l1 > 0 else "l2"


def smoothness(loss: str, gamma: float = 1.0) -> float:
    """β such that loss ``loss`` with smoothing ``gamma`` is β-smooth (φ'' ≤ β)."""
    return get_loss(loss).smoothness(gamma)


def loss_label(loss: str, gamma: float) -> str:
    """``"logistic"``, or ``"smooth_hinge(γ=0.5)"`` for a loss that γ changes."""
    return f"{loss}(γ={gamma:g})" if get_loss(loss).smoothed else loss
