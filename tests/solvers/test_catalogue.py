"""The catalogue finds every solver and validates requests without importing Numba; a
solver's parameters are a typed, frozen dataclass checked once."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import asdict, dataclass, fields

import pytest

from faceoff.core.specs import SpecError, check_solver
from faceoff.solvers import catalogue as registry
from faceoff.solvers.catalogue import RegistrationError, catalogue, get_spec
from faceoff.solvers.spec import (
    LossParamRange,
    NoParams,
    OnlyWith,
    Param,
    ParamError,
    SolverSpec,
    SupportError,
    param,
)
from faceoff.solvers.vocabulary import LOSS_NAMES, PENALTY_NAMES


def test_catalogue_imports_no_numba(tmp_path):
    """Neither importing the catalogue nor discovering it (every spec module) imports Numba,
    and importing it discovers nothing."""
    code = (
        "import sys; from faceoff.solvers.catalogue import catalogue; "
        "assert 'faceoff.solvers.algorithms' not in sys.modules; "
        "assert len(catalogue()) > 7; assert 'numba' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path)  # the installed one


def test_a_solver_s_spec_module_imports_no_numba(tmp_path):
    code = "import faceoff.solvers.algorithms.dual_cd, sys; assert 'numba' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path)


def test_builtins_then_peers_in_their_order_each_with_the_method_beside_it():
    names = list(catalogue())
    builtins = ["primal_cd", "ws_cd", "dual_cd", "agd", "lbfgs", "saga", "spdc", "dgpd"]
    assert names[: len(builtins)] == builtins
    peers = names[len(builtins) :]
    libraries = [name.split(".")[0] for name in peers]
    order = ["sklearn", "cyanure", "lightning", "skglm", "celer"]
    assert libraries == sorted(libraries, key=order.index)
    assert peers[:2] == ["sklearn.liblinear", "sklearn.lbfgs"]
    assert get_spec("dual_cd").module == "faceoff.solvers.algorithms.dual_cd.method"
    assert get_spec("sklearn.ridge").module == "faceoff.solvers.peers.sklearn.method"
    assert get_spec("sklearn.ridge").entry == "ridge"


@pytest.fixture
def algorithms(tmp_path, monkeypatch):
    """A package ``fake_algorithms`` scanned as the built-ins: write folders into it."""
    root = tmp_path / "fake_algorithms"
    root.mkdir()
    (root / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "ALGORITHMS", "fake_algorithms")
    for name in [m for m in sys.modules if m.startswith("fake_algorithms")]:
        monkeypatch.delitem(sys.modules, name)
    return root


def _folder(root, name: str, body: str) -> None:
    (root / name).mkdir()
    (root / name / "__init__.py").write_text(
        f"from faceoff.solvers.spec import SolverSpec\n{body}\n"
    )


def test_a_new_folder_is_a_built_in_found_with_its_method(algorithms):
    _folder(algorithms, "ridge_new", 'SPEC = SolverSpec("ridge_new", "t", "r", "primal")')
    found = registry._builtins()
    assert found["ridge_new"].module == "fake_algorithms.ridge_new.method"
    assert list(found)[-1] == "celer.logistic"  # the peers follow the built-ins


@pytest.mark.parametrize(
    "body,error",
    [
        ('SPEC = SolverSpec("other", "t", "r", "primal")', "named 'broken' but its spec 'other'"),
        ('SPEC = SolverSpec("broken", "t", "r", "sideways")', "side 'sideways' is not one of"),
        ("SPEC = 42", "the folder is a int, not a faceoff SolverSpec"),
        ("", "fake_algorithms.broken defines no SPEC"),
    ],
)
def test_a_built_in_that_fails_registration_raises(algorithms, body, error):
    """The check plug-ins pass: a built-in that fails it is a bug here, never skipped."""
    _folder(algorithms, "broken", body)
    with pytest.raises(RegistrationError, match=error):
        registry._builtins()


def test_a_built_in_may_not_shadow_a_peer(algorithms):
    _folder(algorithms, "cyanure", 'SPEC = SolverSpec("cyanure", "t", "r", "primal")')
    with pytest.raises(RegistrationError, match="'cyanure' is taken by a built-in solver"):
        registry._builtins()


def test_unsupported_loss_or_penalty_is_named():
    spec = SolverSpec("only_l2", "t", "r", "primal", losses=("squared",), penalties=("l2",))
    with pytest.raises(ValueError, match="does not support loss 'logistic'; it supports squared"):
        spec.check("logistic", "l2")
    with pytest.raises(
        ValueError, match="does not support penalty 'elastic_net'.*; it supports l2"
    ):
        spec.check("squared", "elastic_net")


def test_loss_parameter_ranges_name_the_parameter_and_what_is_accepted():
    """A solver may take a loss for some of its parameters only: lightning's primal CD has the
    smoothed hinge with γ = 1 built in, and lightning's SAGA steps too far for γ < 1."""
    with pytest.raises(SupportError, match=r"'smooth_hinge' with gamma = 1 only .*gamma=0.5") as e:
        get_spec("lightning.cd").check("smooth_hinge", "l2", gamma=0.5)
    assert e.value.field == "gamma" and "use gamma = 1 or another solver" in str(e.value)
    with pytest.raises(SupportError, match=r"with gamma ≥ 1 only .*got gamma=0.3"):
        get_spec("lightning.saga").check("smooth_hinge", "elastic_net", gamma=0.3)
    get_spec("lightning.cd").check("smooth_hinge", "l2", gamma=1.0)
    get_spec("lightning.saga").check("smooth_hinge", "l2", gamma=2.5)
    get_spec("lightning.cd").check("logistic", "l2", gamma=0.5)  # γ applies to its loss only
    ranged = LossParamRange("smooth_hinge", "gamma", 0.5, 2.0, "why")
    spec = SolverSpec("ranged", "t", "r", "primal", loss_params=(ranged,))
    with pytest.raises(SupportError, match=r"gamma in \[0.5, 2\] only \(why\), got gamma=3"):
        spec.check("smooth_hinge", "l2", gamma=3.0)
    assert spec.to_dict()["loss_params"] == [
        {"loss": "smooth_hinge", "param": "gamma", "low": 0.5, "high": 2.0, "why": "why"}
    ]


