"""The catalogue validates requests without importing Numba."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from faceoff.core.specs import SpecError, check_solver
from faceoff.solvers.catalogue import (
    CATALOGUE,
    LOSSES,
    PENALTIES,
    LossParamRange,
    OnlyWith,
    Param,
    ParamError,
    SolverSpec,
    SupportError,
    get_spec,
)


def test_catalogue_imports_no_numba(tmp_path):
    code = "import sys, faceoff.solvers.catalogue; assert 'numba' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path)  # the installed one


def test_unsupported_loss_or_penalty_is_named():
    spec = SolverSpec("only_l2", "t", "r", "m", "primal", losses=("squared",), penalties=("l2",))
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
    spec = SolverSpec("ranged", "t", "r", "m", "primal", loss_params=(ranged,))
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
    assert check_solver("lightning.cd", "smooth_hinge", "l2", {}, gamma=1.0) == {}
    with pytest.raises(SpecError) as refused:
        check_solver("lightning.cd", "squared", "elastic_net", {})
    assert refused.value.loc == ("l1",) and "l1 > 0 makes the penalty" in str(refused.value)


def test_params_defaults_and_errors():
    spec = get_spec("dual_cd")
    assert spec.parse_params(None) == {
        "sampling": "uniform",
        "step": "exact",
        "accelerate": "none",
        "shrinking": "off",
    }
    with pytest.raises(ValueError, match="unknown parameter 'x'.*accepted: sampling, step, accel"):
        spec.parse_params({"x": 1})
    with pytest.raises(ValueError, match="'often' is not one of uniform, importance"):
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


def test_rules_between_parameters_are_checked_with_the_values():
    spec = SolverSpec(
        "s",
        "t",
        "r",
        "m",
        "primal",
        params=(
            Param("mode", "choice", "a", "h", choices=("a", "b")),
            Param("knob", "float", None, "h", 0.0, 1.0),
        ),
        rules=(OnlyWith("knob", "mode", "b"),),
    )
    assert spec.parse_params({"knob": None}) == {"mode": "a", "knob": None}
    assert spec.parse_params({"knob": 0.5, "mode": "b"}) == {"mode": "b", "knob": 0.5}
    with pytest.raises(ParamError, match="knob applies to mode=b only") as refused:
        spec.parse_params({"knob": 0.5})
    assert refused.value.param == "knob"


def test_submission_checks_the_solver_s_rules():
    """faceoff.core.specs (the API) refuses SPDC's α without weighted sampling, naming the field."""
    with pytest.raises(SpecError, match="alpha applies to sampling=weighted only") as refused:
        check_solver("spdc", "logistic", "l2", {"alpha": 0.5})
    assert refused.value.loc == ("params", "alpha")
    params = check_solver("spdc", "logistic", "l2", {"alpha": 0.5, "sampling": "weighted"})
    assert params["alpha"] == 0.5


def test_a_rule_on_one_choice_leaves_the_others_free():
    """dual_cd's shrinking=on needs sampling=permutation; shrinking=off goes with any; the API
    refuses the pair naming the field."""
    spec = get_spec("dual_cd")
    assert spec.parse_params({"shrinking": "off", "sampling": "uniform"})["shrinking"] == "off"
    with pytest.raises(SpecError, match="shrinking=on applies to sampling=permutation") as refused:
        check_solver("dual_cd", "smooth_hinge", "l2", {"shrinking": "on"})
    assert refused.value.loc == ("params", "shrinking")
    params = {"shrinking": "on", "sampling": "permutation"}
    assert check_solver("dual_cd", "smooth_hinge", "l2", params)["shrinking"] == "on"
    assert {"shrinking": "on", "sampling": "permutation"} in spec.choice_variants()


def test_every_spec_serializes_to_what_the_api_and_cli_show():
    """The JSON of GET /solvers and `faceoff solvers`: every field, defaults that parse, and
    choices and bounds that agree with the defaults."""
    for key, spec in CATALOGUE.items():
        shown = json.loads(json.dumps(spec.to_dict()))
        assert shown["name"] == key and shown["title"] and shown["reference"]
        assert set(shown["losses"]) <= set(LOSSES) and set(shown["penalties"]) <= set(PENALTIES)
        assert [p["name"] for p in shown["params"]] == [p.name for p in spec.params]
        for param in shown["params"]:
            if param["kind"] == "choice":
                assert param["default"] in param["choices"], (key, param)
            elif param["default"] is not None:
                assert param["low"] <= param["default"] <= param["high"], (key, param)
        defaults = {p["name"]: p["default"] for p in shown["params"]}
        assert spec.parse_params(defaults) == spec.parse_params(None)


def test_every_catalogued_solver_has_a_module_with_its_entry():
    import importlib

    for spec in CATALOGUE.values():
        if spec.unavailable_reason() is None:  # a peer's module imports its library lazily
            entry = getattr(importlib.import_module(spec.module), spec.entry)
            assert callable(entry), (spec.module, spec.entry)


def test_importing_the_catalogue_imports_no_kernel_and_no_peer_library():
    code = (
        "import sys, faceoff.solvers.catalogue as c; c.CATALOGUE['cyanure'].to_dict(); "
        "print(sorted({m.split('.')[0] for m in sys.modules} & "
        "{'numba', 'sklearn', 'cyanure', 'lightning'}))"
    )
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0 and run.stdout.strip() == "[]", run


def test_working_memory_counts_the_data_twice_and_lbfgs_its_history():
    from faceoff.solvers.catalogue import CATALOGUE

    n, d, nnz = 1000, 500, 20_000
    base = CATALOGUE["dual_cd"].working_bytes(n, d, nnz, {}, "l2")
    assert base >= 2 * 12 * nnz  # rows and columns, values and indices
    lbfgs = CATALOGUE["lbfgs"]
    small = lbfgs.working_bytes(n, d, nnz, {"memory": 10}, "l2")
    large = lbfgs.working_bytes(n, d, nnz, {"memory": 100}, "l2")
    assert large - small >= 8 * 2 * 90 * d  # 2·m vectors of d doubles
    split = lbfgs.working_bytes(n, d, nnz, {"memory": 100}, "elastic_net")
    assert split - large >= 8 * 2 * 100 * d  # x = x⁺ − x⁻ doubles the variables
