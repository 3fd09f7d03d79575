"""The solver catalogue: names, parameter schemas, supported losses and penalties.

Pure metadata: importing this module imports no Numba and no kernel, so the API and the
CLI can validate a request without loading the solvers. Installed plug-ins add their
solvers at import (:mod:`faceoff.solvers.plugins`). The losses and penalties a solver
may support are those of ``solvers.vocabulary``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

from faceoff.solvers.integers import strict_int
from faceoff.solvers.plugins import discover
from faceoff.solvers.vocabulary import LOSS_NAMES as LOSSES
from faceoff.solvers.vocabulary import PENALTY_NAMES as PENALTIES
from faceoff.solvers.vocabulary import get_loss

SHOWN_CHARS = 80  # a value quoted in an error message is cut to this many characters


def show(value: Any) -> str:
    """``repr(value)`` cut to SHOWN_CHARS characters, for error messages (repr escapes
    control characters and lone surrogates)."""
    text = repr(value)
    return text if len(text) <= SHOWN_CHARS else f"{text[: SHOWN_CHARS - 1]}…"


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
            value = str(raw)
            if value not in self.choices:
                raise ParamError(
                    self.name, f"{where}: {show(value)} is not one of {', '.join(self.choices)}"
                )
            return value
        expected = "an integer" if self.kind == "int" else "a number"
        if isinstance(raw, float) and not math.isfinite(raw):
            raise ParamError(self.name, f"{where}: expected a finite number, got {raw!r}")
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


@dataclass(frozen=True)
class OnlyWith:
    """A rule between parameters: ``param`` may be given (not None; or, with ``when``, set
    to ``when``) only when ``other`` is ``value`` (e.g. SPDC's α mixes the weighted
    sampling's probabilities; dual_cd shrinks the rows of a permutation pass)."""

    param: str
    other: str
    value: str
    when: str | None = None

    def check(self, values: dict[str, Any]) -> None:
        """Raise ParamError naming ``param`` if ``values`` break the rule."""
        given = (
            values[self.param] is not None
            if self.when is None
            else (values[self.param] == self.when)
        )
        if given and values[self.other] != self.value:
            name = self.param if self.when is None else f"{self.param}={self.when}"
            raise ParamError(
                self.param,
                f"{name} applies to {self.other}={self.value} only; omit {self.param} "
                f"or set {self.other}={self.value}",
            )


class SupportError(ValueError):
    """A loss, penalty or loss parameter a solver does not support; ``field`` names the
    request field to change: ``"loss"``, ``"l1"`` (the penalty) or the loss parameter."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


_L1_HINT = {"elastic_net": " (l1 > 0 makes the penalty elastic_net)"}


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
    """A solver: where it lives, what it supports, its parameters."""

    name: str
    title: str
    reference: str
    module: str
    side: str  # "primal", "dual" or "batch": which iterate the trace certifies from
    losses: tuple[str, ...] = LOSSES
    penalties: tuple[str, ...] = PENALTIES
    params: tuple[Param, ...] = field(default_factory=tuple)
    rules: tuple[OnlyWith, ...] = ()  # checked by parse_params and by the solver itself
    # limits on a loss's parameters (γ), checked by check() with the loss and the penalty
    loss_params: tuple[LossParamRange, ...] = ()
    # bytes the method keeps beyond A and O(n + d) vectors: f(n, d, params, penalty)
    extra_memory: Callable[[int, int, dict[str, Any], str], float] | None = None
    # a peer (solvers/peers/): the function of ``module`` that runs it, the distribution it
    # needs, and how its trace is made: "native" (our clock between chunks), "callback"
    # (the library calls us back; our time excluded) or "refit" (one fit per budget)
    entry: str = "solve"
    requires: str | None = None
    trace_mode: str = "native"
    # whether the run's seed changes the run: always (True, the default, also for plug-ins
    # that do not say), never (False: a deterministic method, run once per objective in a
    # sweep), or for some values of a parameter only (SeedWhen)
    seeded: bool | SeedWhen = True

    def uses_seed(self, params: dict[str, Any]) -> bool:
        """Whether a run with the parsed ``params`` depends on its seed."""
        if isinstance(self.seeded, SeedWhen):
            return params.get(self.seeded.param) in self.seeded.values
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
                f"installed: {PEER_INSTALL.get(self.requires, DEFAULT_PEER_INSTALL)}"
            )
        return None

    def check(self, loss: str, penalty: str, gamma: float = 1.0) -> None:
        """Raise SupportError (naming the request field to change) if this solver does not
        support the loss, the penalty or the loss's parameter ``gamma``, or if the loss
        cannot take the penalty."""
        if loss not in self.losses:
            raise SupportError(
                "loss",
                f"solver {self.name!r} does not support loss {loss!r}; "
                f"it supports {', '.join(self.losses)}",
            )
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

    def parse_params(self, raw: dict[str, Any] | None) -> dict[str, Any]:
        """Defaults overridden by ``raw``, every value and every rule between values checked
        (ParamError naming the parameter); unknown names are errors."""
        known = {p.name: p for p in self.params}
        unknown = sorted(set(raw or {}) - set(known))
        if unknown:
            accepted = ", ".join(known) or "none"
            raise ParamError(
                unknown[0],
                f"unknown parameter {show(unknown[0])} for solver {self.name!r}; "
                f"accepted: {accepted}",
            )
        values = {p.name: p.default for p in self.params}
        for name, value in (raw or {}).items():
            values[name] = known[name].parse(self.name, value)
        self.check_rules(values)
        return values

    def changed_params(self, values: dict[str, Any]) -> dict[str, Any]:
        """The entries of ``values`` that differ from this solver's defaults."""
        defaults = {p.name: p.default for p in self.params}
        return {k: v for k, v in values.items() if k not in defaults or defaults[k] != v}

    def choice_variants(self) -> list[dict[str, Any]]:
        """The runs that select each kernel, as changes from the defaults: none, then each
        other value of each choice parameter with what the rules need beside it (dual_cd's
        ``shrinking=on`` comes with ``sampling=permutation``)."""
        defaults = self.parse_params({})
        variants: list[dict[str, Any]] = [{}]
        for param in self.params:
            for choice in param.choices:
                if choice == defaults[param.name]:
                    continue
                change = {param.name: choice}
                for rule in self.rules:
                    if rule.param == param.name and rule.when == choice:
                        if defaults[rule.other] != rule.value:
                            change[rule.other] = rule.value
                variants.append(change)
        return variants

    def check_rules(self, values: dict[str, Any]) -> None:
        """Raise ParamError if parsed ``values`` break a rule between parameters."""
        for rule in self.rules:
            rule.check(values)

    def working_bytes(
        self, n: int, d: int, nnz: int, params: dict[str, Any], penalty: str
    ) -> float:
        """A bound on the memory a run takes on an n × d matrix with ``nnz`` non-zeros: A by
        rows and by columns, the method's O(n + d) vectors, and its ``extra_memory``."""
        data = 2 * (12 * nnz + 8 * (n + d))
        vectors = 16 * 8 * (n + d)
        extra = self.extra_memory(n, d, params, penalty) if self.extra_memory else 0.0
        return data + vectors + extra

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "title": self.title,
            "reference": self.reference,
            "side": self.side,
            "losses": list(self.losses),
            "penalties": list(self.penalties),
            "params": [p.to_dict() for p in self.params],
            "loss_params": [r.to_dict() for r in self.loss_params],
            "requires": self.requires,
            "trace_mode": self.trace_mode,
            "uses_seed": self.seeded.to_dict()
            if isinstance(self.seeded, SeedWhen)
            else self.seeded,
            "available": self.unavailable_reason() is None,
            "unavailable_reason": self.unavailable_reason(),
        }


