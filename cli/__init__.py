"""The ``faceoff`` command line: ``solve`` runs one solver, ``solvers`` lists them."""

import argparse
import math
from collections.abc import Callable

from faceoff.solvers.integers import int_text


class InputError(Exception):
    """Bad input: reported as one line on stderr with exit status 2."""


def positive_int(text: str) -> int:
    """An integer ≥ 1 written in the digits 0-9 (argparse type)."""
    try:
        value = int_text(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return value


def integer_in(low: int, high: int) -> Callable[[str], int]:
    """An integer in [low, high], written in the digits 0-9 (argparse type)."""

    def parse(text: str) -> int:
        try:
            value = int_text(text)
        except ValueError:
            value = low - 1
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(
                f"expected an integer in [{low}, {high}], got {text!r}"
            )
        return value

    return parse


def l1_weights(text: str) -> list[float]:
    """Comma-separated l1 weights, each a finite number > 0 (argparse type)."""
    try:
        values = [float(part) for part in text.split(",")]
    except ValueError:
        values = []
    if not values or not all(math.isfinite(v) and v > 0 for v in values):
        raise argparse.ArgumentTypeError(
            f"expected comma-separated l1 weights, each a number > 0, got {text!r}"
        )
    return values


def ratio(text: str) -> float:
    """A number in (0, 1) (argparse type)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {text!r}")
    return value


def add_grid_arguments(
    group: argparse._ArgumentGroup, n_lambdas: int | None = None, ratio_: float | None = None
) -> None:
    """A path's grid options: --n-lambdas, --ratio (λ_max·geomspace(1, RATIO, N)) or
    --lambdas; their defaults (None: the service's)."""
    from faceoff.solvers.vocabulary import PATH_LAMBDAS, PATH_MAX_LAMBDAS, PATH_RATIO

    group.add_argument(
        "--n-lambdas",
        type=integer_in(2, PATH_MAX_LAMBDAS),
        default=n_lambdas,
        metavar="N",
        help=f"weights in the grid (default {PATH_LAMBDAS})",
    )
    group.add_argument(
        "--ratio",
        type=ratio,
        default=ratio_,
        help=f"the smallest weight over λ_max (default {PATH_RATIO:g})",
    )
    group.add_argument(
        "--lambdas", type=l1_weights, help="comma-separated l1 weights > 0, in this order"
    )
