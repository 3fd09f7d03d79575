"""The kernel contract: kernels take a few Numba tuples, and solver modules share helpers
through public modules only."""

from __future__ import annotations

import ast
from pathlib import Path

import faceoff.solvers

SOLVERS = Path(faceoff.solvers.__file__).parent


def _private_imports(path: Path) -> list[str]:
    """``module.name`` for each private name ``path`` imports from another faceoff module."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("faceoff."):
            found += [f"{node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
    return found


def test_no_solver_module_imports_another_modules_private_names():
    offenders = {
        str(path.relative_to(SOLVERS)): names
        for path in sorted(SOLVERS.rglob("*.py"))
        if (names := _private_imports(path))
    }
    assert offenders == {}


def _jitted(path: Path) -> dict[str, int]:
    """Name → number of parameters of each ``@njit`` function of ``path``."""
    return {
        node.name: len(node.args.args)
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef)
        and any("njit" in ast.unparse(d) for d in node.decorator_list)
    }


def test_jitted_functions_take_at_most_ten_arguments():
    """Kernels take (data, loss, penalty or prox, sampler, iterate, …, n_updates) tuples;
    only inlined scalar helpers come near ten."""
    counts = {
        f"{path.relative_to(SOLVERS)}:{name}": count
        for path in sorted(SOLVERS.rglob("*.py"))
        for name, count in _jitted(path).items()
    }
    assert counts["algorithms/dual_cd/method.py:_dual_cd"] == 6  # the check sees the kernels
    assert {name: count for name, count in counts.items() if count > 10} == {}


def test_the_check_sees_a_private_import(tmp_path):
    module = tmp_path / "spdc.py"
    module.write_text("from faceoff.solvers.algorithms.saga.method import _catch_up, SAGA\n")
    assert _private_imports(module) == ["faceoff.solvers.algorithms.saga.method._catch_up"]
