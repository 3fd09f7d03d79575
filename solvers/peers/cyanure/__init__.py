"""Cyanure as a peer (adapter in ``method.py``), traced by refits."""

from __future__ import annotations

from dataclasses import dataclass

from faceoff.solvers.spec import SeedWhen, SolverSpec, param


@dataclass(frozen=True)
class Params:
    solver: str = param(
        "catalyst-miso",
        choices=("catalyst-miso", "miso", "qning-ista", "svrg"),
        help="Cyanure's solver",
    )


SPECS: tuple[SolverSpec, ...] = (
    SolverSpec(
        "cyanure",
        "Cyanure (MISO, Catalyst, QNing, SVRG)",
        "Mairal 2019, Cyanure; Lin, Mairal & Harchaoui 2018 (Catalyst, QNing)",
        "primal",
        entry="solve",
        requires="cyanure",
        trace_mode="refit",
        losses=("logistic", "squared"),
        params=Params,
        # MISO and SVRG sample the data; QNing over ISTA takes full gradients
        seeded=SeedWhen("solver", ("catalyst-miso", "miso", "svrg")),
        # its multiclass-logistic and one-vs-rest fits; the squared loss one-vs-rest
        # (method.py: svrg refused on sparse multinomial problems)
        multiclass=("ovr", "multinomial"),
    ),
)