@pytest.mark.parametrize("gamma", [0.5, 2.0])
def test_submission_checks_the_loss_parameters(gamma):
    """faceoff.core.specs (API, sweeps) refuses lightning.cd's smoothed hinge at γ ≠ 1, at the
    field gamma; jobs, sweeps and the CLI reach the same SolverSpec.check."""
    with pytest.raises(SpecError, match="gamma = 1 only") as refused:
        check_solver("lightning.cd", "smooth_hinge", "l2", {}, gamma=gamma)
    assert refused.value.loc == ("gamma",)
    with pytest.raises(SpecError) as refused:
        check_solver("lightning.cd", "smooth_hinge", "l2", {}, ("solvers", 2), gamma=gamma)
    assert refused.value.loc == ("solvers", 2, "gamma")
    assert check_solver("lightning.cd", "smooth_hinge", "l2", {}, gamma=1.0) == NoParams()
    with pytest.raises(SpecError) as refused:
        check_solver("lightning.cd", "squared", "elastic_net", {})
    assert refused.value.loc == ("l1",) and "l1 > 0 makes the penalty" in str(refused.value)


def test_params_defaults_and_errors():
    spec = get_spec("dual_cd")
    assert asdict(spec.parse_params(None)) == {  # auto: chosen from the problem (issue 34)
        "sampling": "auto",
        "step": "exact",
        "accelerate": "auto",
        "shrinking": "auto",
    }
    with pytest.raises(ValueError, match="unknown parameter 'x'.*accepted: sampling, step, accel"):
        spec.parse_params({"x": 1})
    with pytest.raises(ValueError, match="'often' is not one of auto, uniform, importance"):
        spec.parse_params({"sampling": "often"})
    with pytest.raises(ValueError, match="unknown solver 'nope'; accepted: primal_cd"):
        get_spec("nope")


@pytest.mark.parametrize(
    "raw", ["abc", float("nan"), 2.5, 0, 2000, float("inf"), -float("inf"), 10**400, "1e400"]
)
def test_int_param_bounds_and_types(raw):
    param = Param("memory", "int", 30, "h", 1, 1000)
    with pytest.raises(ParamError, match="parameter 'memory' of solver 'lbfgs'") as refused:
        param.parse("lbfgs", raw)
    assert refused.value.param == "memory" and len(str(refused.value)) < 200


@pytest.mark.parametrize("raw", [float("inf"), 10**400, "-inf", "nan", "9" * 400, [1.0]])
def test_float_param_must_be_finite(raw):
    param = Param("step_scale", "float", 1.0, "h", 1e-3, 10.0)
    with pytest.raises(ParamError, match="parameter 'step_scale' of solver 'saga'"):
        param.parse("saga", raw)


