"""The solver catalogue: every solver the service knows, found where it lives.

Three sources, one registration check (:func:`_problem`):

- **built-ins**: each subpackage of ``faceoff.solvers.algorithms`` holds its ``SPEC`` (a
  :class:`~faceoff.solvers.spec.SolverSpec`) and its ``Params`` in ``__init__.py``, and its
  method in ``method.py``; the folder is the solver's name;
- **peers**: each subpackage of ``faceoff.solvers.peers`` (one per library) holds ``SPECS``,
  solvers named after the library (``sklearn.saga``), and their adapters in ``method.py``;
- **plug-ins**: installed distributions with an entry point in the group
  ``faceoff.solvers`` whose object is a SolverSpec::

      [project.entry-points."faceoff.solvers"]
      "acme.newton" = "acme_faceoff.spec:SPEC"

  The entry point's name must equal the spec's name, and its module must be light (the API
  imports it to validate requests, without Numba or the solver's own dependencies).

A spec's method module, unless it names one (``SolverSpec.module``), is the ``method``
module beside the spec's module, imported only by whoever runs the solver. Discovery runs
once per process, at first use of :func:`catalogue`; importing this module imports no
solver. A built-in or a peer that fails the check is a bug of this repository and raises
:class:`RegistrationError`. A plug-in that fails — its module does not import, its object
is not a SolverSpec, its name is malformed or shadows another solver, it names a loss or
penalty Faceoff does not have, it requires a plug-in API this Faceoff does not provide
(``SolverSpec.plugin_api`` against ``faceoff.solvers.PLUGIN_API``) — is left out and
reported with the reason (:func:`broken_plugins`: ``faceoff solvers``, ``GET /solvers``); it
never stops the service from starting.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import re
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from faceoff.solvers.spec import SolverSpec, plugin_api_problem
from faceoff.solvers.vocabulary import LOSS_NAMES, MULTICLASS_NAMES, PENALTY_NAMES

GROUP = "faceoff.solvers"
ALGORITHMS = "faceoff.solvers.algorithms"
PEERS = "faceoff.solvers.peers"
NAME = re.compile(r"[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*")
MAX_NAME = 64  # a solver name in a job spec is at most 64 characters
SIDES = ("primal", "dual", "batch")
# the order of the built-ins and then of the peers' libraries (the CLI's, the API's and the
# dashboard's colours follow it); a folder not listed comes after these, by name
ORDER = (
    "primal_cd",
    "ws_cd",
    "dual_cd",
    "agd",
    "lbfgs",
    "saga",
    "spdc",
    "dgpd",
    "sklearn",
    "cyanure",
    "lightning",
    "skglm",
    "celer",
)


class RegistrationError(RuntimeError):
    """A built-in solver or a peer of this repository that cannot join the catalogue."""


@dataclass(frozen=True)
class BrokenPlugin:
    """An entry point of group ``faceoff.solvers`` that could not be used, and why."""

    name: str
    distribution: str
    error: str

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "distribution": self.distribution, "error": self.error}


@dataclass(frozen=True)
class _Origin:
    """Where a spec was found: ``kind`` "folder" (a built-in), "library folder" (peers,
    named ``name`` or ``name.<solver>``) or "entry point", ``name``, and the package its
    ``method`` module defaults to (None for a top-level module)."""

    kind: str
    name: str
    package: str | None


def _problem(spec: Any, origin: _Origin, taken: Mapping[str, str]) -> str | None:
    """Why ``spec``, found at ``origin``, cannot join the catalogue; ``taken`` maps the
    names already in it to who holds them."""
    if not isinstance(spec, SolverSpec):
        return f"the {origin.kind} is a {type(spec).__name__}, not a faceoff SolverSpec"
    if origin.kind == "library folder":
        named = spec.name == origin.name or spec.name.startswith(f"{origin.name}.")
    else:
        named = spec.name == origin.name
    if not named:
        return f"the {origin.kind} is named {origin.name!r} but its spec {spec.name!r}"
    if len(spec.name) > MAX_NAME or not NAME.fullmatch(spec.name):
        return (
            f"name {spec.name!r} must be lowercase letters, digits and _, in dot-separated "
            f"parts each starting with a letter, at most {MAX_NAME} characters"
        )
    if spec.name in taken:
        return f"name {spec.name!r} is taken by {taken[spec.name]}"
    if spec.side not in SIDES:
        return f"side {spec.side!r} is not one of {', '.join(SIDES)}"
    unknown = [loss for loss in spec.losses if loss not in LOSS_NAMES]
    unknown += [penalty for penalty in spec.penalties if penalty not in PENALTY_NAMES]
    if unknown or not spec.losses or not spec.penalties:
        return (
            f"losses and penalties must be non-empty and among {', '.join(LOSS_NAMES)} and "
            f"{', '.join(PENALTY_NAMES)}; found {', '.join(unknown) or 'an empty list'}"
        )
    if not set(spec.multiclass) <= set(MULTICLASS_NAMES):
        return f"multiclass {list(spec.multiclass)!r} must be among {', '.join(MULTICLASS_NAMES)}"
    if spec.plugin_api is not None:
        incompatible = plugin_api_problem(spec.plugin_api)
        if incompatible is not None:
            return incompatible
    if spec.module is None and origin.package is None:
        return "a spec in a top-level module must name its method's module (module=...)"
    return None


def _located(spec: SolverSpec, origin: _Origin) -> SolverSpec:
    """``spec`` with its method module: the one it names, else ``method`` beside it."""
    if spec.module is not None:
        return spec
    return dataclasses.replace(spec, module=f"{origin.package}.method")


def _rank(folder: str) -> tuple[int, str]:
    return (ORDER.index(folder) if folder in ORDER else len(ORDER), folder)


def _scan(package: str, attribute: str) -> Iterator[tuple[str, str, Any]]:
    """(folder, subpackage, its ``attribute``) for each subpackage of ``package``, in
    ``ORDER`` and then by name."""
    parent = importlib.import_module(package)
    folders = [found.name for found in pkgutil.iter_modules(parent.__path__) if found.ispkg]
    for folder in sorted(folders, key=_rank):
        module = importlib.import_module(f"{package}.{folder}")
        if not hasattr(module, attribute):
            raise RegistrationError(f"{module.__name__} defines no {attribute}")
        yield folder, module.__name__, getattr(module, attribute)


def _builtins() -> dict[str, SolverSpec]:
    """The built-in solvers, then the peers; RegistrationError for a spec that fails."""
    found: dict[str, SolverSpec] = {}
    sources = [
        (_Origin("folder", folder, package), spec)
        for folder, package, spec in _scan(ALGORITHMS, "SPEC")
    ]
    sources += [
        (_Origin("library folder", folder, package), spec)
        for folder, package, specs in _scan(PEERS, "SPECS")
        for spec in specs
    ]
    for origin, spec in sources:
        problem = _problem(spec, origin, dict.fromkeys(found, "a built-in solver"))
        if problem is not None:
            raise RegistrationError(f"{origin.package}: {problem}")
        found[spec.name] = _located(spec, origin)
    return found


def _distribution(entry: EntryPoint) -> str:
    dist = getattr(entry, "dist", None)
    return f"{dist.name} {dist.version}" if dist is not None else "unknown distribution"


_PLUGIN_DISTRIBUTIONS: dict[str, tuple[str | None, str | None]] = {}


def distribution_of(name: str) -> tuple[str | None, str | None]:
    """(distribution, version) that solver ``name`` comes from: a plug-in's distribution,
    else this one (``faceoff``); (None, None) for a plug-in of unknown distribution."""
    catalogue()
    if name in _PLUGIN_DISTRIBUTIONS:
        return _PLUGIN_DISTRIBUTIONS[name]
    from faceoff import __version__

    return "faceoff", __version__


def _package_of(module_name: str) -> str | None:
    """The package of an imported module: itself for a package, else its parent (None
    for a top-level module)."""
    module = importlib.import_module(module_name)
    if hasattr(module, "__path__"):
        return module_name
    return module_name.rpartition(".")[0] or None


def discover_plugins(
    builtin: Iterable[str], entries: Iterable[EntryPoint] | None = None
) -> tuple[dict[str, SolverSpec], list[BrokenPlugin]]:
    """(name → SolverSpec of every usable plug-in, the broken ones) for the entry points of
    group ``faceoff.solvers`` (or ``entries``); ``builtin`` holds the names already taken."""
    found: dict[str, SolverSpec] = {}
    broken: list[BrokenPlugin] = []
    taken = dict.fromkeys(builtin, "a built-in solver")
    listed = entry_points(group=GROUP) if entries is None else entries
    for entry in sorted(listed, key=lambda e: (e.name, e.value)):
        origin = _distribution(entry)
        try:
            spec = entry.load()
            where = _Origin("entry point", entry.name, _package_of(entry.module))
        except Exception as err:  # any failure of third-party code is the plug-in's
            broken.append(BrokenPlugin(entry.name, origin, f"{type(err).__name__}: {err}"))
            continue
        problem = _problem(spec, where, taken)
        if problem is not None:
            broken.append(BrokenPlugin(entry.name, origin, problem))
            continue
        found[spec.name] = _located(spec, where)
        taken[spec.name] = f"the plug-in of {origin}"
        dist = getattr(entry, "dist", None)
        _PLUGIN_DISTRIBUTIONS[spec.name] = (
            (dist.name, dist.version) if dist is not None else (None, None)
        )
    return found, broken


_lock = threading.RLock()
_found: tuple[dict[str, SolverSpec], tuple[BrokenPlugin, ...]] | None = None
_discovering = False


def _registry() -> tuple[dict[str, SolverSpec], tuple[BrokenPlugin, ...]]:
    global _found, _discovering
    with _lock:
        if _found is None:
            if _discovering:  # a spec module asked for the catalogue while it was imported
                raise RegistrationError("the catalogue was asked for while it was discovered")
            _discovering = True
            try:
                specs = _builtins()
                plugins, broken = discover_plugins(specs)
            finally:
                _discovering = False
            _found = ({**specs, **plugins}, tuple(broken))
        return _found


def catalogue() -> dict[str, SolverSpec]:
    """Name → spec of every solver: the built-ins, the peers, then the plug-ins (found at
    the first call, once per process)."""
    return _registry()[0]


def broken_plugins() -> tuple[BrokenPlugin, ...]:
    """The plug-ins left out of :func:`catalogue`, with the reason."""
    return _registry()[1]


def get_spec(name: str) -> SolverSpec:
    """The spec of solver ``name``; ValueError listing the accepted names otherwise."""
    specs = catalogue()
    if name not in specs:
        raise ValueError(f"unknown solver {name!r}; accepted: {', '.join(specs)}")
    return specs[name]


def warm_start_error(solver: str) -> str | None:
    """Why ``solver`` cannot follow a warm-started path (None if it can)."""
    if catalogue()[solver].warm_start:
        return None
    takers = ", ".join(name for name, spec in catalogue().items() if spec.warm_start)
    return (
        f"solver {solver!r} does not start from a given point, so it cannot follow a "
        f"warm-started path; solvers that do: {takers}"
    )
