"""Job and sweep specifications: validation against the solver catalogue, canonical hashes.

A job spec names a dataset (registered, or a public registry name), the transforms, the
objective (loss, γ, l1, l2), the solver with its parameters, a seed and the stop rules.
:func:`canonical_job` fills in every default so that two requests that mean the same run
have the same :func:`spec_hash`; the seed of a solver that does not use it with these
parameters (``SolverSpec.uses_seed``) becomes None, so that lbfgs with seed 0 and with seed
2 is one job. ``repeat`` k ≥ 1 marks the k-th timing repeat of an otherwise identical job
(a rerun that measures timing noise, e.g. of a deterministic solver in a sweep with
``timing_repeats``).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
from dataclasses import asdict
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    StrictBool,
    ValidationInfo,
    field_validator,
    model_validator,
)

from faceoff.core.machine import HOST_MAX_LENGTH, HOST_PATTERN
from faceoff.solvers.catalogue import broken_plugins, catalogue, warm_start_error
from faceoff.solvers.integers import int_text
from faceoff.solvers.spec import ParamError, SupportError, show
from faceoff.solvers.vocabulary import (
    LOSS_NAMES,
    MULTICLASS_NAMES,
    NORMALIZATION_NAMES,
    PATH_LAMBDAS,
    PATH_MAX_LAMBDAS,
    PATH_RATIO,
    PENALTY_NAMES,
    SMOOTHED_LOSS_NAMES,
    form_error,
    penalty_name,
)

# the names of solvers.vocabulary, as pydantic Literals (enums in the OpenAPI schema)
Loss = Literal[LOSS_NAMES]  # type: ignore[valid-type]
Normalize = Literal[NORMALIZATION_NAMES]  # type: ignore[valid-type]
Penalty = Literal[PENALTY_NAMES]  # type: ignore[valid-type]
Multiclass = Literal[MULTICLASS_NAMES]  # type: ignore[valid-type]

NO_PENALTY = (
    "l1 and l2 are both 0: the problem has no penalty (and may have no minimizer); give "
    "l2 > 0, or l1 > 0 with l2 = 0 for the Lasso or l1-logistic regression"
)


class SpecError(ValueError):
    """An invalid request: ``loc`` is the path of the offending field, as in a 422 body."""

    def __init__(self, loc: tuple[str | int, ...], message: str) -> None:
        super().__init__(message)
        self.loc = loc
        self.message = message


# control characters (C0, DEL, C1) and lone surrogates, which no UTF-8 encoder accepts
_NOT_TEXT = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def check_text(value: str) -> str:
    """``value`` if it is printable text; ValueError naming the first control character or
    lone surrogate (a database, a hash or a JSON response could not encode it) otherwise."""
    found = _NOT_TEXT.search(value)
    if found is None:
        return value
    char = found.group()
    kind = "a lone surrogate" if "\ud800" <= char <= "\udfff" else "a control character"
    raise ValueError(
        f"contains {kind} (U+{ord(char):04X}) at position {found.start()}; use printable UTF-8 text"
    )


def check_text_at(value: str, loc: tuple[str | int, ...]) -> None:
    """SpecError at ``loc`` unless ``value`` is printable text (:func:`check_text`)."""
    try:
        check_text(value)
    except ValueError as err:
        raise SpecError(loc, f"{loc[-1] if loc else 'value'} {err}") from None


def _text_input(value: Any) -> Any:
    return check_text(value) if isinstance(value, str) else value


# a string field of a request: printable text only (see check_text)
Text = Annotated[str, BeforeValidator(_text_input)]
# the worker host a job or sweep is pinned to (core.machine.host_queue)
Host = Annotated[
    str,
    Field(
        min_length=1,
        max_length=HOST_MAX_LENGTH,
        pattern=HOST_PATTERN,
        description="run on this worker host only (a host name as GET /health lists them: "
        "letters, digits, '-', '_', dot-separated labels); default: any worker",
    ),
]
# an integer field of a JSON body: a JSON integer only, not true, 3.0 or "3"
# (solvers.integers, whose rule solver parameters follow too)
JsonInt = Annotated[int, Strict()]


def _integer_text(value: Any) -> Any:
    return int_text(value) if isinstance(value, str) else value


# an integer of a query string, path, header or form field: ASCII digits 0-9 with an optional
# minus only, not "3_0", "٣٠", " 3" or "+3" (solvers.integers.int_text)
TextInt = Annotated[int, BeforeValidator(_integer_text)]
# a float field of a request: JSON's NaN, Infinity and overflowing literals (1e400) refused
FiniteFloat = Annotated[float, Field(allow_inf_nan=False)]

# The range of the smoothed hinge's γ. The kernels divide by γ on the loss's quadratic piece,
# φ'(z) = −b(1 − bz)/γ for 1 − γ < bz < 1 (solvers/losses.py: loss_value, loss_deriv, the
# curvature 1/γ of loss_derivs12, the dual step's (…)/(γ + 1/s)), and through the smoothness
# β = 1/γ that sets every step size (SPDC's √(nλ/(mγ)) and κ = R²/(λγ), the 1/β steps of the
# primal methods). Near the kink 1 − bz is known to within ε = 2.2e-16, so φ' carries an
# error of ε/γ: 2.2e-10 at γ = 1e-6, the order of the default tolerance on the relative gap
# (1e-10). Below it the certified gap is rounding noise, the primal methods' steps (∝ γ)
# vanish, and a subnormal γ makes β infinite (SPDC divided by λ·(1/β) = 0).
GAMMA_MIN = 1e-6
GAMMA_MAX = 1e6


def check_gamma(value: float) -> float:
    """``value`` if it is a usable γ (finite, in [GAMMA_MIN, GAMMA_MAX]); ValueError naming
    gamma and the accepted range otherwise."""
    if not (math.isfinite(value) and GAMMA_MIN <= value <= GAMMA_MAX):
        why = (
            f": the kernels divide by gamma, and below {GAMMA_MIN:g} the rounding error of "
            "the loss's derivative (2.2e-16/gamma) exceeds the gap a trace certifies"
            if value < GAMMA_MIN
            else ""
        )
        raise ValueError(f"gamma must be in [{GAMMA_MIN:g}, {GAMMA_MAX:g}], got {value!r}{why}")
    return value


# the smoothing γ of a request (see GAMMA_MIN)
Gamma = Annotated[
    float,
    Field(
        allow_inf_nan=False,
        description=f"smoothing of {', '.join(SMOOTHED_LOSS_NAMES)}, in "
        f"[{GAMMA_MIN:g}, {GAMMA_MAX:g}]",
    ),
    AfterValidator(check_gamma),
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _finite(value: float) -> float:
    if not math.isfinite(value):
        raise ValueError("must be a finite number")
    return value


class StopSpec(_Strict):
    """Stop rules: whichever comes first."""

    max_epochs: float = Field(100.0, gt=0, le=1e7, description="passes over the data")
    max_seconds: float = Field(60.0, gt=0, le=86400, description="solver time, seconds")
    tol: float = Field(1e-10, ge=0, lt=1, description="relative duality gap")

    _check_finite = field_validator("max_epochs", "max_seconds", "tol")(_finite)


PositiveWeight = Annotated[float, Field(gt=0, le=1e6, allow_inf_nan=False)]


class PathSpec(_Strict):
    """A regularization path: the job solves the l1 weights of a grid in turn, each from the
    previous one's solution (solvers.path). The grid is ``lambdas`` as given, or
    λ_max·geomspace(1, ``ratio``, ``n_lambdas``) with λ_max computed from the data."""

    n_lambdas: JsonInt | None = Field(
        None,
        ge=2,
        le=PATH_MAX_LAMBDAS,
        description=f"λs of the default grid (default {PATH_LAMBDAS})",
    )
    ratio: float | None = Field(
        None,
        gt=0,
        lt=1,
        allow_inf_nan=False,
        description=f"smallest λ ÷ λ_max of the default grid (default {PATH_RATIO:g})",
    )
    lambdas: list[PositiveWeight] | None = Field(
        None,
        min_length=1,
        max_length=PATH_MAX_LAMBDAS,
        description="the l1 weights themselves, solved in this order (instead of n_lambdas "
        "and ratio)",
    )

    @model_validator(mode="after")
    def _one_grid(self) -> PathSpec:
        if self.lambdas is not None and (self.n_lambdas is not None or self.ratio is not None):
            raise ValueError(
                "give the grid as lambdas, or as n_lambdas and ratio (λ_max from the data), "
                "not both"
            )
        if self.lambdas is None:
            self.n_lambdas = PATH_LAMBDAS if self.n_lambdas is None else self.n_lambdas
            self.ratio = PATH_RATIO if self.ratio is None else self.ratio
        return self


PATH_L1 = (
    "l1 is what a path varies: leave it out (0) and give the grid in path (lambdas, or "
    "n_lambdas and ratio)"
)


class ObjectiveSpec(_Strict):
    """What is minimized: the data (after transforms), the loss and the penalty weights."""

    dataset: Text = Field(min_length=1, max_length=200, description="registered dataset name")
    normalize: Normalize = Field(
        "none", description=f"row scaling: {', '.join(NORMALIZATION_NAMES)}"
    )
    positive: list[FiniteFloat] | None = Field(
        None, max_length=1000, description="classes mapped to +1 (multiclass data)"
    )
    loss: Loss
    gamma: Gamma = 1.0
    path: PathSpec | None = Field(
        None,
        description="a regularization path over l1 (l2 fixed): the λ grid, each λ solved to "
        "the stop rules' tol and max_epochs from the previous solution, max_seconds for the "
        "whole path; absent: one l1",
    )
    l2: float = Field(
        ge=0,
        le=1e6,
        description="l2 weight: l2/2·‖x‖² (0 with l1 > 0: the Lasso, l1-logistic; solvers "
        "that need strong convexity refuse it)",
    )
    l1: float = Field(
        0.0,
        ge=0,
        le=1e6,
        validate_default=True,  # l2 = 0 with l1 left out is a 422 at l1 too
        description="l1 weight: l1·‖x‖₁ (elastic net if > 0)",
    )
    multiclass: Multiclass | None = Field(
        None,
        description="a K-class problem on the labels as read: ovr (one-vs-rest, K binary "
        "problems summed, any loss) or multinomial (softmax cross-entropy, logistic loss); "
        "absent: a binary or regression problem",
    )
    fit_intercept: StrictBool = Field(
        False,
        description="an unpenalized intercept c: 1/n Σ φ(aᵢᵀx + c, bᵢ) + g(x) (binary and "
        "regression problems; the solvers that fit one: GET /solvers, intercept)",
    )

    _check_finite = field_validator("l2", "l1")(_finite)

    @field_validator("l1")
    @classmethod
    def _some_penalty(cls, l1: float, info: ValidationInfo) -> float:
        # a 422 at l1 (path and l2 are declared, so validated, before it); a path that
        # failed its own checks is absent here, and its 422 says all there is to say
        if "path" not in info.data:
            return l1
        if info.data["path"] is not None:
            if l1 != 0:
                raise ValueError(PATH_L1)
            return l1
        if l1 == 0 and info.data.get("l2") == 0:
            raise ValueError(NO_PENALTY)
        return l1

    @field_validator("multiclass")
    @classmethod
    def _one_kind_of_labels(cls, multiclass: str | None, info: ValidationInfo) -> str | None:
        # a 422 at multiclass (positive is declared, so validated, before it)
        if multiclass is not None and info.data.get("positive") is not None:
            raise ValueError(
                "positive makes a binary problem and multiclass a K-class one: give one of them"
            )
        return multiclass

    @field_validator("fit_intercept")
    @classmethod
    def _binary_intercept(cls, fit_intercept: bool, info: ValidationInfo) -> bool:
        if fit_intercept and info.data.get("multiclass") is not None:
            raise ValueError(
                "fit_intercept is for binary and regression problems, not multiclass "
                f"{info.data['multiclass']!r}"
            )
        return fit_intercept

    @property
    def penalty(self) -> str:
        """The penalty's name (a path's: that of its l1 weights > 0)."""
        return penalty_name(1.0 if self.path is not None else self.l1, self.l2)


# the largest share of the rows a random hold-out may take (the solver trains on the rest)
TEST_FRACTION_MAX = 0.9


class RegistrySplit(_Strict):
    """The dataset's own test split, as the registry names it (``a9a`` → ``a9a.t``)."""

    split: Literal["registry"]


