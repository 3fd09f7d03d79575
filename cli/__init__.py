"""The ``faceoff`` command line: ``solve`` runs one solver, ``solvers`` lists them."""

import argparse

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
