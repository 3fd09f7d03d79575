"""Held-out metrics as a researcher sees them (issue 40): a sweep with a random hold-out,
submitted through the API and run by a real Celery worker, read by ``python -m
faceoff.dashboard`` in headless Chromium. The compare page draws its test-loss and
test-accuracy curves and says which job has none; the sweep page ranks the settings by the
time their test loss settles, and leaves the job without held-out metrics unranked, saying
why."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import update

from faceoff.api.main import create_app
from faceoff.core.db import session_scope
from faceoff.core.migrate import upgrade
from faceoff.core.models import Job
from tests.api.test_routes import LOCAL
from tests.dashboard.conftest import running_dashboard
from tests.dashboard.test_comparisons_browser import _figure, _shot, _wait_drawn
from tests.service.workers import running_worker, wait_for

SYNTHETIC = {
    "kind": "synthetic",
    "generator": "classification",
    "n_samples": 800,
    "n_features": 40,
    "density": 0.3,
    "seed": 0,
}
HOLD_OUT = {"split": "random", "fraction": 0.25, "seed": 0}
SWEEP = {
    "name": "held-out",
    "datasets": ["synthetic-800x40"],
    "losses": ["logistic"],
    "l2": [1e-3],
    "solvers": ["lbfgs", "agd"],
    "stop": {"max_epochs": 200, "max_seconds": 10, "tol": 1e-10},
    "test": HOLD_OUT,
}
# a job without held-out metrics on another weight, put in the sweep as a job of a sweep
# made before test splits existed would be
PLAIN = {"dataset": "synthetic-800x40", "loss": "logistic", "l2": 1e-4, "solver": "lbfgs"}


def _done(api, path: str) -> bool:
    found = api.get(path).json()
    if "progress" in found:
        return sum(found["progress"].get(s, 0) for s in ("succeeded", "failed")) == found["n_jobs"]
    return found["status"] in ("succeeded", "failed")


@pytest.fixture
def finished_sweep(sqlite_url, redis_url, settings_for):
    """(sweep id, its jobs, the plain job's id) once all have run."""
    upgrade(sqlite_url)
    settings = settings_for(sqlite_url, redis_url)
    with (
        TestClient(create_app(settings), client=LOCAL) as api,
        running_worker(settings) as worker,
    ):
        created = api.post(
            "/api/v1/datasets", json={"name": "synthetic-800x40", "source": SYNTHETIC}
        )
        assert created.status_code == 201, created.text
        sweep = api.post("/api/v1/sweeps", json=SWEEP)
        assert sweep.status_code == 201, sweep.text
        sweep_id = sweep.json()["id"]
        plain = api.post("/api/v1/jobs", json=PLAIN)
        assert plain.status_code == 201, plain.text
        plain_id = plain.json()["id"]
        wait_for(lambda: _done(api, f"/api/v1/sweeps/{sweep_id}"), 300, "the sweep", worker)
        wait_for(lambda: _done(api, f"/api/v1/jobs/{plain_id}"), 300, "the plain job", worker)
        jobs = api.get("/api/v1/jobs", params={"sweep_id": sweep_id}).json()["data"]
        assert {j["status"] for j in jobs} == {"succeeded"} and len(jobs) == 2
        trace = api.get(f"/api/v1/jobs/{jobs[0]['id']}/trace").json()
        assert set(trace["data"][-1]["extras"]["test"]) == {"loss", "accuracy"}
    with session_scope(sqlite_url) as session:
        session.execute(update(Job).where(Job.id == plain_id).values(sweep_id=sweep_id))
    return sweep_id, jobs, plain_id


def test_held_out_curves_and_the_ranking_by_settling(finished_sweep, sqlite_url, page, tmp_path):
    sweep_id, jobs, plain_id = finished_sweep
    with running_dashboard(sqlite_url) as base:
        page.goto(f"{base}/compare?sweep={sweep_id}&y=test_loss&logy=linear")
        _wait_drawn(page, "compare-graph")
        figure = _figure(page, "compare-graph")
        curves = [t for t in figure["data"] if t["showlegend"]]
        assert sorted(t["name"] for t in curves) == ["agd", "lbfgs"]  # the plain job: none
        for curve in curves:  # the test loss falls as the solver fits
            assert len(curve["y"]) > 2 and curve["y"][-1] < curve["y"][0]
        status = page.locator("#compare-status")
        status.get_by_text("without held-out metrics not drawn").wait_for()
        assert f"1 job(s) without held-out metrics not drawn (job {plain_id})" in (
            status.inner_text()
        )
        title = "#compare-graph .g-ytitle"
        assert page.locator(title).first.text_content() == "test loss (held-out)"
        _shot(page, tmp_path, "heldout-compare-loss")
        page.locator("#compare-y").get_by_text("test accuracy / R²", exact=True).click()
        page.wait_for_function(
            f"document.querySelector('{title}').textContent.startsWith('test accuracy')"
        )
        page.wait_for_url(lambda url: "y=test_score" in url)
        for curve in _figure(page, "compare-graph")["data"]:
            assert all(0 <= y <= 1 for y in curve["y"])  # accuracies
        _shot(page, tmp_path, "heldout-compare-accuracy")

        page.goto(f"{base}/sweep/{sweep_id}")
        _wait_drawn(page, "sweep-settle-ranking")
        settle = _figure(page, "sweep-settle-ranking")
        ranks, grey = settle["data"][0], settle["data"][1]
        assert sorted(ranks["y"]) == ["agd", "lbfgs"]  # the settings ranked, by name
        assert sorted(t for row in ranks["text"] for t in row if t) == ["1", "2"]
        assert "no held-out metrics" in [t for row in grey["text"] for t in row]
        status = page.locator("#sweep-settle-status").inner_text()
        assert "time for the test loss to stay within 1% of its final value" in status
        assert "1 job(s) without held-out metrics: not ranked" in status
        table = page.locator("#sweep-settle-table tbody tr")
        rows = [table.nth(i).inner_text().split("\t") for i in range(table.count())]
        by_setting = {(r[0], r[1]): r for r in rows}
        assert len(rows) == 3, rows
        ranked = [r for r in rows if r[3].strip() in ("1", "2")]
        assert {r[1] for r in ranked} == {"agd", "lbfgs"}
        for r in ranked:  # a time within the run's, no reason
            assert r[2].endswith("seconds") and not r[4].strip()
        unranked = [r for r in rows if r not in ranked]
        assert unranked[0][1] == "lbfgs" and unranked[0][4] == "no held-out metrics"
        assert unranked[0][0] != ranked[0][0], by_setting  # its own objective (l2 = 1e-4)
        page.locator("#sweep-settle-ranking").scroll_into_view_if_needed()
        _shot(page, tmp_path, "heldout-sweep")
