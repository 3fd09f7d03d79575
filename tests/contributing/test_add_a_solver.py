"""CONTRIBUTING.md's "add a solver" recipe, followed literally: its code blocks (the files
of one new folder, the spec and the method) are written into a copy of the package and
nothing else is edited. The catalogue of the copy finds the new solver; it is then validated
by a real API process, run by a real worker process, listed by the CLI and by the dashboard
(in Chromium), and covered by the generated reference tests.

The copy shadows the installed package through PYTHONPATH in every process started here.
Those processes run in the repository, whose ``faceoff/`` folder would win if their working
directory came first on sys.path: PYTHONSAFEPATH keeps Python from putting it there,
UVICORN_APP_DIR (uvicorn's ``--app-dir``, default ".") points uvicorn at the copy instead,
and the worker runs in the copy (celery puts its working directory first).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path, PurePosixPath

import httpx
import pytest
from setuptools.config.pyprojecttoml import read_configuration

from faceoff.solvers.catalogue import catalogue
from tests.dashboard.conftest import running_dashboard
from tests.reliability.servers import api_env, running_api
from tests.service.workers import running_worker, succeeded_trace

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
NAME = "ridge_cg"
FOLDER = PurePosixPath("solvers/algorithms") / NAME  # the one folder the recipe adds
FILE_BLOCK = re.compile(r"<!-- contributing:file (\S+) -->\n```python\n(.*?)```", re.S)
DATASET = {
    "kind": "synthetic",
    "generator": "regression",
    "n_samples": 300,
    "n_features": 40,
    "density": 0.2,
    "seed": 1,
}


def recipe() -> list[tuple[PurePosixPath, str]]:
    """(path, source) of each file of the recipe in CONTRIBUTING.md."""
    files = FILE_BLOCK.findall((REPO / "CONTRIBUTING.md").read_text())
    return [(PurePosixPath(path), source) for path, source in files]


def test_the_recipe_is_one_new_folder_of_a_spec_and_a_method():
    files = recipe()
    assert sorted(path.name for path, _ in files) == ["__init__.py", "method.py"]
    assert {path.parent for path, _ in files} == {FOLDER}
    assert not (REPO / FOLDER).exists(), f"{FOLDER} exists already: the recipe needs a new name"


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    """A folder holding the package ``faceoff`` with the recipe applied: the folder the
    recipe adds to (solvers/) copied, every other subpackage linked to the repository's."""
    root = tmp_path_factory.mktemp("contrib")
    folder = FOLDER.parts[0]
    mapping = read_configuration(REPO / "pyproject.toml")["tool"]["setuptools"]["package-dir"]
    package = root / "faceoff"
    package.mkdir()
    shutil.copy(REPO / mapping["faceoff"] / "__init__.py", package / "__init__.py")
    for name, where in mapping.items():
        parts = name.split(".")
        if len(parts) != 2:
            continue
        if where == folder:
            copy = package / parts[1]
            shutil.copytree(REPO / where, copy, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            (package / parts[1]).symlink_to(REPO / where)
    for path, source in recipe():
        (copy / path.relative_to(folder)).parent.mkdir(parents=True, exist_ok=True)
        (copy / path.relative_to(folder)).write_text(source)
    return root


@pytest.fixture
def shadowed(tree, monkeypatch) -> dict[str, str]:
    """Every process started from here on imports ``faceoff`` from ``tree``."""
    shadow = {"PYTHONPATH": str(tree), "PYTHONSAFEPATH": "1", "UVICORN_APP_DIR": str(tree)}
    for name, value in shadow.items():
        monkeypatch.setenv(name, value)
    return shadow


def python(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args], cwd=REPO, capture_output=True, text=True, timeout=timeout
    )


def test_the_catalogue_finds_the_new_folder_last_of_ours_and_light(shadowed):
    """The copy's catalogue lists the solver after the built-ins (the peers follow), with
    the method beside its spec; its spec imports no Numba."""
    code = (
        "import json, sys; import faceoff.solvers.catalogue as c; "
        f"import faceoff.solvers.algorithms.{NAME}; assert 'numba' not in sys.modules; "
        "print(json.dumps([c.__file__, [(n, s.requires, s.module) for n, s in "
        "c.catalogue().items()]]))"
    )
    found = python("-c", code)
    assert found.returncode == 0, found.stderr
    where, specs = json.loads(found.stdout)
    assert where.startswith(shadowed["PYTHONPATH"]), where
    ours = [(name, module) for name, requires, module in specs if requires is None]
    assert ours[-1] == (NAME, f"faceoff.solvers.algorithms.{NAME}.method")
    assert NAME not in catalogue()  # this process runs the repository's own catalogue