class RandomSplit(_Strict):
    """A seeded random hold-out of the dataset's rows: the solver trains on the others, so
    the objective is not the whole dataset's (it has its own objective hash)."""

    split: Literal["random"]
    fraction: Annotated[float, Strict()] = Field(
        gt=0,
        le=TEST_FRACTION_MAX,
        allow_inf_nan=False,
        description=f"share of the rows held out, in (0, {TEST_FRACTION_MAX:g}]",
    )
    seed: JsonInt = Field(0, ge=0, le=2**31 - 1, description="seed of the rows drawn")


class DatasetSplit(_Strict):
    """Another registered dataset (an upload, a public name) as the test set: the same
    transforms and label mapping, its missing features read as 0; one with more features
    than the training data is refused."""

    split: Literal["dataset"]
    dataset: Text = Field(min_length=1, max_length=200, description="its registered name")


TestSplit = Annotated[RegistrySplit | RandomSplit | DatasetSplit, Field(discriminator="split")]


def _binary_test(test: TestSplit | None, info: ValidationInfo) -> TestSplit | None:
    """A 422 at test for a K-class problem (multiclass is declared, so validated, before
    it)."""
    if test is not None and info.data.get("multiclass") is not None:
        raise ValueError(
            "held-out metrics are for binary and regression problems, not multiclass "
            f"{info.data['multiclass']!r}"
        )
    return test