def test_a_rule_takes_auto_as_the_value_it_needs():
    """shrinking=on needs permutation passes without Catalyst: auto (which then chooses
    them) is accepted, an explicit other value is refused naming shrinking."""
    spec = get_spec("dual_cd")
    assert spec.parse_params({"shrinking": "on"}).sampling == "auto"
    for other in ({"sampling": "uniform"}, {"accelerate": "catalyst"}):
        with pytest.raises(ParamError, match="shrinking=on applies to") as refused:
            spec.parse_params({"shrinking": "on", **other})
        assert refused.value.param == "shrinking"
    assert get_spec("saga").parse_params({"step_scale": None}).step_scale is None  # auto
    assert get_spec("saga").parse_params({"step_scale": 3}).step_scale == 3.0


def test_rules_between_parameters_are_checked_with_the_values():
    spec = SolverSpec(
        "s",
        "t",
        "r",
        "primal",
        params=(
            Param("mode", "choice", "a", "h", choices=("a", "b")),
            Param("knob", "float", None, "h", 0.0, 1.0),
        ),
        rules=(OnlyWith("knob", "mode", "b"),),
    )
    assert asdict(spec.parse_params({"knob": None})) == {"mode": "a", "knob": None}
    assert asdict(spec.parse_params({"knob": 0.5, "mode": "b"})) == {"mode": "b", "knob": 0.5}
    with pytest.raises(ParamError, match="knob applies to mode=b only") as refused:
        spec.parse_params({"knob": 0.5})
    assert refused.value.param == "knob"


def test_submission_checks_the_solver_s_rules():
    """faceoff.core.specs (the API) refuses SPDC's α without weighted sampling, naming the field."""
    with pytest.raises(SpecError, match="alpha applies to sampling=weighted only") as refused:
        check_solver("spdc", "logistic", "l2", {"alpha": 0.5})
    assert refused.value.loc == ("params", "alpha")
    params = check_solver("spdc", "logistic", "l2", {"alpha": 0.5, "sampling": "weighted"})
    assert params.alpha == 0.5


def test_a_rule_on_one_choice_leaves_the_others_free():
    """dual_cd's shrinking=on needs sampling=permutation; shrinking=off goes with any; the API
    refuses the pair naming the field."""
    spec = get_spec("dual_cd")
    assert spec.parse_params({"shrinking": "off", "sampling": "uniform"}).shrinking == "off"
    with pytest.raises(SpecError, match="shrinking=on applies to sampling=permutation") as refused:
        check_solver("dual_cd", "smooth_hinge", "l2", {"shrinking": "on", "sampling": "uniform"})
    assert refused.value.loc == ("params", "shrinking")
    params = {"shrinking": "on", "sampling": "permutation"}
    assert check_solver("dual_cd", "smooth_hinge", "l2", params).shrinking == "on"
    # sampling=auto chooses permutation: shrinking=on needs nothing beside it
    assert {"shrinking": "on"} in spec.choice_variants()


def test_every_spec_serializes_to_what_the_api_and_cli_show():
    """The JSON of GET /solvers and `faceoff solvers`: every field, defaults that parse, and
    choices and bounds that agree with the defaults."""
    for key, spec in catalogue().items():
        shown = json.loads(json.dumps(spec.to_dict()))
        assert shown["name"] == key and shown["title"] and shown["reference"]
        assert set(shown["losses"]) <= set(LOSS_NAMES)
        assert set(shown["penalties"]) <= set(PENALTY_NAMES)
        assert [p["name"] for p in shown["params"]] == [f.name for f in fields(spec.params)]
        for shown_param in shown["params"]:
            low, default, high = (shown_param.get(k) for k in ("low", "default", "high"))
            if shown_param["kind"] == "choice":
                assert default in shown_param["choices"], (key, shown_param)
            elif default is not None:
                assert low <= default <= high, (key, shown_param)
        defaults = {p["name"]: p["default"] for p in shown["params"]}
        assert spec.parse_params(defaults) == spec.parse_params(None)


def test_every_catalogued_solver_has_a_module_with_its_entry():
    import importlib

    for spec in catalogue().values():
        if spec.unavailable_reason() is None:  # a peer's module imports its library lazily
            entry = getattr(importlib.import_module(spec.module), spec.entry)
            assert callable(entry), (spec.module, spec.entry)


def test_importing_the_catalogue_imports_no_kernel_and_no_peer_library():
    code = (
        "import sys, faceoff.solvers.catalogue as c; c.get_spec('cyanure').to_dict(); "
        "print(sorted({m.split('.')[0] for m in sys.modules} & "
        "{'numba', 'sklearn', 'cyanure', 'lightning'}))"
    )
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout.strip() == "[]", run


