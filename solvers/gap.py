"""The relative duality gap: the quantity the ``tol`` stop rule compares.

One definition, shared by the stop rule (:mod:`faceoff.solvers.trace`) and by the analysis
of traces (:mod:`faceoff.core.analysis`: the dashboard, the CLI, the benchmarks). It lives
here, apart from the trace, because the trace evaluates points with Numba and neither the
core nor the dashboard imports Numba (CONTRIBUTING, "Where things are").
"""

from __future__ import annotations

from typing import overload

import numpy as np
from numpy.typing import ArrayLike


@overload
def relative_gap(gap: float, primal: float) -> float: ...
@overload
def relative_gap(gap: ArrayLike, primal: ArrayLike) -> np.ndarray | float: ...
def relative_gap(gap: ArrayLike, primal: ArrayLike) -> np.ndarray | float:
    """gap/max(1, |P|): the duality gap P − D relative to the primal value where |P| ≥ 1,
    absolute below (a P near 0 does not inflate it). A run stops ``converged`` at the first
    point where it is ≤ ``StopRules.tol``. Elementwise on arrays, a float for two numbers;
    NaN when P or the gap is NaN."""
    return np.divide(gap, np.maximum(1.0, np.abs(primal)))[()]