_SAMPLING = Param(
    "sampling",
    "choice",
    "uniform",
    "coordinate sampling: uniform (with replacement), importance p ∝ β‖column/row‖² + l2·n "
    "(Faceoff eq. (14)), or permutation (every coordinate once per epoch, in a fresh random "
    "order)",
    choices=("uniform", "importance", "permutation"),
)


def _lbfgs_memory(n: int, d: int, params: dict[str, Any], penalty: str) -> float:
    """L-BFGS-B's workspace, 2md + 5d + 11m² + 8m doubles (scipy's setulb), over the
    variables x (d of them, 2d for the elastic net's split x = x⁺ − x⁻)."""
    m, dim = params["memory"], (2 * d if penalty == "elastic_net" else d)
    return 8.0 * ((2 * m + 5) * dim + 11 * m * m + 8 * m)


CATALOGUE: dict[str, SolverSpec] = {
    spec.name: spec
    for spec in (
        SolverSpec(
            "primal_cd",
            "Primal randomized coordinate descent (NSync)",
            "Csiba & Richtárik, Coordinate Descent Faceoff, Algorithm 1",
            "faceoff.solvers.algorithms.primal_cd",
            "primal",
            params=(
                _SAMPLING,
                Param(
                    "step",
                    "choice",
                    "fixed",
                    "the fixed step 1/u'ⱼ of Faceoff eq. (7), or a Newton coordinate step on "
                    "the local curvature with Armijo's test (as CDN and lightning's CD): "
                    "faster for logistic on sparse data, slower for the smoothed hinge, "
                    "whose curvature jumps at its kinks (bench/README.md)",
                    choices=("fixed", "newton"),
                ),
            ),
        ),
        SolverSpec(
            "dual_cd",
            "Dual randomized coordinate ascent (Quartz / SDCA)",
            "Csiba & Richtárik, Coordinate Descent Faceoff, Algorithm 2",
            "faceoff.solvers.algorithms.dual_cd",
            "dual",
            params=(
                _SAMPLING,
                Param(
                    "step",
                    "choice",
                    "exact",
                    "exact 1-D maximization, or the fixed step η of Faceoff §7",
                    choices=("exact", "fixed"),
                ),
                Param(
                    "accelerate",
                    "choice",
                    "none",
                    "plain dual ascent, or Catalyst around it (Lin, Mairal & Harchaoui 2018): "
                    "one epoch per proximal subproblem with l2 + κ, κ = β·mean‖aᵢ‖²/(n+1) − l2, "
                    "then Nesterov's extrapolation with an adaptive restart. Much faster on "
                    "ill-conditioned problems with n ≫ d (a9a logistic, l2 = 1e-6: 32 epochs "
                    "instead of 699), slower where plain ascent is fast already (n ≪ d); the "
                    "same as none when l2 ≥ β·mean‖aᵢ‖²/(n+1)",
                    choices=("none", "catalyst"),
                ),
                Param(
                    "shrinking",
                    "choice",
                    "off",
                    "liblinear's shrinking (Hsieh et al. 2008, §3.2) for sampling=permutation: "
                    "a row whose dual variable sits at a bound of the smoothed hinge's box "
                    "and is pushed outward more than last pass's largest violation is left "
                    "out of the next passes, all rows come back once the rest is settled; "
                    "the certificate is always the full problem's. Smoothed hinge only (the "
                    "other losses' dual variables never sit at a bound: they run as off). "
                    "w8a, l2 = 1e-6: 6× faster to 1e-6 (bench/README.md)",
                    choices=("off", "on"),
                ),
            ),
            rules=(
                OnlyWith("shrinking", "sampling", "permutation", when="on"),
                OnlyWith("shrinking", "step", "exact", when="on"),
                OnlyWith("shrinking", "accelerate", "none", when="on"),
            ),
        ),
        SolverSpec(
            "agd",
            "Accelerated proximal gradient with adaptive line search",
            "Nesterov 2013, as used in Zhang & Xiao (SPDC) §7",
            "faceoff.solvers.algorithms.agd",
            "primal",
            seeded=False,
        ),
        SolverSpec(
            "lbfgs",
            "L-BFGS-B (scipy); elastic net by the bound-constrained split x = x⁺ − x⁻",
            "Nocedal & Wright §7.2; SPDC §7 (memory 30)",
            "faceoff.solvers.algorithms.lbfgs",
            "primal",
            params=(Param("memory", "int", 30, "number of stored correction pairs", 1, 1000),),
            extra_memory=_lbfgs_memory,
            seeded=False,
        ),
        SolverSpec(
            "saga",
            "SAGA with the l1 proximal step",
            "Defazio, Bach & Lacoste-Julien 2014",
            "faceoff.solvers.algorithms.saga",
            "primal",
            params=(
                Param(
                    "step_scale",
                    "float",
                    1.0,
                    "step = step_scale / (3·L_max), L_max = β·max‖aᵢ‖² + l2",
                    1e-3,
                    10.0,
                ),
            ),
        ),
        SolverSpec(
            "spdc",
            "Stochastic primal-dual coordinate method (SPDC), lazy sparse updates",
            "Zhang & Xiao, SPDC, Algorithms 1-3 and §6",
            "faceoff.solvers.algorithms.spdc",
            "primal",
            params=(
                Param(
                    "batch_size",
                    "int",
                    1,
                    "dual coordinates per iteration m: Algorithm 1 for m = 1, Algorithm 2 "
                    "(index-partition sampling of §2) otherwise",
                    1,
                    65536,
                ),
                Param(
                    "sampling",
                    "choice",
                    "uniform",
                    "uniform, or weighted (Algorithm 3, pᵢ ∝ α + ‖aᵢ‖ mixed as in eq. (25))",
                    choices=("uniform", "weighted"),
                ),
                Param("alpha", "float", None, "weighted sampling mix α; auto: eq. (25)", 0.0, 1.0),
                Param("tau", "float", None, "primal step τ; auto: eq. (12) / (24)", 1e-300, 1e300),
                Param("sigma", "float", None, "dual step σ; auto: eq. (12) / (24)", 1e-300, 1e300),
                Param("theta", "float", None, "extrapolation θ; auto: eq. (12) / (24)", 0.0, 1.0),
                Param(
                    "updates",
                    "choice",
                    "lazy",
                    "lazy: just-in-time updates of §6, O(nnz(aᵢ)) per step; dense: the same "
                    "iteration with O(d) updates (a reference for tests)",
                    choices=("lazy", "dense"),
                ),
            ),
            rules=(OnlyWith("alpha", "sampling", "weighted"),),
            # seeded even at batch_size ≥ n, where every block holds one row and the seed
            # changes nothing: the parameters do not tell n
        ),
        SolverSpec(
            "dgpd",
            "Doubly greedy primal-dual coordinate descent (DGPD)",
            "Lei, Yen, Wu, Dhillon & Ravikumar, ICML 2017, Algorithms 1-2",
            "faceoff.solvers.algorithms.dgpd",
            "primal",
            params=(
                Param(
                    "variant",
                    "choice",
                    "active_set",
                    "basic: Algorithm 1; active_set: Algorithm 2 with the sparse "
                    "implementation of §3.2",
                    choices=("active_set", "basic"),
                ),
                Param(
                    "step",
                    "choice",
                    "adaptive",
                    "dual step rule when eta is not given. theorem: η of Theorem 4.2, eq. (16), "
                    "with s = current ‖x − x̄‖₀; adaptive (variant basic): m times that η, m "
                    "doubled after a period that contracts the gap P(x) − D(y) at least at eq. "
                    "(15)'s rate and halved, back to the period's start, after one that does "
                    "not (m = 1: the theorem's η). active_set always uses eq. (16)",
                    choices=("adaptive", "theorem"),
                ),
                Param(
                    "eta",
                    "float",
                    None,
                    "fixed dual step size η (overrides step); auto: the step rule",
                    1e-300,
                    1e300,
                ),
                Param(
                    "inner_passes",
                    "int",
                    5,
                    "rounds of updates on the active sets per greedy search (Algorithm 2)",
                    1,
                    1000,
                ),
            ),
            # Algorithm 1 is greedy in both coordinates; the seed orders Algorithm 2's rounds
            seeded=SeedWhen("variant", ("active_set",)),
        ),
    )
}


