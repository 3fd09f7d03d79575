"""examples/faceoff-plugin-example, installed with pip (into a folder on PYTHONPATH, so the
test environment itself is left as it was) next to a distribution of broken plug-ins: the
example's own tests pass; the CLI and the API list it and report each broken plug-in without
failing; a real worker runs a job of it on PostgreSQL; the dashboard shows the run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.dashboard.conftest import running_dashboard
from tests.reliability.servers import api_env, running_api
from tests.service.workers import running_worker, succeeded_trace

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "faceoff-plugin-example"
NAME = "example.sparsa"
BROKEN_SPECS = """
from faceoff.solvers.spec import SolverSpec

SHADOW = SolverSpec("dual_cd", "a copy", "none", "dual", module="broken_specs")
NUMBER = 42
"""
BROKEN_ENTRY_POINTS = """[faceoff.solvers]
dual_cd = broken_specs:SHADOW
acme.missing = no_such_module_here:SPEC
acme.number = broken_specs:NUMBER
"""
DATASET = {
    "kind": "synthetic",
    "generator": "classification",
    "n_samples": 400,
    "n_features": 50,
    "density": 0.2,
    "seed": 2,
}


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """A folder with the example installed by pip and a hand-made broken distribution."""
    target = tmp_path_factory.mktemp("plugins")
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps"]
    pip += ["--no-build-isolation", "--no-index", "--target", str(target), str(EXAMPLE)]
    installed = subprocess.run(pip, capture_output=True, text=True, timeout=300)
    assert installed.returncode == 0, installed.stderr
    (target / "broken_specs.py").write_text(BROKEN_SPECS)
    info = target / "broken_faceoff_plugins-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: broken-faceoff-plugins\nVersion: 0.1\n"
    )
    (info / "entry_points.txt").write_text(BROKEN_ENTRY_POINTS)
    return target


@pytest.fixture
def plugged(site, monkeypatch) -> dict[str, str]:
    """Every process started from here on sees the installed plug-ins."""
    monkeypatch.setenv("PYTHONPATH", str(site))
    return {"PYTHONPATH": str(site)}


def python(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=600
    )


def test_the_examples_own_tests_pass(plugged):
    ran = python("-m", "pytest", "-q", "-p", "no:cacheprovider", "tests", cwd=EXAMPLE)
    assert ran.returncode == 0, ran.stdout[-3000:]
    assert " passed" in ran.stdout.splitlines()[-1]


def test_the_cli_lists_it_and_reports_the_broken_plugins(plugged):
    listed = python("-m", "faceoff.cli.main", "solvers", "--format", "json")
    assert listed.returncode == 0, listed.stderr
    names = [s["name"] for s in json.loads(listed.stdout)]
    assert NAME in names and names.count("dual_cd") == 1
    for name in ("dual_cd", "acme.missing", "acme.number"):
        assert f"plug-in '{name}' of broken-faceoff-plugins 0.1 is left out" in listed.stderr
    assert "No module named 'no_such_module_here'" in listed.stderr


def test_the_service_runs_it_and_the_dashboard_shows_it(
    plugged, settings_for, postgres_url, redis_url, page, tmp_path
):
    settings = settings_for(postgres_url, redis_url)
    with (
        running_api(api_env(settings, **plugged), tmp_path / "api.log") as api,
        running_worker(settings) as worker,
    ):
        solvers = httpx.get(f"{api.url}/solvers", timeout=30).json()
        assert NAME in {s["name"] for s in solvers["data"]}
        broken = {b["name"]: b for b in solvers["broken_plugins"]}
        assert set(broken) == {"dual_cd", "acme.missing", "acme.number"}, broken
        assert broken["dual_cd"]["error"] == "name 'dual_cd' is taken by a built-in solver"
        assert {b["distribution"] for b in broken.values()} == {"broken-faceoff-plugins 0.1"}

        created = httpx.post(
            f"{api.url}/datasets", json={"name": "small", "source": DATASET}, timeout=60
        )
        assert created.status_code == 201, created.text
        job = {"dataset": "small", "solver": NAME, "loss": "logistic", "l2": 1e-3}
        bad = httpx.post(f"{api.url}/jobs", json={**job, "params": {"memory": 0}}, timeout=30)
        assert bad.status_code == 422 and "memory" in bad.text, bad.text
        stop = {"max_epochs": 5000, "max_seconds": 60, "tol": 1e-10}
        accepted = httpx.post(
            f"{api.url}/jobs", json={**job, "params": {"memory": 8}, "stop": stop}, timeout=30
        )
        assert accepted.status_code == 201, accepted.text
        points = succeeded_trace(api.url, accepted.json()["id"], worker)
        assert points[-1]["gap"] <= 1e-10 * max(1.0, abs(points[-1]["primal"])), points[-1]
        assert all(p["gap"] >= -1e-12 for p in points)

    with running_dashboard(postgres_url, extra_env=plugged) as base:
        page.goto(f"{base}/")
        page.wait_for_selector(f"#runs-table :text('{NAME}')", timeout=60_000)


def test_without_the_plugin_its_jobs_are_refused(settings_for, sqlite_url, redis_url, tmp_path):
    """The same request to a service where the plug-in is not installed: a 422 naming it."""
    settings = settings_for(sqlite_url, redis_url)
    with running_api(api_env(settings), tmp_path / "api.log") as api:
        job = {"dataset": "small", "solver": NAME, "loss": "logistic", "l2": 1e-3}
        refused = httpx.post(f"{api.url}/jobs", json=job, timeout=30)
        assert refused.status_code == 422, refused.text
        assert f"unknown solver '{NAME}'" in refused.text, refused.text