def test_the_cli_lists_and_runs_the_new_solver(shadowed):
    listed = python("-m", "faceoff.cli.main", "solvers")
    assert listed.returncode == 0 and NAME in listed.stdout, listed.stderr
    solved = python(
        "-m",
        "faceoff.cli.main",
        "solve",
        "--synthetic",
        "regression",
        "--loss",
        "squared",
        "--l2",
        "1e-3",
        "--solver",
        NAME,
        "--tol",
        "1e-10",
        "--format",
        "jsonl",
    )
    assert solved.returncode == 0, solved.stderr
    summary = json.loads(solved.stdout.strip().splitlines()[-1])["summary"]
    assert summary["solver"] == NAME and summary["stop_reason"] == "converged", summary
    assert summary["gap"] <= 1e-10 * max(1.0, abs(summary["primal"])), summary


def test_the_service_validates_runs_and_lists_the_new_solver(
    tree, shadowed, settings_for, sqlite_url, redis_url, page, tmp_path
):
    settings = settings_for(sqlite_url, redis_url)
    with (
        running_api(api_env(settings, **shadowed), tmp_path / "api.log") as api,
        running_worker(settings, cwd=tree) as worker,
    ):
        solvers = httpx.get(f"{api.url}/solvers", timeout=30).json()
        assert NAME in {s["name"] for s in solvers["data"]}, solvers
        created = httpx.post(
            f"{api.url}/datasets", json={"name": "regression", "source": DATASET}, timeout=60
        )
        assert created.status_code == 201, created.text
        job = {"dataset": "regression", "solver": NAME, "loss": "squared", "l2": 1e-3}
        refused = httpx.post(f"{api.url}/jobs", json={**job, "loss": "logistic"}, timeout=30)
        assert refused.status_code == 422 and NAME in refused.text, refused.text
        unknown = httpx.post(f"{api.url}/jobs", json={**job, "params": {"tau": 1}}, timeout=30)
        assert unknown.status_code == 422 and "tau" in unknown.text, unknown.text
        low = httpx.post(f"{api.url}/jobs", json={**job, "params": {"refresh": 0}}, timeout=30)
        assert low.status_code == 422 and "'refresh'" in low.text, low.text
        stop = {"max_epochs": 2000, "max_seconds": 60, "tol": 1e-10}
        text = httpx.post(f"{api.url}/jobs", json={**job, "params": {"refresh": "20"}}, timeout=30)
        assert text.status_code == 422 and "expected an integer" in text.text, text.text
        typed = {**job, "params": {"refresh": 20}, "stop": stop}
        accepted = httpx.post(f"{api.url}/jobs", json=typed, timeout=30)
        assert accepted.status_code == 201, accepted.text
        assert accepted.json()["spec"]["params"] == {"refresh": 20}, accepted.json()
        last = succeeded_trace(api.url, accepted.json()["id"], worker)[-1]
        assert last["gap"] <= 1e-10 * max(1.0, abs(last["primal"])), last

    with running_dashboard(sqlite_url, extra_env=shadowed) as base:
        page.goto(f"{base}/")
        page.wait_for_selector(f"#runs-table :text('{NAME}')", timeout=60_000)


def test_the_generated_tests_cover_the_new_solver(shadowed, tmp_path):
    report = tmp_path / "report.xml"
    ran = python(
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "--import-mode=append",  # the repository last on sys.path: ``tests`` from it, not faceoff
        "tests/solvers/test_reference.py",
        "-k",
        NAME,
        f"--junitxml={report}",
        timeout=900,
    )
    assert ran.returncode == 0, ran.stdout[-3000:]
    cases = {case.get("name") for case in ET.parse(report).iter("testcase")}
    from tests.solvers.problems import DATASETS

    expected = {
        f"test_matches_reference_and_certifies[{NAME}-default-squared-l2-{d}]" for d in DATASETS
    }
    expected.add(f"test_ridge_matches_closed_form[{NAME}-default]")
    assert cases == expected, cases
