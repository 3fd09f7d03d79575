"""CONTRIBUTING.md's "add a loss" recipe, followed literally: its one code block (the loss
module) is written into a copy of the package and nothing else is edited. The new loss is
then a choice of the vocabulary (without Numba), solved by the CLI, and covered by the
generated tests: every function of it (tests/solvers/test_losses.py) and the reference
tests of dual_cd and lbfgs (tests/solvers/test_reference.py); a copy of the module without
one of its functions fails at import, naming it.

The copy shadows the installed package through PYTHONPATH in every process started here
(PYTHONSAFEPATH keeps the repository's own ``faceoff/`` folder off sys.path), as in
test_add_a_solver.py.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from setuptools.config.pyprojecttoml import read_configuration

from faceoff.solvers.losses import LOSSES
from faceoff.solvers.losses.dispatch import REQUIRED

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
NAME = "pseudo_huber"
LOSS_BLOCK = re.compile(r"<!-- contributing:loss (\S+) -->\n```python\n(.*?)```", re.S)
# the reference tests run here: the two solvers' defaults on the smaller datasets (rcv1's
# reference alone takes 15 s), both penalties
SOLVERS = ("dual_cd", "lbfgs")
DATASETS = ("dense", "sparse", "a9a")


def recipe() -> tuple[str, str]:
    """(module path, module source) from CONTRIBUTING.md."""
    blocks = LOSS_BLOCK.findall((REPO / "CONTRIBUTING.md").read_text())
    assert len(blocks) == 1, "the recipe has one module"
    return blocks[0]


def copy_package(root: Path, path: str, source: str) -> Path:
    """The package ``faceoff`` in ``root`` with the module ``source`` written at ``path``: the
    folder ``path`` is in copied, every other subpackage linked to the repository's."""
    folder, _, rest = path.partition("/")
    mapping = read_configuration(REPO / "pyproject.toml")["tool"]["setuptools"]["package-dir"]
    package = root / "faceoff"
    package.mkdir()
    shutil.copy(REPO / mapping["faceoff"] / "__init__.py", package / "__init__.py")
    for name, where in mapping.items():
        parts = name.split(".")
        if len(parts) != 2:
            continue
        if where == folder:
            ignore = shutil.ignore_patterns("__pycache__")
            shutil.copytree(REPO / where, package / parts[1], ignore=ignore)
        else:
            (package / parts[1]).symlink_to(REPO / where)
    module = package / folder / rest
    assert not module.exists(), f"{path} exists already: the recipe needs a new name"
    module.write_text(source)
    return root


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """A folder holding the package ``faceoff`` with the recipe applied."""
    return copy_package(tmp_path_factory.mktemp("contrib"), *recipe())


def python(tree: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """``python *args`` in the repository, importing ``faceoff`` from ``tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONSAFEPATH": "1"}
    return subprocess.run(
        [sys.executable, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout
    )


def test_the_recipe_adds_a_new_loss():
    path, source = recipe()
    assert path == f"solvers/losses/{NAME}.py" and NAME not in LOSSES  # not in this process
    info = ast.parse(source)  # its INFO names it, with a code no loss has
    assert f"name={NAME!r}" in ast.unparse(info).replace('"', "'")


def test_the_vocabulary_and_the_cli_take_the_new_loss(tree):
    light = python(
        tree,
        "-c",
        "import sys, faceoff.solvers.vocabulary as v\n"
        f"assert {NAME!r} in v.LOSS_NAMES, v.LOSS_NAMES\n"
        "assert 'numba' not in sys.modules\n"
        "print(v.__file__)",
    )
    assert light.returncode == 0, light.stderr
    assert light.stdout.strip().startswith(str(tree)), light.stdout
    solved = python(
        tree,
        "-m",
        "faceoff.cli.main",
        "solve",
        "--synthetic",
        "regression",
        "--loss",
        NAME,
        "--l2",
        "1e-3",
        "--solver",
        "dual_cd",
        "--tol",
        "1e-10",
        "--format",
        "jsonl",
    )
    assert solved.returncode == 0, solved.stderr
    summary = json.loads(solved.stdout.strip().splitlines()[-1])["summary"]
    assert summary["problem"]["loss"] == NAME and summary["stop_reason"] == "converged", summary


def test_the_generated_tests_cover_the_new_loss(tree, tmp_path):
    report = tmp_path / "report.xml"
    reference = " or ".join(f"{solver}-default-{NAME}-" for solver in SOLVERS)
    datasets = " or ".join(f"-{dataset}]" for dataset in DATASETS)
    ran = python(
        tree,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "--import-mode=append",  # the repository last on sys.path: ``tests`` from it, not faceoff
        "tests/solvers/test_losses.py",
        "tests/solvers/test_reference.py",
        "-k",
        f"(test_losses and {NAME}) or (({reference}) and ({datasets}))",
        f"--junitxml={report}",
        timeout=900,
    )
    assert ran.returncode == 0, ran.stdout[-3000:]
    cases = {case.get("name") for case in ET.parse(report).iter("testcase")}
    functions = {f"test_every_function_of_every_loss[{NAME}-{f}]" for f in REQUIRED}
    references = {
        f"test_matches_reference_and_certifies[{solver}-default-{NAME}-{penalty}-{dataset}]"
        for solver in SOLVERS
        for penalty in ("l2", "elastic_net")
        for dataset in DATASETS
    }
    assert functions | references <= cases, sorted(functions | references - cases)


def test_a_loss_module_without_a_required_function_fails_at_import(tmp_path):
    """The recipe's module with its ``conj`` left out: importing the kernels' side fails,
    naming the loss and the function."""
    path, source = recipe()
    module = ast.parse(source)
    module.body = [
        node
        for node in module.body
        if not (isinstance(node, ast.FunctionDef) and node.name == "conj")
    ]
    tree = copy_package(tmp_path, path, ast.unparse(module))
    failed = python(tree, "-c", "import faceoff.solvers.losses.dispatch")
    assert failed.returncode != 0
    assert f"loss {NAME!r}" in failed.stderr and "no jitted function 'conj'" in failed.stderr
