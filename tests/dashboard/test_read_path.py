"""One read path: the dashboard shows the points the API serves, and reads only through
core (no query of its own)."""

from __future__ import annotations

import ast
import base64
from pathlib import Path

import numpy as np
from fastapi.testclient import TestClient

from faceoff.api.main import create_app
from faceoff.dashboard import rows
from tests.backends import LOCAL
from tests.dashboard import factories
from tests.dashboard.test_pages import compare

DASHBOARD = Path(__file__).resolve().parents[2] / "dashboard"
# what opening a session may use; any other database access belongs in faceoff.core
SESSION_CALLS = {"execute", "scalars", "scalar", "query", "get", "add", "flush", "commit"}
ALLOWED_SQLALCHEMY = {"sqlalchemy.exc"}  # error types, to report a database failure
ALLOWED_CORE_DB = {"read_session", "brief", "is_unavailable"}
# computing what core computes: statistics and advice (core.datasets.dataset_statistics)
RECOMPUTING = {"faceoff.data.stats", "faceoff.data.transforms", "faceoff.core.jsonsafe"}


def _array(data) -> np.ndarray:
    """A figure array as JSON: a list, or Plotly's typed array {dtype, bdata, shape}."""
    if not isinstance(data, dict):
        return np.asarray(data, dtype=float)
    flat = np.frombuffer(base64.b64decode(data["bdata"]), dtype=data["dtype"]).astype(float)
    shape = data.get("shape")
    if isinstance(shape, str):
        shape = [int(n) for n in shape.split(",")]
    return flat.reshape(shape) if shape else flat


def test_the_compare_figure_draws_the_points_of_the_api_trace(client, database_url, settings_for):
    """Same job, same point count: the figure's points are the API's, in order."""
    _, long = factories.add_sweep(database_url, settings=factories.SETTINGS[:2], n_points=1200)
    _, (short,) = factories.add_sweep(
        database_url, settings=factories.SETTINGS[2:3], n_points=600, dataset_name="second"
    )
    running = factories.add_running_job(database_url, n_points=300)
    with TestClient(create_app(settings_for(database_url)), client=LOCAL) as api:
        client.use(database_url)
        for job in (*long, short, running):
            params = {"max_points": rows.MAX_POINTS}
            response = api.get(f"/api/v1/jobs/{job}/trace", params=params)
            assert response.status_code == 200, response.text
            served = response.json()["data"]
            assert 2 < len(served) <= rows.MAX_POINTS
            assert len(served) < rows.MAX_POINTS or job == running  # thinned, but for one
            out = compare(client, jobs=str(job), x="epoch", y="primal", logy="linear")
            (curve,) = out["compare-graph"]["figure"]["data"]
            points = _array(curve["customdata"])  # job, seq, iteration, epoch, time, P, gap
            assert points[:, 1].tolist() == [p["seq"] for p in served]
            assert _array(curve["x"]).tolist() == [p["epoch"] for p in served]
            assert _array(curve["y"]).tolist() == [p["primal"] for p in served]
            assert points[:, 6].tolist() == [p["gap"] for p in served]


def _violations(path: Path) -> list[str]:
    """What in the module at ``path`` reads the database or computes core's results."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in ast.walk(tree):
        where = f"{path.name}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            modules = [node.module or ""]
            names = {alias.name for alias in node.names}
            if node.module == "faceoff.core.db":
                found += [f"{where}: imports {n} from core.db" for n in names - ALLOWED_CORE_DB]
            if node.module == "faceoff.core.datasets" and "load_matrix" in names:
                found.append(f"{where}: loads a dataset")
        else:
            modules = []
        for module in modules:
            if module.split(".")[0] == "sqlalchemy" and module not in ALLOWED_SQLALCHEMY:
                found.append(f"{where}: imports {module}")
            if module in RECOMPUTING:
                found.append(f"{where}: imports {module}")
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in SESSION_CALLS
            and isinstance(node.func.value, ast.Name)
            and "session" in node.func.value.id
        ):
            found.append(f"{where}: {node.func.value.id}.{node.func.attr}(...)")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id == "select":
                found.append(f"{where}: select(...)")
    return found


def test_the_dashboard_makes_no_query_of_its_own():
    """Every read goes through faceoff.core; the dashboard only opens read-only sessions
    and computes no statistics of its own."""
    files = sorted(DASHBOARD.rglob("*.py"))
    assert len(files) >= 10
    violations = [v for path in files for v in _violations(path)]
    assert violations == []


def test_the_check_finds_a_query(tmp_path):
    """The check above sees a query and a statistic computed in a page (not vacuous)."""
    page = tmp_path / "page.py"
    page.write_text(
        (DASHBOARD / "pages" / "runs.py").read_text()
        + "\nfrom sqlalchemy import select\nfrom faceoff.data.stats import dataset_stats\n\n"
        "def _sneaky(session):\n    return session.scalars(select(Job))\n"
    )
    assert len(_violations(page)) == 4
