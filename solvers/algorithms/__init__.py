"""Our methods, one folder each: ``<name>/__init__.py`` holds the solver's ``SPEC`` and its
``Params`` (light: no Numba), ``<name>/method.py`` its kernels and
``solve(problem, params, recorder, seed) -> str``. The catalogue finds every folder here.
"""

from __future__ import annotations

from typing import Any

from faceoff.solvers.spec import AUTO, param

SAMPLING_MODES = ("uniform", "importance", "permutation")


def coordinate_sampling(auto: str) -> Any:
    """The ``sampling`` parameter of the coordinate methods (solvers.sampling's modes), by
    default ``auto``, whose choice ``auto`` says."""
    return param(
        AUTO,
        choices=(AUTO, *SAMPLING_MODES),
        help="coordinate sampling: uniform (with replacement), importance p ∝ β‖column/row‖² "
        "+ l2·n (Faceoff eq. (14)), or permutation (every coordinate once per epoch, in a "
        f"fresh random order); auto: {auto}",
    )