# ----------------------------------------------------------------------------- peers
# Other libraries' solvers, run by the adapters of solvers/peers/ (each states its weight
# mapping once, in its docstring). They support the losses and penalties they can express
# exactly; the API refuses the others like ours.

DEFAULT_PEER_INSTALL = 'pip install "faceoff[peers]"'
PEER_INSTALL = {
    # no wheels; its sdist builds only without build isolation (bench/README.md)
    "sklearn-contrib-lightning": "pip install numpy cython 'setuptools<81' wheel && pip install "
    "--no-build-isolation sklearn-contrib-lightning (faceoff[peers] cannot carry it)",
}
_SKLEARN, _CYANURE, _LIGHTNING = "scikit-learn", "cyanure", "sklearn-contrib-lightning"


def _peer(
    name: str, title: str, reference: str, entry: str, requires: str, trace_mode: str, **kw: Any
) -> SolverSpec:
    package = {_SKLEARN: "sklearn", _CYANURE: "cyanure", _LIGHTNING: "lightning"}[requires]
    module = f"faceoff.solvers.peers.{package}"
    return SolverSpec(
        name, title, reference, module, "primal", entry=entry, requires=requires,
        trace_mode=trace_mode, **kw,
    )  # fmt: skip


def _hessian_memory(n: int, d: int, params: dict[str, Any], penalty: str) -> float:
    """newton-cholesky's d × d Hessian and its Cholesky factor."""
    return 2 * 8.0 * d * d