def test_working_memory_counts_the_data_twice_and_lbfgs_its_history():
    n, d, nnz = 1000, 500, 20_000
    dual_cd = get_spec("dual_cd")
    base = dual_cd.working_bytes(n, d, nnz, dual_cd.parse_params({}), "l2")
    assert base >= 2 * 12 * nnz  # rows and columns, values and indices
    lbfgs = get_spec("lbfgs")
    small = lbfgs.working_bytes(n, d, nnz, lbfgs.parse_params({"memory": 10}), "l2")
    large = lbfgs.working_bytes(n, d, nnz, lbfgs.parse_params({"memory": 100}), "l2")
    assert large - small >= 8 * 2 * 90 * d  # 2·m vectors of d doubles
    split = lbfgs.working_bytes(n, d, nnz, lbfgs.parse_params({"memory": 100}), "elastic_net")
    assert split - large >= 8 * 2 * 100 * d  # x = x⁺ − x⁻ doubles the variables


@dataclass(frozen=True)
class _Params:
    mode: str = param("a", choices=("a", "b"), help="a mode")
    count: int = param(3, low=1, high=9, help="a count")
    scale: float | None = param(None, low=0.0, high=1.0, help="auto when None")


def test_params_fields_carry_their_schema():
    spec = SolverSpec("typed", "t", "r", "primal", params=_Params)
    assert spec.schema == (
        Param("mode", "choice", "a", "a mode", choices=("a", "b")),
        Param("count", "int", 3, "a count", 1, 9),
        Param("scale", "float", None, "auto when None", 0.0, 1.0),
    )
    parsed = spec.parse_params({"count": 4, "scale": 0.5})
    assert parsed == _Params(count=4, scale=0.5) and isinstance(parsed.count, int)
    with pytest.raises(ParamError, match="'count'.*expected an integer, got '4'"):
        spec.parse_params({"count": "4"})  # a JSON integer only (solvers.integers)
    with pytest.raises(AttributeError):
        parsed.count = 5  # frozen: a method cannot change what was checked


def test_the_tuple_form_of_a_plug_in_becomes_a_dataclass():
    """A plug-in may list its parameters as Param: its method still receives a typed
    object, and the schema shown is the same."""
    listed = (
        Param("mode", "choice", "a", "a mode", choices=("a", "b")),
        Param("count", "int", 3, "a count", 1, 9),
        Param("scale", "float", None, "auto when None", 0.0, 1.0),
    )
    spec = SolverSpec("acme.tuple_form", "t", "r", "primal", params=listed)
    assert spec.schema == listed
    assert spec.params.__name__ == "AcmeTupleFormParams"
    parsed = spec.parse_params({"mode": "b"})
    assert (parsed.mode, parsed.count, parsed.scale) == ("b", 3, None)
    assert (
        spec.to_dict()["params"]
        == SolverSpec("x", "t", "r", "primal", params=_Params).to_dict()["params"]
    )


def test_a_params_class_must_declare_every_field_with_param():
    @dataclass(frozen=True)
    class Bare:
        knob: float = 1.0

    with pytest.raises(TypeError, match="Bare.knob: declare it with faceoff's param"):
        SolverSpec("s", "t", "r", "primal", params=Bare)

    @dataclass(frozen=True)
    class Untyped:
        knob: bytes = param(b"", help="h")

    with pytest.raises(TypeError, match="Untyped.knob: a parameter is int, float or str"):
        SolverSpec("s", "t", "r", "primal", params=Untyped)

    @dataclass
    class Mutable:
        knob: float = param(1.0, help="h")

    with pytest.raises(TypeError, match="must be a frozen dataclass"):
        SolverSpec("s", "t", "r", "primal", params=Mutable)


def test_stored_params_are_loaded_typed_without_a_second_check():
    """The worker reads the canonical dict the API made: typed again, not checked again
    (a stored value is taken as it is); a name the solver no longer has is refused."""
    spec = get_spec("dual_cd")
    stored = asdict(spec.parse_params({"sampling": "permutation", "shrinking": "on"}))
    assert spec.load_params(stored) == spec.parse_params(stored)
    assert get_spec("lbfgs").load_params({"memory": 0}).memory == 0  # not re-checked
    assert spec.load_params({}) == spec.parse_params({})
    with pytest.raises(ParamError, match="stored parameter 'tau' of solver 'dual_cd'"):
        spec.load_params({"tau": 1.0})


def test_the_canonical_params_of_a_job_are_the_dict_of_its_params():
    """What a job stores (and hashes) is ``asdict`` of the typed parameters: the same keys
    and values as before parameters were typed."""
    from faceoff.core.specs import JobSpec, canonical_job

    job = JobSpec(dataset="d", loss="logistic", l2=1e-3, solver="spdc", params={"tau": "2"})
    assert canonical_job(job).params == {
        "batch_size": 1,
        "sampling": "uniform",
        "alpha": None,
        "tau": 2.0,
        "sigma": None,
        "theta": None,
        "updates": "lazy",
    }
