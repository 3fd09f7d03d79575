"""The catalogue validates requests without importing Numba."""

from __future__ import annotations

import subprocess
import sys

import pytest

from solvers.catalogue import CATALOGUE, Param, SolverSpec, get_spec


def test_catalogue_imports_no_numba():
    code = "import sys, solvers.catalogue; assert 'numba' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_unsupported_loss_or_penalty_is_named():
    spec = SolverSpec("only_l2", "t", "r", "m", "primal", losses=("squared",), penalties=("l2",))
    with pytest.raises(ValueError, match="does not support loss 'logistic'; it supports squared"):
        spec.check("logistic", "l2")
    with pytest.raises(ValueError, match="does not support penalty 'elastic_net'; it supports l2"):
        spec.check("squared", "elastic_net")


def test_params_defaults_and_errors():
    spec = get_spec("dual_cd")
    assert spec.parse_params(None) == {"sampling": "uniform", "step": "exact"}
    with pytest.raises(ValueError, match="unknown parameter 'x'.*accepted: sampling, step"):
        spec.parse_params({"x": 1})
    with pytest.raises(ValueError, match="'often' is not one of uniform, importance"):
        spec.parse_params({"sampling": "often"})
    with pytest.raises(ValueError, match="unknown solver 'nope'; accepted: primal_cd"):
        get_spec("nope")


@pytest.mark.parametrize("raw", ["abc", float("nan"), 2.5, 0, 2000])
def test_int_param_bounds_and_types(raw):
    param = Param("memory", "int", 30, "h", 1, 1000)
    with pytest.raises(ValueError, match="parameter 'memory' of solver 'lbfgs'"):
        param.parse("lbfgs", raw)


def test_every_spec_serializes():
    for spec in CATALOGUE.values():
        assert spec.to_dict()["name"] == spec.name


def test_every_catalogued_solver_has_a_module_with_solve():
    import importlib

    for spec in CATALOGUE.values():
        assert callable(importlib.import_module(spec.module).solve), spec.module