PEER_SPECS: tuple[SolverSpec, ...] = (
    _peer(
        "sklearn.liblinear",
        "scikit-learn LogisticRegression(solver='liblinear')",
        "Fan et al. 2008 (LIBLINEAR): Hsieh et al. 2008 (dual CD), Lin et al. 2008 (TRON)",
        "liblinear",
        _SKLEARN,
        "refit",
        losses=("logistic",),
        penalties=("l2",),  # its l1 form has no l2 term, and our l2 > 0
        params=(
            Param(
                "formulation",
                "choice",
                "dual",
                "dual: coordinate descent on the dual (dual=True); primal: trust-region "
                "Newton (dual=False)",
                choices=("dual", "primal"),
            ),
        ),
        # random_state shuffles the dual CD's coordinates; TRON is deterministic (checked
        # for every entry by tests/solvers/test_seeds.py)
        seeded=SeedWhen("formulation", ("dual",)),
    ),
    _peer(
        "sklearn.lbfgs",
        "scikit-learn LogisticRegression(solver='lbfgs')",
        "Byrd, Lu, Nocedal & Zhu 1995 (L-BFGS-B, through scipy)",
        "lbfgs",
        _SKLEARN,
        "refit",
        losses=("logistic",),
        penalties=("l2",),
        seeded=False,
    ),
    _peer(
        "sklearn.newton_cholesky",
        "scikit-learn LogisticRegression(solver='newton-cholesky')",
        "Newton's method with a Cholesky solve of the d × d Hessian",
        "newton_cholesky",
        _SKLEARN,
        "refit",
        losses=("logistic",),
        penalties=("l2",),
        extra_memory=_hessian_memory,
        seeded=False,
    ),
    _peer(
        "sklearn.sag",
        "scikit-learn LogisticRegression(solver='sag')",
        "Schmidt, Le Roux & Bach 2017 (SAG)",
        "sag",
        _SKLEARN,
        "refit",
        losses=("logistic",),
        penalties=("l2",),
    ),
    _peer(
        "sklearn.saga",
        "scikit-learn LogisticRegression(solver='saga')",
        "Defazio, Bach & Lacoste-Julien 2014 (SAGA)",
        "saga",
        _SKLEARN,
        "refit",
        losses=("logistic",),
        penalties=("l2", "elastic_net"),
    ),
    _peer(
        "sklearn.ridge",
        "scikit-learn Ridge (squared loss, l2)",
        "scikit-learn Ridge: LSQR (Paige & Saunders 1982), SAG, SAGA, Cholesky",
        "ridge",
        _SKLEARN,
        "refit",
        losses=("squared",),
        penalties=("l2",),
        params=(
            Param(
                "solver",
                "choice",
                "lsqr",
                "Ridge's solver; cholesky is direct (one fit, no budget)",
                choices=("lsqr", "sag", "saga", "cholesky"),
            ),
        ),
        seeded=SeedWhen("solver", ("sag", "saga")),  # random_state: sag and saga only
    ),
    _peer(
        "sklearn.elastic_net",
        "scikit-learn ElasticNet (cyclic coordinate descent)",
        "Friedman, Hastie & Tibshirani 2010 (glmnet's coordinate descent)",
        "elastic_net",
        _SKLEARN,
        "refit",
        losses=("squared",),
        seeded=False,  # random_state applies to selection="random"; the adapter keeps cyclic
    ),
    _peer(
        "cyanure",
        "Cyanure (MISO, Catalyst, QNing, SVRG)",
        "Mairal 2019, Cyanure; Lin, Mairal & Harchaoui 2018 (Catalyst, QNing)",
        "solve",
        _CYANURE,
        "refit",
        losses=("logistic", "squared"),
        params=(
            Param(
                "solver",
                "choice",
                "catalyst-miso",
                "Cyanure's solver",
                choices=("catalyst-miso", "miso", "qning-ista", "svrg"),
            ),
        ),
        # MISO and SVRG sample the data; QNing over ISTA takes full gradients
        seeded=SeedWhen("solver", ("catalyst-miso", "miso", "svrg")),
    ),
    # lightning's four use random_state (seeded, the default; 0.6.2's sources): SDCA shuffles
    # the rows each pass (sdca_fast.pyx), CD permutes the columns each pass (permute=True,
    # primal_cd_fast.pyx), SAGA and SVRG draw rows (sag_fast.pyx, svrg_fast.pyx)
    _peer(
        "lightning.sdca",
        "lightning SDCAClassifier / SDCARegressor",
        "Shalev-Shwartz & Zhang 2013 (prox-SDCA)",
        "sdca",
        _LIGHTNING,
        "callback",
        losses=("smooth_hinge", "squared"),
    ),
    _peer(
        "lightning.cd",
        "lightning CDClassifier / CDRegressor (primal coordinate descent)",
        "Chang, Hsieh & Lin 2008; Yuan et al. 2012 (primal CD, Newton steps)",
        "cd",
        _LIGHTNING,
        "callback",
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
        _LIGHTNING,
        "callback",
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
        _LIGHTNING,
        "callback",
        losses=("logistic", "smooth_hinge", "squared"),
        penalties=("l2",),
        params=(
            Param(
                "step_scale",
                "float",
                0.25,
                "step η = step_scale / L_max, L_max = β·max‖aᵢ‖² + l2",
                1e-3,
                1.0,
            ),
        ),
    ),
)
CATALOGUE.update({spec.name: spec for spec in PEER_SPECS})

# The plug-ins' solvers join the catalogue (solvers.plugins); the broken ones are reported.
PLUGINS, BROKEN_PLUGINS = discover(CATALOGUE)
CATALOGUE.update(PLUGINS)


def get_spec(name: str) -> SolverSpec:
    """The spec of solver ``name``; ValueError listing the accepted names otherwise."""
    if name not in CATALOGUE:
        raise ValueError(f"unknown solver {name!r}; accepted: {', '.join(CATALOGUE)}")
    return CATALOGUE[name]