class JobSpec(ObjectiveSpec):
    """One run of one solver."""

    solver: Text = Field(min_length=1, max_length=64)
    params: dict[Text, Any] = Field(default_factory=dict)
    seed: JsonInt | None = Field(
        0,
        ge=0,
        le=2**31 - 1,
        description="seed of a randomized solver; null (stored for any value given) when the "
        "solver does not use it with these parameters (GET /solvers: uses_seed)",
    )
    repeat: JsonInt = Field(
        0,
        ge=0,
        le=1000,
        description="timing repeat: k ≥ 1 reruns an otherwise identical job to measure "
        "timing noise (0: the job itself)",
    )
    stop: StopSpec = Field(default_factory=StopSpec)
    host: Host | None = None
    test: TestSplit | None = Field(
        None,
        description="held-out metrics at every trace point (test loss, and accuracy or R²): "
        'the registry\'s test split of the dataset ({"split": "registry"}) or a seeded '
        'random hold-out of its rows ({"split": "random", "fraction": 0.2, "seed": 0}, '
        'the solver then trains on the rest) or another dataset ({"split": "dataset", '
        '"dataset": "my-test-upload"}); binary and regression problems; absent: none',
    )

    _binary_test = field_validator("test")(_binary_test)

    def objective(self) -> ObjectiveSpec:
        return ObjectiveSpec(**self.model_dump(include=set(ObjectiveSpec.model_fields)))

    @property
    def solver_seed(self) -> int:
        """The seed handed to the solver (0 when it uses none)."""
        return 0 if self.seed is None else self.seed


