"""What a solver is to the service: :class:`SolverSpec` and its typed parameters.

Pure metadata: importing this module imports no Numba and no kernel, so the API and the
CLI validate a request without loading the solvers. A solver's parameters are a frozen
dataclass (its ``Params``) whose fields carry their metadata through :func:`param`::

    @dataclass(frozen=True)
    class Params:
        sampling: str = param("uniform", choices=("uniform", "importance"), help="...")
        tau: float | None = param(None, low=1e-300, high=1e300, help="...")

:meth:`SolverSpec.parse_params` checks a request's raw values once, at the boundary (the
API's job specs, ``faceoff solve``), and returns a ``Params``; :meth:`SolverSpec.load_params`
rebuilds one from a stored canonical dict without checking again (the worker);
``dataclasses.asdict`` gives the canonical dict back. The methods receive the typed object.
The losses and penalties a solver may support are those of ``solvers.vocabulary``.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import KW_ONLY, dataclass, field
from importlib import metadata
from typing import Any, Union

from faceoff import DISTRIBUTION
from faceoff.solvers import PLUGIN_API
from faceoff.solvers.integers import strict_int
from faceoff.solvers.vocabulary import LOSS_NAMES, STRONGLY_CONVEX, form_error, get_loss

SHOWN_CHARS = 80  # a value quoted in an error message is cut to this many characters
DEFAULT_INSTALL = f'pip install "{DISTRIBUTION}[peers]"'  # how to install what a peer requires
# a choice the solver makes from the problem when it starts (the default of some choice
# parameters; a numeric parameter says so with None): it records what it chose in the
# trace's extras (AUTO_EXTRA), and a value given explicitly always wins
AUTO = "auto"
AUTO_EXTRA = "auto"  # the extras key: {parameter: the value auto chose}


def show(value: Any) -> str:
    """``repr(value)`` cut to SHOWN_CHARS characters, for error messages (repr escapes
    control characters and lone surrogates)."""
    text = repr(value)
    return text if len(text) <= SHOWN_CHARS else f"{text[: SHOWN_CHARS - 1]}…"


def _api_version(text: str) -> tuple[int, int] | None:
    """(major, minor) of a "MAJOR.MINOR" version, None if ``text`` is not one."""
    parts = text.split(".") if isinstance(text, str) else []
    if len(parts) != 2 or not all(p.isdigit() and p.isascii() for p in parts):
        return None
    return int(parts[0]), int(parts[1])


def plugin_api_problem(required: Any, provided: str = PLUGIN_API) -> str | None:
    """Why a spec written for the plug-in API ``required`` ("MAJOR.MINOR") cannot run on
    this Faceoff, whose API is ``provided``; None if it can (same major version, a minor
    version no newer than ours)."""
    wanted, have = _api_version(required), _api_version(provided)
    if wanted is None or have is None:
        return f"plugin_api {show(required)} must be a version MAJOR.MINOR such as {PLUGIN_API!r}"
    if wanted[0] == have[0] and wanted[1] <= have[1]:
        return None
    from faceoff import __version__

    here = f"this Faceoff ({DISTRIBUTION} {__version__}) provides {provided}"
    if wanted[0] >= have[0]:
        return (
            f"it requires the Faceoff plug-in API {required}, but {here}: upgrade Faceoff "
            f"(pip install -U {DISTRIBUTION}) or install an older release of the plug-in"
        )
    return (
        f"it was written for the Faceoff plug-in API {required}, but {here}, which is not "
        f"compatible: install a release of the plug-in written for {have[0]}.x "
        "(docs/plugins.md, Stability)"
    )


class MemoryEstimateError(ValueError):
    """A solver's ``extra_memory`` raised or gave no usable number of bytes (a plug-in's
    bug): the message names the solver, its module and what went wrong."""


class ParamError(ValueError):
    """An invalid solver parameter; ``param`` names it."""

    def __init__(self, param: str, message: str) -> None:
        super().__init__(message)
        self.param = param


@dataclass(frozen=True)
class Param:
    """One solver parameter: a float/int in [low, high] or one of ``choices``.

    A numeric parameter whose default is None is computed by the solver from the problem
    (e.g. SPDC's τ, σ, θ from eq. (12)); giving None explicitly asks for that value.
    """

    name: str
    kind: str  # "float", "int" or "choice"
    default: Any
    help: str
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()

    def parse(self, solver: str, raw: Any) -> Any:
        """Convert and check a value; raises ParamError naming the parameter."""
        where = f"parameter {self.name!r} of solver {solver!r}"
        if raw is None and self.default is None:
            return None
        if self.kind == "choice":
            choice = str(raw)
            if choice not in self.choices:
                raise ParamError(
                    self.name, f"{where}: {show(choice)} is not one of {', '.join(self.choices)}"
                )
            return choice
        expected = "an integer" if self.kind == "int" else "a number"
        if isinstance(raw, float) and not math.isfinite(raw):
            raise ParamError(self.name, f"{where}: expected a finite number, got {raw!r}")
        value: float
        try:  # an integer is a JSON integer only: not true, 3.0, "3_0" (solvers.integers)
            value = strict_int(raw) if self.kind == "int" else float(raw)
        except (TypeError, ValueError, OverflowError):  # OverflowError: float(10**400)
            raise ParamError(self.name, f"{where}: expected {expected}, got {show(raw)}") from None
        if isinstance(value, float) and not math.isfinite(value):
            raise ParamError(self.name, f"{where}: expected a finite number, got {show(raw)}")
        if (self.low is not None and value < self.low) or (
            self.high is not None and value > self.high
        ):
            raise ParamError(
                self.name, f"{where}: {show(value)} is outside [{self.low}, {self.high}]"
            )
        return value

    def to_dict(self) -> dict:
        out = {"name": self.name, "kind": self.kind, "default": self.default, "help": self.help}
        if self.kind == "choice":
            out["choices"] = list(self.choices)
        else:
            out["low"], out["high"] = self.low, self.high
        return out


_META = "faceoff.param"  # the key of a Params field's metadata


@dataclass(frozen=True)
class _FieldInfo:
    help: str
    low: float | None
    high: float | None
    choices: tuple[str, ...]


def param(
    default: Any,
    *,
    help: str,
    low: float | None = None,
    high: float | None = None,
    choices: tuple[str, ...] = (),
) -> Any:
    """A field of a solver's ``Params`` dataclass: its default and what :class:`Param` says
    of it. The field's type gives the kind: ``str`` (with ``choices``), ``int`` or
    ``float``, optionally ``| None`` for a value computed from the problem when None."""
    info = _FieldInfo(help, low, high, tuple(choices))
    return field(default=default, metadata={_META: info})


_KINDS = {int: "int", float: "float", str: "choice"}


def _kind(owner: type, name: str, hint: Any, info: _FieldInfo) -> str:
    """The kind ("int", "float" or "choice") of field ``name`` from its annotation."""
    if typing.get_origin(hint) in (Union, types.UnionType):
        hint = next((a for a in typing.get_args(hint) if a is not type(None)), None)
    kind = _KINDS.get(hint)
    if kind is None or (kind == "choice") != bool(info.choices):
        raise TypeError(
            f"{owner.__qualname__}.{name}: a parameter is int, float or str with choices "
            f"(each optionally | None), got {hint!r}{' with choices' if info.choices else ''}"
        )
    return kind


def schema_of(params: type) -> tuple[Param, ...]:
    """The :class:`Param` of each field of a ``Params`` dataclass, in order; TypeError if it
    is not a frozen dataclass of :func:`param` fields."""
    options = vars(params).get("__dataclass_params__") if isinstance(params, type) else None
    if options is None or not options.frozen:  # set by @dataclass(frozen=True) on the class
        raise TypeError(f"{params!r}: a solver's params must be a frozen dataclass")
    hints = typing.get_type_hints(params)
    schema = []
    for item in dataclasses.fields(params):
        info = item.metadata.get(_META)
        if info is None or item.default is dataclasses.MISSING:
            raise TypeError(
                f"{params.__qualname__}.{item.name}: declare it with faceoff's param(default, "
                "help=...)"
            )
        kind = _kind(params, item.name, hints[item.name], info)
        schema.append(
            Param(item.name, kind, item.default, info.help, info.low, info.high, info.choices)
        )
    return tuple(schema)


_TYPES: dict[str, type] = {"int": int, "float": float, "choice": str}


def params_class(solver: str, schema: tuple[Param, ...]) -> type:
    """The frozen ``Params`` dataclass of a tuple of :class:`Param` (a plug-in's spec may
    list its parameters so): every method receives a typed object."""
    fields = []
    for p in schema:
        hint: Any = _TYPES[p.kind] if p.default is not None else _TYPES[p.kind] | None
        spec = param(p.default, help=p.help, low=p.low, high=p.high, choices=p.choices)
        fields.append((p.name, hint, spec))
    title = "".join(part.title() for part in solver.replace(".", "_").split("_"))
    return dataclasses.make_dataclass(f"{title}Params", fields, frozen=True)


@dataclass(frozen=True)
class NoParams:
    """The parameters of a solver that takes none."""


@dataclass(frozen=True)
class OnlyWith:
    """A rule between parameters: ``param`` may be given (not None; or, with ``when``, set
    to ``when``) only when ``other`` is ``value`` (e.g. SPDC's α mixes the weighted
    sampling's probabilities; dual_cd shrinks the rows of a permutation pass). ``other`` left
    at ``auto`` satisfies the rule: the solver then chooses ``value`` (its documented
    resolution honours the rule)."""

    param: str
    other: str
    value: str
    when: str | None = None

    def check(self, values: Mapping[str, Any]) -> None:
        """Raise ParamError naming ``param`` if ``values`` break the rule."""
        given = (
            values[self.param] is not None
            if self.when is None
            else (values[self.param] == self.when)
        )
        if given and values[self.other] not in (self.value, AUTO):
            name = self.param if self.when is None else f"{self.param}={self.when}"
            raise ParamError(
                self.param,
                f"{name} applies to {self.other}={self.value} only; omit {self.param} "
                f"or set {self.other}={self.value}",
            )


def _no_intercept(solver: str) -> str:
    """Why ``solver`` refuses fit_intercept, and which solvers take it."""
    from faceoff.solvers.catalogue import catalogue

    takers = [name for name, spec in catalogue().items() if spec.intercept]
    return (
        f"solver {solver!r} does not fit an intercept (its dual would gain the constraint "
        f"Σᵢ yᵢ = 0, or its library penalizes the intercept or cannot fit one here); "
        f"solvers that do: "
        f"{', '.join(takers) or 'none installed'}; or center the data and omit fit_intercept"
    )


class SupportError(ValueError):
    """A loss, penalty or loss parameter a solver does not support; ``field`` names the
    request field to change: ``"loss"``, ``"l1"`` (the penalty) or the loss parameter."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


_L1_HINT = {"elastic_net": " (l1 > 0 makes the penalty elastic_net)"}


def _needs_l2(solver: str) -> str:
    """Why ``solver`` refuses l2 = 0, and which solvers take it."""
    from faceoff.solvers.catalogue import catalogue

    takers = [name for name, spec in catalogue().items() if "l1" in spec.penalties]
    return (
        f"solver {solver!r} needs l2 > 0: its steps rely on the strong convexity of "
        "g(x) = l1·‖x‖₁ + l2/2·‖x‖² (μ = l2), which l2 = 0 (the penalty 'l1': the Lasso, "
        f"l1-logistic) lacks; give l2 > 0, or a solver that takes l2 = 0: "
        f"{', '.join(takers) or 'none installed'}"
    )


@dataclass(frozen=True)
class LossParamRange:
    """A loss parameter a solver supports only within [low, high] for ``loss`` (e.g. a
    library whose smoothed hinge has γ = 1 built in); ``why`` says where the limit comes
    from. Other losses, and this loss's other parameters, are not limited."""

    loss: str
    param: str  # a parameter of the loss in requests: "gamma"
    low: float
    high: float
    why: str

    def accepted(self) -> str:
        """``"gamma = 1"``, ``"gamma ≥ 1"`` or ``"gamma in [a, b]"``."""
        if self.low == self.high:
            return f"{self.param} = {self.low:g}"
        if math.isinf(self.high):
            return f"{self.param} ≥ {self.low:g}"
        return f"{self.param} in [{self.low:g}, {self.high:g}]"

    def check(self, solver: str, loss: str, values: dict[str, float]) -> None:
        """Raise SupportError naming ``param`` if ``loss`` is this rule's and its value in
        ``values`` is outside [low, high]."""
        value = values[self.param]
        if loss == self.loss and not self.low <= value <= self.high:
            raise SupportError(
                self.param,
                f"solver {solver!r} takes loss {loss!r} with {self.accepted()} only "
                f"({self.why}), got {self.param}={value:g}; use {self.accepted()} or another "
                "solver",
            )

    def to_dict(self) -> dict:
        return {
            "loss": self.loss,
            "param": self.param,
            "low": self.low,
            "high": None if math.isinf(self.high) else self.high,
            "why": self.why,
        }


@dataclass(frozen=True)
class SeedWhen:
    """A solver uses its seed only when parameter ``param`` is one of ``values`` (e.g.
    liblinear's dual coordinate descent shuffles, its primal Newton method does not)."""

    param: str
    values: tuple[str, ...]

    def to_dict(self) -> dict:
        return {"param": self.param, "values": list(self.values)}


@dataclass(frozen=True)
class SolverSpec:
    """A solver: what it supports, its parameters, how it is run.

    ``params`` is the solver's frozen ``Params`` dataclass (a tuple of :class:`Param` is
    turned into one). The method is ``entry`` (default ``solve``) of ``module``; left None,
    the catalogue sets it to the ``method`` module beside the spec's own module.
    """

    name: str
    title: str
    reference: str
    side: str  # "primal", "dual" or "batch": which iterate the trace certifies from
    _: KW_ONLY
    losses: tuple[str, ...] = LOSS_NAMES
    # the penalties it solves; by default the strongly convex ones (l2 > 0): a solver that
    # converges without strong convexity lists "l1" too (vocabulary.PENALTY_NAMES)
    penalties: tuple[str, ...] = STRONGLY_CONVEX
    params: Any = NoParams  # a Params dataclass; a tuple of Param is converted
    rules: tuple[OnlyWith, ...] = ()  # checked by parse_params
    # limits on a loss's parameters (γ), checked by check() with the loss and the penalty
    loss_params: tuple[LossParamRange, ...] = ()
    # bytes the method keeps beyond A and O(n + d) vectors: f(n, d, params, penalty)
    extra_memory: Callable[[int, int, Any, str], float] | None = None
    # copies of A (as CSR: 12 bytes a non-zero) a run holds at its peak; None: 3 for ours
    # (by rows, by columns, and a margin for a transform's copy), 4 for a peer, whose
    # library validates and copies A and forms products such as W·A
    # (tests/solvers/test_memory_bound.py measures every solver and peer against it)
    data_copies: float | None = None
    module: str | None = None
    entry: str = "solve"
    # a peer (solvers/peers/): the distribution it needs, how to install it, and how its
    # trace is made: "native" (our clock between chunks), "callback" (the library calls us
    # back; our time excluded) or "refit" (one fit per budget)
    requires: str | None = None
    install: str = DEFAULT_INSTALL
    trace_mode: str = "native"
    # whether the run's seed changes the run: always (True, the default, also for plug-ins
    # that do not say), never (False: a deterministic method, run once per objective in a
    # sweep), or for some values of a parameter only (SeedWhen)
    seeded: bool | SeedWhen = True
    # the K-class forms it solves as one objective (solvers.vocabulary.MULTICLASS); none:
    # binary and regression problems only
    multiclass: tuple[str, ...] = ()
    # whether it fits an unpenalized intercept (Problem.intercept: x is (w, c)); a solver
    # that does not is refused a request with fit_intercept (the dual methods: their dual
    # would gain the constraint Σᵢ yᵢ = 0)
    intercept: bool = False
    # whether its method starts from ``recorder.warm_start`` when one is given (a
    # regularization path's previous solution: solvers.path), else from 0
    warm_start: bool = False
    # a plug-in: the version of faceoff.solvers.PLUGIN_API it was written for ("1.0"); None
    # (built-ins, and plug-ins that do not say): the current one
    plugin_api: str | None = None
    # the Param of each field of ``params``, in order (derived)
    schema: tuple[Param, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.params, tuple):
            object.__setattr__(self, "params", params_class(self.name, self.params))
        object.__setattr__(self, "schema", schema_of(self.params))

    def uses_seed(self, params: Any) -> bool:
        """Whether a run with the parsed ``params`` (a ``Params``) depends on its seed."""
        if isinstance(self.seeded, SeedWhen):
            return getattr(params, self.seeded.param) in self.seeded.values
        return self.seeded

    def unavailable_reason(self) -> str | None:
        """None if the distribution the solver ``requires`` is installed, else one line
        saying what to install. Reads installed metadata only: imports nothing."""
        if self.requires is None:
            return None
        try:
            metadata.version(self.requires)
        except metadata.PackageNotFoundError:
            return (
                f"solver {self.name!r} needs the distribution {self.requires!r}, which is not "
                f"installed: {self.install}"
            )
        return None

    def check(
        self,
        loss: str,
        penalty: str,
        gamma: float = 1.0,
        multiclass: str | None = None,
        intercept: bool = False,
    ) -> None:
        """Raise SupportError (naming the request field to change) if this solver does not
        support the loss, the penalty, the loss's parameter ``gamma``, the K-class form
        ``multiclass`` or an intercept, or if the loss cannot take the penalty or the form."""
        if loss not in self.losses:
            raise SupportError(
                "loss",
                f"solver {self.name!r} does not support loss {loss!r}; "
                f"it supports {', '.join(self.losses)}",
            )
        if penalty == "l1" and penalty not in self.penalties:
            raise SupportError("l2", _needs_l2(self.name))
        if penalty not in self.penalties:
            raise SupportError(
                "l1",
                f"solver {self.name!r} does not support penalty {penalty!r}"
                f"{_L1_HINT.get(penalty, '')}; it supports {', '.join(self.penalties)}",
            )
        if penalty not in get_loss(loss).penalties:
            raise SupportError(
                "l1",
                f"loss {loss!r} does not take penalty {penalty!r}; "
                f"it takes {', '.join(get_loss(loss).penalties)}",
            )
        for rule in self.loss_params:
            rule.check(self.name, loss, {"gamma": gamma})
        if multiclass is not None and multiclass not in self.multiclass:
            supported = ", ".join(self.multiclass) or "none (binary and regression only)"
            raise SupportError(
                "multiclass",
                f"solver {self.name!r} does not solve multiclass {multiclass!r} problems; "
                f"the multiclass modes it supports: {supported}",
            )
        error = form_error(loss, multiclass)
        if error is not None:
            raise SupportError("multiclass", error)
        if intercept and multiclass is not None:
            raise SupportError(
                "fit_intercept",
                f"fit_intercept is for binary and regression problems, not multiclass "
                f"{multiclass!r}",
            )
        if intercept and not self.intercept:
            raise SupportError("fit_intercept", _no_intercept(self.name))

    def takes(self, loss: str, multiclass: str | None) -> bool:
        """Whether this solver and ``loss`` have the K-class form ``multiclass`` (always, for
        None: binary or regression), as :meth:`check` decides it."""
        ok = multiclass is None or multiclass in self.multiclass
        return ok and form_error(loss, multiclass) is None

    def parse_params(self, raw: Mapping[str, Any] | None) -> Any:
        """The ``Params`` of a request: defaults overridden by ``raw``, every value and every
        rule between values checked (ParamError naming the parameter); unknown names are
        errors. The one check a request's parameters get."""
        known = {p.name: p for p in self.schema}
        unknown = sorted(set(raw or {}) - set(known))
        if unknown:
            accepted = ", ".join(known) or "none"
            raise ParamError(
                unknown[0],
                f"unknown parameter {show(unknown[0])} for solver {self.name!r}; "
                f"accepted: {accepted}",
            )
        values = {p.name: p.default for p in self.schema}
        for name, value in (raw or {}).items():
            values[name] = known[name].parse(self.name, value)
        for rule in self.rules:
            rule.check(values)
        return self.params(**values)

    def load_params(self, stored: Mapping[str, Any]) -> Any:
        """The ``Params`` of a canonical dict that :meth:`parse_params` made (a stored job):
        not checked again; a name this solver does not have is a ParamError."""
        unknown = sorted(set(stored) - {p.name for p in self.schema})
        if unknown:
            raise ParamError(
                unknown[0], f"stored parameter {show(unknown[0])} of solver {self.name!r} is gone"
            )
        return self.params(**stored)

    def changed_params(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """The entries of ``values`` (a canonical dict) that differ from the defaults."""
        defaults = {p.name: p.default for p in self.schema}
        return {k: v for k, v in values.items() if k not in defaults or defaults[k] != v}

    def choice_variants(self) -> list[dict[str, Any]]:
        """The runs that select each kernel, as changes from the defaults: none, then each
        other value of each choice parameter with what the rules need beside it (dual_cd's
        ``shrinking=on`` comes with ``sampling=permutation``)."""
        defaults = {p.name: p.default for p in self.schema}
        variants: list[dict[str, Any]] = [{}]
        for param in self.schema:
            for choice in param.choices:
                if choice == defaults[param.name]:
                    continue
                change = {param.name: choice}
                for rule in self.rules:
                    if rule.param == param.name and rule.when == choice:
                        if defaults[rule.other] not in (rule.value, AUTO):
                            change[rule.other] = rule.value
                variants.append(change)
        return variants

    def working_bytes(
        self, n: int, d: int, nnz: int, params: Any, penalty: str, classes: int = 1
    ) -> float:
        """An upper bound on the memory a run with ``params`` (a ``Params``) takes above
        its worker's baseline (imports, compiled kernels) on an n × d matrix with ``nnz``
        non-zeros and ``classes`` columns of X (K of a K-class problem): ``data_copies``
        copies of A, the method's O((n + d)·K) arrays, and its ``extra_memory`` for its
        d·K variables (MemoryEstimateError when that fails)."""
        copies = self.data_copies or (3 if self.requires is None else 4)
        data = copies * (12 * nnz + 8 * (n + d))
        vectors = 16 * 8 * (n + d) * classes
        return data + vectors + self.extra_bytes(n, d * classes, params, penalty)

    def extra_bytes(self, n: int, d: int, params: Any, penalty: str) -> float:
        """``extra_memory(n, d, params, penalty)`` checked: a finite number ≥ 0 (0 without
        one); anything else — an exception, NaN, ∞, a negative, not a number — is a
        MemoryEstimateError naming the solver, so a broken plug-in is refused, never a 500."""
        if self.extra_memory is None:
            return 0.0
        where = f"solver {self.name!r} ({self.module or 'its spec module'}): extra_memory"
        try:
            value = self.extra_memory(n, d, params, penalty)
        except Exception as err:  # any failure of a plug-in's code is the plug-in's
            raise MemoryEstimateError(
                f"{where} raised {type(err).__name__}: {show(str(err))[1:-1]}"
            ) from None
        try:
            number = float(value) if isinstance(value, numbers.Real) else math.nan
        except OverflowError:  # an int beyond a float
            number = math.inf
        if isinstance(value, bool) or not (math.isfinite(number) and number >= 0):
            raise MemoryEstimateError(
                f"{where} returned {show(value)}; it must return a finite number of bytes ≥ 0"
            )
        return number

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "title": self.title,
            "reference": self.reference,
            "side": self.side,
            "losses": list(self.losses),
            "penalties": list(self.penalties),
            "params": [p.to_dict() for p in self.schema],
            "loss_params": [r.to_dict() for r in self.loss_params],
            "multiclass": list(self.multiclass),
            "intercept": self.intercept,
            "warm_start": self.warm_start,
            "requires": self.requires,
            "trace_mode": self.trace_mode,
            "uses_seed": self.seeded.to_dict()
            if isinstance(self.seeded, SeedWhen)
            else self.seeded,
            "available": self.unavailable_reason() is None,
            "unavailable_reason": self.unavailable_reason(),
        }
