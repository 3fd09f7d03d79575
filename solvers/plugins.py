"""Plug-in solvers: a team's own solver, raced like the built-in ones.

A plug-in is an installed Python distribution with an entry point in the group
``faceoff.solvers`` whose object is a :class:`~faceoff.solvers.catalogue.SolverSpec`::

    [project.entry-points."faceoff.solvers"]
    "acme.newton" = "acme_faceoff.spec:SPEC"

The entry point's module must be light (the API imports it to validate requests, without
Numba or the solver's own dependencies); ``SPEC.module`` names the module that holds
``solve(problem, params, recorder, seed) -> str``, imported only by whoever runs the solver.
The entry point's name must equal ``SPEC.name``.

:func:`discover` loads every entry point once per process. A plug-in that fails — its module
does not import, its object is not a SolverSpec, its name is malformed or shadows a built-in
solver or another plug-in, it names a loss or penalty Faceoff does not have — is left out
and reported with the reason (``faceoff solvers``, ``GET /solvers``); it never stops the
service from starting.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from faceoff.solvers.vocabulary import LOSSES, PENALTY_NAMES

GROUP = "faceoff.solvers"
NAME = re.compile(r"[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*")
MAX_NAME = 64  # a solver name in a job spec is at most 64 characters
SIDES = ("primal", "dual", "batch")


@dataclass(frozen=True)
class BrokenPlugin:
    """An entry point of group ``faceoff.solvers`` that could not be used, and why."""

    name: str
    distribution: str
    error: str

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "distribution": self.distribution, "error": self.error}


def _distribution(entry: EntryPoint) -> str:
    dist = getattr(entry, "dist", None)
    return f"{dist.name} {dist.version}" if dist is not None else "unknown distribution"


def _problem(spec: Any, entry_name: str, taken: Mapping[str, Any]) -> str | None:
    """Why ``spec`` (loaded from entry point ``entry_name``) cannot join the catalogue."""
    from faceoff.solvers.catalogue import SolverSpec

    if not isinstance(spec, SolverSpec):
        return f"the entry point is a {type(spec).__name__}, not a faceoff SolverSpec"
    if spec.name != entry_name:
        return f"the entry point is named {entry_name!r} but its spec {spec.name!r}"
    if len(spec.name) > MAX_NAME or not NAME.fullmatch(spec.name):
        return (
            f"name {spec.name!r} must be lowercase letters, digits and _, in dot-separated "
            f"parts each starting with a letter, at most {MAX_NAME} characters"
        )
    if spec.name in taken:
        return f"name {spec.name!r} is taken by {taken[spec.name]}"
    if spec.side not in SIDES:
        return f"side {spec.side!r} is not one of {', '.join(SIDES)}"
    unknown = [loss for loss in spec.losses if loss not in LOSSES]
    unknown += [penalty for penalty in spec.penalties if penalty not in PENALTY_NAMES]
    if unknown or not spec.losses or not spec.penalties:
        return (
            f"losses and penalties must be non-empty and among {', '.join(LOSSES)} and "
            f"{', '.join(PENALTY_NAMES)}; found {', '.join(unknown) or 'an empty list'}"
        )
    return None


def discover(
    builtin: Mapping[str, Any], entries: Iterable[EntryPoint] | None = None
) -> tuple[dict[str, Any], list[BrokenPlugin]]:
    """(name → SolverSpec of every usable plug-in, the broken ones) for the entry points of
    group ``faceoff.solvers`` (or ``entries``); ``builtin`` holds the names already taken."""
    found: dict[str, Any] = {}
    broken: list[BrokenPlugin] = []
    taken = {name: "a built-in solver" for name in builtin}
    listed = entry_points(group=GROUP) if entries is None else entries
    for entry in sorted(listed, key=lambda e: (e.name, e.value)):
        origin = _distribution(entry)
        try:
            spec = entry.load()
        except Exception as err:  # any failure of third-party code is the plug-in's
            broken.append(BrokenPlugin(entry.name, origin, f"{type(err).__name__}: {err}"))
            continue
        problem = _problem(spec, entry.name, taken)
        if problem is not None:
            broken.append(BrokenPlugin(entry.name, origin, problem))
            continue
        found[spec.name] = spec
        taken[spec.name] = f"the plug-in of {origin}"
    return found, broken