def check_solver(
    solver: str,
    loss: str,
    penalty: str,
    params: dict[str, Any],
    loc: tuple[str | int, ...] = (),
    gamma: float = 1.0,
    multiclass: str | None = None,
    intercept: bool = False,
) -> Any:
    """The solver's typed parameters (its ``Params``), defaults filled in; SpecError naming
    the field otherwise (the spec's checks: :meth:`SolverSpec.check` and
    :meth:`SolverSpec.parse_params`, the one check a request's parameters get)."""
    specs = catalogue()
    spec = specs.get(solver)
    broken = {plugin.name: plugin for plugin in broken_plugins()}
    if spec is None and solver in broken:
        plugin = broken[solver]
        raise SpecError(
            (*loc, "solver"), f"broken plug-in {solver} ({plugin.distribution}): {plugin.error}"
        )
    if spec is None:
        raise SpecError(
            (*loc, "solver"), f"unknown solver {show(solver)}; accepted: {', '.join(specs)}"
        )
    try:
        spec.check(loss, penalty, gamma, multiclass, intercept)
    except SupportError as err:
        raise SpecError((*loc, err.field), str(err)) from None
    try:
        return spec.parse_params(params)
    except ParamError as err:
        raise SpecError((*loc, "params", err.param), str(err)) from None


