"""solvers.plugins.discover on entry points made here: every kind of broken plug-in is left
out with its reason, the good ones join, nothing raises."""

from __future__ import annotations

import sys
import types
from importlib.metadata import EntryPoint

import pytest

from faceoff.solvers.catalogue import CATALOGUE, SolverSpec
from faceoff.solvers.plugins import discover

GOOD = SolverSpec("acme.good", "t", "r", "acme.solver", "primal")


@pytest.fixture
def specs(monkeypatch):
    """A module ``acme_specs`` holding specs good and bad."""
    module = types.ModuleType("acme_specs")
    module.GOOD = GOOD
    module.SHADOW = SolverSpec("dual_cd", "t", "r", "acme.solver", "dual")
    module.NUMBER = 42
    module.BAD_NAME = SolverSpec("Acme.Bad", "t", "r", "acme.solver", "primal")
    module.LOSSY = SolverSpec("acme.lossy", "t", "r", "acme.solver", "primal", ("hinge",))
    module.SIDEWAYS = SolverSpec("acme.sideways", "t", "r", "acme.solver", "sideways")
    module.TWIN = SolverSpec("acme.good", "t", "r", "acme.other", "primal")
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
    ]
    found, broken = discover(CATALOGUE, entries)
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
    assert len(broken) == len(entries) - 1


def test_no_plugin_installed_leaves_the_builtin_catalogue():
    found, broken = discover(CATALOGUE, [])
    assert found == {} and broken == []
