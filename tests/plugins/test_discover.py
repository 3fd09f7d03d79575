"""solvers.catalogue.discover_plugins on entry points made here: every kind of broken
plug-in is left out with its reason, the good ones join, nothing raises."""

from __future__ import annotations

import sys
import types
from importlib.metadata import EntryPoint

import pytest

from faceoff.solvers import catalogue as registry
from faceoff.solvers.catalogue import catalogue, discover_plugins
from faceoff.solvers.spec import Param, SolverSpec

GOOD = SolverSpec("acme.good", "t", "r", "primal", module="acme.solver")


@pytest.fixture
def specs(monkeypatch):
    """A module ``acme_specs`` holding specs good and bad."""
    module = types.ModuleType("acme_specs")
    module.GOOD = GOOD
    module.SHADOW = SolverSpec("dual_cd", "t", "r", "dual", module="acme.solver")
    module.NUMBER = 42
    module.BAD_NAME = SolverSpec("Acme.Bad", "t", "r", "primal", module="acme.solver")
    module.LOSSY = SolverSpec("acme.lossy", "t", "r", "primal", losses=("hinge",), module="m")
    module.SIDEWAYS = SolverSpec("acme.sideways", "t", "r", "sideways", module="acme.solver")
    module.TWIN = SolverSpec("acme.good", "t", "r", "primal", module="acme.other")
    module.NOWHERE = SolverSpec("acme.nowhere", "t", "r", "primal")  # no package: no method
    monkeypatch.setitem(sys.modules, "acme_specs", module)
    return module


def entry(name: str, value: str) -> EntryPoint:
    return EntryPoint(name, value, "faceoff.solvers")


def test_good_plugins_join_and_broken_ones_are_reported(specs):
    entries = [
        entry("acme.good", "acme_specs:GOOD"),
        entry("dual_cd", "acme_specs:SHADOW"),
        entry("acme.missing", "no_such_module_here:SPEC"),
        entry("acme.number", "acme_specs:NUMBER"),
        entry("Acme.Bad", "acme_specs:BAD_NAME"),
        entry("acme.lossy", "acme_specs:LOSSY"),
        entry("acme.sideways", "acme_specs:SIDEWAYS"),
        entry("acme.renamed", "acme_specs:GOOD"),
        entry("acme.good", "acme_specs:TWIN"),
        entry("acme.nowhere", "acme_specs:NOWHERE"),
    ]
    found, broken = discover_plugins(catalogue(), entries)
    assert found == {"acme.good": GOOD}
    reasons = {(b.name, b.error) for b in broken}
    expected = {
        ("dual_cd", "name 'dual_cd' is taken by a built-in solver"),
        ("acme.missing", "ModuleNotFoundError: No module named 'no_such_module_here'"),
        ("acme.number", "the entry point is a int, not a faceoff SolverSpec"),
        ("acme.renamed", "the entry point is named 'acme.renamed' but its spec 'acme.good'"),
        ("acme.good", "name 'acme.good' is taken by the plug-in of unknown distribution"),
    }
    assert expected <= reasons, reasons
    messages = {b.name: b.error for b in broken}
    assert "lowercase" in messages["Acme.Bad"]
    assert "hinge" in messages["acme.lossy"]
    assert "sideways" in messages["acme.sideways"]
    assert "must name its method's module" in messages["acme.nowhere"]
    assert len(broken) == len(entries) - 1


def test_no_plugin_installed_leaves_the_builtin_catalogue():
    found, broken = discover_plugins(catalogue(), [])
    assert found == {} and broken == []


def test_a_plugin_s_method_defaults_to_the_method_module_beside_its_spec(tmp_path, monkeypatch):
    """A spec in acme_pkg/spec.py (or in acme_pkg/__init__.py) that names no module runs
    acme_pkg.method; its parameters listed as Param become a typed dataclass."""
    package = tmp_path / "acme_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "spec.py").write_text(
        "from faceoff.solvers.spec import Param, SolverSpec\n"
        'SPEC = SolverSpec("acme.beside", "t", "r", "primal", '
        'params=(Param("memory", "int", 5, "h", 1, 9),))\n'
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    found, broken = discover_plugins(catalogue(), [entry("acme.beside", "acme_pkg.spec:SPEC")])
    assert broken == []
    spec = found["acme.beside"]
    assert spec.module == "acme_pkg.method"
    assert spec.schema == (Param("memory", "int", 5, "h", 1, 9),)
    assert spec.parse_params({"memory": 7}).memory == 7


def test_a_plugin_that_asks_for_the_catalogue_at_import_is_reported(tmp_path, monkeypatch):
    """Discovery imports the plug-in's module: one that calls catalogue() then is left out
    with the reason (it neither deadlocks nor discovers again)."""
    (tmp_path / "acme_greedy.py").write_text(
        "from faceoff.solvers.catalogue import catalogue\ncatalogue()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "_found", None)
    monkeypatch.setattr(
        registry, "entry_points", lambda group: [entry("acme.greedy", "acme_greedy:SPEC")]
    )
    (broken,) = registry.broken_plugins()
    assert broken.error == (
        "RegistrationError: the catalogue was asked for while it was discovered"
    )
    assert "acme.greedy" not in catalogue() and "dual_cd" in catalogue()


def test_a_plugin_needing_another_plugin_api_is_left_out_saying_which(monkeypatch):
    """``SolverSpec.plugin_api`` against ``faceoff.solvers.PLUGIN_API`` ("1.1"): an older or
    equal minor version of the same major joins; a newer one, another major or a malformed
    version is left out with what to do."""
    import faceoff
    from faceoff.solvers import PLUGIN_API

    assert PLUGIN_API == "1.1"
    module = types.ModuleType("acme_api")
    versions = {
        "same": "1.1",
        "previous": "1.0",
        "newer": "1.7",
        "major": "2.0",
        "older": "0.9",
        "junk": "1",
    }
    for key, version in versions.items():
        spec = SolverSpec(f"acme.{key}", "t", "r", "primal", module="m", plugin_api=version)
        setattr(module, key.upper(), spec)
    monkeypatch.setitem(sys.modules, "acme_api", module)
    entries = [entry(f"acme.{key}", f"acme_api:{key.upper()}") for key in versions]
    found, broken = discover_plugins(catalogue(), entries)
    assert set(found) == {"acme.same", "acme.previous"}
    errors = {b.name: b.error for b in broken}
    here = f"this Faceoff (faceoff-bench {faceoff.__version__}) provides 1.1"
    assert errors["acme.newer"] == (
        f"it requires the Faceoff plug-in API 1.7, but {here}: upgrade Faceoff "
        "(pip install -U faceoff-bench) or install an older release of the plug-in"
    )
    assert errors["acme.major"].startswith("it requires the Faceoff plug-in API 2.0, but")
    assert errors["acme.older"].startswith(
        f"it was written for the Faceoff plug-in API 0.9, but {here}, which is not compatible"
    )
    assert errors["acme.junk"] == "plugin_api '1' must be a version MAJOR.MINOR such as '1.1'"