def canonical_job(spec: JobSpec, loc: tuple = ()) -> JobSpec:
    """The spec with every solver parameter parsed and defaulted (stored as the dict of the
    solver's ``Params``); SpecError if invalid."""
    params = check_solver(
        spec.solver,
        spec.loss,
        spec.penalty,
        spec.params,
        loc,
        spec.gamma,
        spec.multiclass,
        spec.fit_intercept,
    )
    unwarmed = warm_start_error(spec.solver) if spec.path is not None else None
    if unwarmed is not None:
        raise SpecError((*loc, "solver"), unwarmed)
    positive = sorted(set(spec.positive)) if spec.positive is not None else None
    seed = spec.solver_seed if catalogue()[spec.solver].uses_seed(params) else None
    update = {"params": asdict(params), "positive": positive, "seed": seed}
    return spec.model_copy(update=update)


def _digest(payload: dict) -> str:
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


# fields stored and hashed only when set, so that specs and hashes made before they existed
# stay the same: an unpinned job (host), a binary or regression problem (multiclass), no
# intercept (fit_intercept false), no held-out metrics (test), one l1 (path)
_OMITTED_WHEN_NONE = ("host", "multiclass", "test", "path")
_OMITTED_WHEN_FALSE = ("fit_intercept",)


def dump_spec(spec: JobSpec | SweepSpec) -> dict[str, Any]:
    """The spec as stored and hashed: JSON values, without ``host`` when it is not pinned,
    ``multiclass`` when the problem is not K-class and ``test`` when no held-out metrics
    are asked for (so specs and hashes from before any existed stay the same)."""
    payload = spec.model_dump(mode="json")
    for name in _OMITTED_WHEN_NONE:
        if payload.get(name) is None:
            payload.pop(name, None)
    for name in _OMITTED_WHEN_FALSE:
        if payload.get(name) is False:
            payload.pop(name, None)
    return payload


def spec_hash(spec: JobSpec) -> str:
    """Hash of a canonical job spec: identical submissions have identical hashes (a job
    pinned to a host differs from the same job anywhere; ``repeat`` counts only when ≥ 1,
    so the hashes of jobs made before either existed still match)."""
    payload = dump_spec(spec)
    if not spec.repeat:
        payload.pop("repeat", None)
    return _digest(payload)


def objective_hash(spec: ObjectiveSpec) -> str:
    """Hash of the objective alone: jobs with the same hash share P*. A job's random
    hold-out counts (its solver trains on the other rows); the registry's test split does
    not (the training data is the whole dataset)."""
    payload = spec.model_dump(mode="json", include=set(ObjectiveSpec.model_fields))
    for name in ("multiclass", "path"):
        if payload.get(name) is None:
            payload.pop(name, None)
    if payload.get("fit_intercept") is False:
        payload.pop("fit_intercept", None)
    if isinstance(spec, JobSpec) and isinstance(spec.test, RandomSplit):
        payload["test"] = spec.test.model_dump(mode="json")
    return _digest(payload)


class SolverChoice(_Strict):
    """A solver in a sweep; each parameter is a value or a list of values to sweep over."""

    solver: Text = Field(min_length=1, max_length=64)
    params: dict[Text, Any] = Field(default_factory=dict)


