"""lightning (sklearn-contrib-lightning) as peers (adapters in ``method.py``), traced
through its callback.

lightning's four use random_state (seeded, the default; 0.6.2's sources): SDCA shuffles the
rows each pass (sdca_fast.pyx), CD permutes the columns each pass (permute=True,
primal_cd_fast.pyx), SAGA and SVRG draw rows (sag_fast.pyx, svrg_fast.pyx).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from faceoff.solvers.spec import LossParamRange, SolverSpec, param

REQUIRES = "sklearn-contrib-lightning"
# no wheels; its sdist builds only without build isolation (bench/README.md)
INSTALL = (
    "pip install numpy cython 'setuptools<81' wheel && pip install --no-build-isolation "
    "sklearn-contrib-lightning (faceoff-bench[peers] cannot carry it)"
)


@dataclass(frozen=True)
class SvrgParams:
    step_scale: float = param(
        0.25,
        low=1e-3,
        high=1.0,
        help="step η = step_scale / L_max, L_max = β·max‖aᵢ‖² + l2",
    )


def _peer(name: str, title: str, reference: str, entry: str, **kw: Any) -> SolverSpec:
    return SolverSpec(
        name,
        title,
        reference,
        "primal",
        entry=entry,
        requires=REQUIRES,
        install=INSTALL,
        trace_mode="callback",
        multiclass=("ovr",),  # method.py: one-vs-rest natively; no multinomial form
        **kw,
    )


SPECS: tuple[SolverSpec, ...] = (
    _peer(
        "lightning.sdca",
        "lightning SDCAClassifier / SDCARegressor",
        "Shalev-Shwartz & Zhang 2013 (prox-SDCA)",
        "sdca",
        losses=("smooth_hinge", "squared"),
    ),
    _peer(
        "lightning.cd",
        "lightning CDClassifier / CDRegressor (primal coordinate descent)",
        "Chang, Hsieh & Lin 2008; Yuan et al. 2012 (primal CD, Newton steps)",
        "cd",
        losses=("logistic", "smooth_hinge", "squared"),
        penalties=("l2",),  # its l1 penalty has no l2 term
        loss_params=(
            LossParamRange(
                "smooth_hinge",
                "gamma",
                1.0,
                1.0,
                "lightning's primal CD has the smoothed hinge with γ = 1 built in "
                "(primal_cd_fast.pyx, SmoothHinge)",
            ),
        ),
    ),
    _peer(
        "lightning.saga",
        "lightning SAGAClassifier",
        "Defazio, Bach & Lacoste-Julien 2014 (SAGA)",
        "saga",
        # its automatic step diverges with the squared loss (measured on the sparse test
        # problem: P not finite) and stalls on rcv1
        losses=("logistic", "smooth_hinge"),
        loss_params=(
            LossParamRange(
                "smooth_hinge",
                "gamma",
                1.0,
                math.inf,
                "its automatic step 1/(max‖aᵢ‖² + γ + α) exceeds 1/L = 1/(max‖aᵢ‖²/γ + α) "
                "for γ < 1 (sag_fast.pyx, get_auto_step_size): at γ = 0.3 it stalls at "
                "P − P* = 2e-2·P*, measured",
            ),
        ),
    ),
    _peer(
        "lightning.svrg",
        "lightning SVRGClassifier / SVRGRegressor",
        "Johnson & Zhang 2013 (SVRG)",
        "svrg",
        losses=("logistic", "smooth_hinge", "squared"),
        penalties=("l2",),
        params=SvrgParams,
    ),
)