class SweepSpec(_Strict):
    """The cartesian product datasets × losses × l2 × l1 × solver settings × seeds."""

    name: Text | None = Field(None, max_length=200)
    datasets: list[Annotated[Text, Field(min_length=1, max_length=200)]] = Field(
        min_length=1, max_length=1000
    )
    normalize: Normalize = "none"
    positive: list[FiniteFloat] | None = Field(None, max_length=1000)
    losses: list[Loss] = Field(min_length=1, max_length=len(LOSS_NAMES))
    gamma: Gamma = 1.0
    l2: list[Annotated[float, Field(ge=0, le=1e6, allow_inf_nan=False)]] = Field(
        min_length=1,
        max_length=1000,
        description="l2 weights; 0 pairs with the l1 weights > 0 only (the Lasso, "
        "l1-logistic), and the solvers that need l2 > 0 skip those objectives",
    )
    l1: list[Annotated[float, Field(ge=0, le=1e6, allow_inf_nan=False)]] = Field(
        [0.0], min_length=1, max_length=1000, validate_default=True
    )
    solvers: list[SolverChoice | Annotated[Text, Field(min_length=1, max_length=64)]] = Field(
        min_length=1, max_length=1000
    )
    seeds: list[Annotated[JsonInt, Field(ge=0, le=2**31 - 1)]] = Field(
        [0], min_length=1, max_length=1000
    )
    timing_repeats: bool = Field(
        False,
        description="run a solver setting that does not use the seed once per seed too, as "
        "timing repeats (repeat 1, 2, …) that measure timing noise; by default it runs once "
        "per objective",
    )
    stop: StopSpec = Field(default_factory=StopSpec)
    host: Host | None = Field(
        None, description="run every job of the sweep on this worker host (comparable times)"
    )
    multiclass: list[Multiclass] | None = Field(
        None,
        min_length=1,
        max_length=len(MULTICLASS_NAMES),
        description="K-class forms to sweep over (ovr, multinomial); each solver runs the "
        "forms it and the loss support (the others are counted as skipped); absent: binary "
        "or regression problems",
    )
    fit_intercept: StrictBool = Field(
        False,
        description="every objective with an unpenalized intercept (binary and regression "
        "problems); the solvers that fit none are skipped (counted as skipped)",
    )
    test: TestSplit | None = Field(
        None,
        description="held-out metrics at every trace point of every job, as a job's test "
        "(the registry's test split of each dataset, a seeded random hold-out of its "
        "rows, or another dataset); binary and regression problems; absent: none",
    )

    @field_validator("l1")
    @classmethod
    def _some_penalty(cls, l1: list[float], info: ValidationInfo) -> list[float]:
        if 0 in l1 and 0 in (info.data.get("l2") or ()):
            raise ValueError(f"the grid pairs l2 = 0 with l1 = 0: {NO_PENALTY}")
        return l1

    @field_validator("multiclass")
    @classmethod
    def _one_kind_of_labels(
        cls, multiclass: list[str] | None, info: ValidationInfo
    ) -> list[str] | None:
        if multiclass is not None and info.data.get("positive") is not None:
            raise ValueError(
                "positive makes binary problems and multiclass K-class ones: give one of them"
            )
        if multiclass is not None and len(set(multiclass)) != len(multiclass):
            raise ValueError("multiclass lists a form twice")
        return multiclass

    @field_validator("fit_intercept")
    @classmethod
    def _binary_intercept(cls, fit_intercept: bool, info: ValidationInfo) -> bool:
        if fit_intercept and info.data.get("multiclass") is not None:
            raise ValueError("fit_intercept is for binary and regression problems, not multiclass")
        return fit_intercept

    _binary_test = field_validator("test")(_binary_test)

    def forms(self) -> list[str | None]:
        """The K-class forms of the sweep's objectives ([None]: binary or regression)."""
        return list(self.multiclass) if self.multiclass is not None else [None]

    def solver_choices(self) -> list[SolverChoice]:
        return [SolverChoice(solver=s) if isinstance(s, str) else s for s in self.solvers]

    def penalties(self) -> list[str]:
        """The penalty of each (l2, l1) pair of the grid, l2 major."""
        return [penalty_name(l1, l2) for l2 in self.l2 for l1 in self.l1]

    def n_objectives(self) -> int:
        return (
            len(self.datasets) * len(self.losses) * len(self.forms()) * len(self.l2) * len(self.l1)
        )


def _settings_of(choice: SolverChoice) -> list[dict[str, Any]]:
    names = list(choice.params)
    values = [v if isinstance(v, list) else [v] for v in choice.params.values()]
    return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*values)]


def _canonical(value: Any) -> str:
    """A value's canonical text: JSON with sorted keys (0.01 and 1e-2 are one float; 1,
    1.0 and true stay three values)."""
    return json.dumps(value, sort_keys=True)


def _unique(values: list[Any]) -> tuple[list[Any], int]:
    """(``values`` without repeats of a canonical value, first occurrences in order, how
    many were dropped)."""
    seen: set[str] = set()
    kept = []
    for value in values:
        key = _canonical(value)
        if key not in seen:
            seen.add(key)
            kept.append(value)
    return kept, len(values) - len(kept)


SWEEP_AXES = ("datasets", "losses", "l2", "l1", "seeds")


def dedupe_sweep(sweep: SweepSpec) -> tuple[SweepSpec, dict[str, int]]:
    """(the sweep with every axis free of repeated values, {axis: values dropped} for the
    axes that had some; ``"solvers"`` counts solver settings).

    An axis is a list of values; two are one when their canonical JSON is (:func:`_canonical`:
    ``[0, 0, 0]``, ``[0.01, 1e-2]``). A solver's parameter lists are deduplicated the same
    way, and a solver choice repeated whole is dropped. Lists no setting (the sizes are not
    checked yet): settings of different choices that are equal once parsed with their
    defaults (``"spdc"`` and ``{"solver": "spdc", "params": {"batch_size": 1}}``) are
    skipped when the sweep expands (:func:`unique_settings`). Seeds count as values too:
    ``seeds: [0, 0, 0]`` with ``timing_repeats`` is one repeat, not three.
    """
    updates: dict[str, Any] = {}
    dropped: dict[str, int] = {}
    for axis in SWEEP_AXES:
        kept, count = _unique(getattr(sweep, axis))
        if count:
            updates[axis], dropped[axis] = kept, count
    choices: list[SolverChoice | str] = []
    seen: set[str] = set()
    for choice in sweep.solvers:
        if isinstance(choice, SolverChoice):
            params = {
                k: _unique(v)[0] if isinstance(v, list) else v for k, v in choice.params.items()
            }
            choice = choice.model_copy(update={"params": params})
            key = _canonical([choice.solver, params])
        else:
            key = _canonical([choice, {}])
        if key not in seen:
            seen.add(key)
            choices.append(choice)
    if choices != sweep.solvers:
        updates["solvers"] = choices
    deduped = sweep.model_copy(update=updates)
    if settings_dropped := n_settings(sweep) - n_settings(deduped):
        dropped["solvers"] = settings_dropped
    return deduped, dropped


def _setting_key(solver: str, params: dict[str, Any]) -> str:
    """What identifies a solver setting: its parameters parsed with their defaults (the raw
    ones when they do not parse: expand_sweep then names the error)."""
    spec = catalogue().get(solver)
    if spec is not None:
        try:
            params = asdict(spec.parse_params(params))
        except ParamError:
            pass
    return _canonical([solver, params])


def unique_settings(sweep: SweepSpec) -> tuple[list[tuple[int, str, dict[str, Any]]], int]:
    """([(choice index, solver, raw parameters)] of the sweep's settings, each distinct
    setting once, in order; how many repeats were skipped). Lists every setting: check
    :func:`n_settings` first."""
    seen: set[str] = set()
    settings = []
    for index, choice in enumerate(sweep.solver_choices()):
        for params in _settings_of(choice):
            key = _setting_key(choice.solver, params)
            if key not in seen:
                seen.add(key)
                settings.append((index, choice.solver, params))
    return settings, n_settings(sweep) - len(settings)


def _seeded(solver: str, params: dict[str, Any]) -> bool:
    """Whether ``solver`` with the raw ``params`` uses the seed; True when either is invalid
    (expand_sweep then names the error)."""
    spec = catalogue().get(solver)
    if spec is None:
        return True
    try:
        return spec.uses_seed(spec.parse_params(params))
    except ParamError:
        return True


def _supported(
    solver: str, loss: str, multiclass: str | None, penalty: str, intercept: bool = False
) -> bool:
    """Whether ``solver`` (if known) and ``loss`` take the K-class form ``multiclass``, and
    the solver the penalty l1 (l2 = 0) if that is ``penalty``: a sweep's combination that
    does not is skipped, not an error (a solver that needs strong convexity skips the
    grid's l2 = 0). True for a binary or regression objective (None) with l2 > 0, and for
    an unknown solver (expand_sweep names that error)."""
    spec = catalogue().get(solver)
    if spec is None:
        return form_error(loss, multiclass) is None
    return (
        spec.takes(loss, multiclass)
        and (penalty != "l1" or "l1" in spec.penalties)
        and (spec.intercept or not intercept)
    )


def _objectives(sweep: SweepSpec, solver: str) -> tuple[int, int]:
    """(objectives ``solver`` runs on, objectives it skips for want of a K-class form or
    of l2 > 0)."""
    combos = list(itertools.product(sweep.losses, sweep.forms(), sweep.penalties()))
    runs = sum(_supported(solver, *combo, sweep.fit_intercept) for combo in combos)
    return runs * len(sweep.datasets), (len(combos) - runs) * len(sweep.datasets)


def n_settings(sweep: SweepSpec) -> int:
    """Number of solver settings of the sweep (computed without listing them)."""
    return sum(
        math.prod(len(v) if isinstance(v, list) else 1 for v in c.params.values())
        for c in sweep.solver_choices()
    )


def least_jobs(sweep: SweepSpec) -> int:
    """A lower bound on the jobs of the sweep, computed without listing its settings: each
    setting once per objective it runs on."""
    return sum(
        math.prod(len(v) if isinstance(v, list) else 1 for v in c.params.values())
        * _objectives(sweep, c.solver)[0]
        for c in sweep.solver_choices()
    )


def jobs_per_solver(sweep: SweepSpec) -> dict[str, dict[str, int]]:
    """{solver: {"jobs", "seeded", "unseeded", "timing_repeats"}}: how many jobs the sweep
    has of each solver, in all and of each kind — runs with each of the sweep's seeds,
    runs of a setting that uses no seed (once per objective), and timing repeats of those
    (``timing_repeats``). Lists every setting: check :func:`n_settings` first."""
    seeds = len(sweep.seeds)
    out: dict[str, dict[str, int]] = {}
    for choice in sweep.solver_choices():
        out.setdefault(
            choice.solver,
            {"jobs": 0, "seeded": 0, "unseeded": 0, "timing_repeats": 0, "skipped": 0},
        )
    for _, solver, params in unique_settings(sweep)[0]:
        counts = out[solver]
        objectives, skipped = _objectives(sweep, solver)
        counts["skipped"] += skipped
        if _seeded(solver, params):
            counts["seeded"] += objectives * seeds
        else:
            counts["unseeded"] += objectives
            counts["timing_repeats"] += objectives * (seeds - 1) * int(sweep.timing_repeats)
    for counts in out.values():
        counts["jobs"] = counts["seeded"] + counts["unseeded"] + counts["timing_repeats"]
    return out


def sweep_size(sweep: SweepSpec) -> int:
    """Number of jobs the sweep expands to (lists its settings, not its jobs)."""
    return sum(counts["jobs"] for counts in jobs_per_solver(sweep).values())


def _runs(sweep: SweepSpec, seeded: bool) -> list[tuple[int | None, int]]:
    """(seed, repeat) of the jobs of one setting and objective."""
    if seeded:
        return [(seed, 0) for seed in sweep.seeds]
    return [(None, k) for k in range(len(sweep.seeds) if sweep.timing_repeats else 1)]


def expand_sweep(sweep: SweepSpec) -> list[JobSpec]:
    """The canonical job specs of a sweep; SpecError naming the first invalid combination.

    A setting that uses the seed runs once per seed and objective; one that does not, once
    per objective, or once per seed as timing repeats (``timing_repeats``). A setting equal
    to an earlier one once parsed runs once (:func:`unique_settings`); the axes are
    deduplicated by :func:`dedupe_sweep` before."""
    jobs = []
    for index, solver, params in unique_settings(sweep)[0]:
        runs = _runs(sweep, _seeded(solver, params))
        for dataset, loss, form, l2, l1, (seed, repeat) in itertools.product(
            sweep.datasets, sweep.losses, sweep.forms(), sweep.l2, sweep.l1, runs
        ):
            if not _supported(solver, loss, form, penalty_name(l1, l2), sweep.fit_intercept):
                continue
            try:
                spec = JobSpec(
                    dataset=dataset,
                    normalize=sweep.normalize,
                    positive=sweep.positive,
                    loss=loss,
                    gamma=sweep.gamma,
                    l2=l2,
                    l1=l1,
                    solver=solver,
                    params=params,
                    seed=seed,
                    repeat=repeat,
                    stop=sweep.stop,
                    host=sweep.host,
                    multiclass=form,
                    fit_intercept=sweep.fit_intercept,
                    test=sweep.test,
                )
            except ValueError as err:  # pydantic ValidationError (a weight out of range)
                raise SpecError(("l2",), f"invalid combination: {err}") from None
            jobs.append(canonical_job(spec, loc=("solvers", index)))
    return jobs
