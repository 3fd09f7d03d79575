"""The dashboard against the running service: a sweep submitted through the API, run by a real
Celery worker on a real broker, read by ``python -m faceoff.dashboard`` in headless Chromium.

With ``FACEOFF_WRITE_SCREENSHOT=1`` the first test also writes the README's screenshot,
``docs/compare.png``, and one of every other page of the same sweep (``docs/PAGE.png``).
"""

from __future__ import annotations

import os
import shutil

import pytest
from fastapi.testclient import TestClient

from faceoff.api.main import create_app
from faceoff.cli.up import DEMO_DATASET
from faceoff.core.migrate import upgrade
from tests.api.test_routes import LOCAL
from tests.dashboard.conftest import REPO, point_count_js, running_dashboard
from tests.service.workers import running_worker, wait_for

PLOT = "document.querySelector('#compare-graph .js-plotly-plot')"
DOCS = REPO / "docs"
SYNTHETIC = {
    "kind": "synthetic",
    "generator": "classification",
    "n_samples": 2000,
    "n_features": 300,
    "density": 0.05,
    "seed": 0,
}
SWEEP = {
    "name": "readme: synthetic 2000×300, logistic, two l2 weights, with peers",
    "datasets": ["synthetic-2000x300"],
    "losses": ["logistic"],
    "l2": [1e-3, 1e-4],
    "solvers": [  # the issue's race: ours beside peers of three libraries
        "dual_cd",
        {"solver": "dual_cd", "params": {"sampling": "importance"}},
        "primal_cd",
        "saga",
        "lbfgs",
        {"solver": "spdc", "params": {"batch_size": 8}},
        "sklearn.liblinear",
        "sklearn.lbfgs",
        "sklearn.saga",
        "cyanure",
        "lightning.cd",
    ],
    "seeds": [0],
    "stop": {"max_epochs": 300, "max_seconds": 10, "tol": 1e-10},
}


@pytest.fixture(scope="module")
def service(tmp_path_factory, redis_url, module_settings_for):
    """The API (in process) and one real worker process on SQLite and Redis, shared by the
    module's tests (each waits for its own jobs), and the database's URL."""
    url = f"sqlite:///{tmp_path_factory.mktemp('live') / 'faceoff.db'}"
    upgrade(url)
    settings = module_settings_for(url, redis_url)
    with (
        TestClient(create_app(settings), client=LOCAL) as api,
        running_worker(settings, concurrency=2) as w,
    ):
        created = api.post(
            "/api/v1/datasets", json={"name": "synthetic-2000x300", "source": SYNTHETIC}
        )
        assert created.status_code == 201, created.text
        yield api, w, url


def _succeeded(api) -> int:
    return api.get("/api/v1/jobs", params={"status": "succeeded"}).json()["count"]


def _finished(api, sweep_id: int) -> bool:
    sweep = api.get(f"/api/v1/sweeps/{sweep_id}").json()
    done = sum(sweep["progress"].get(s, 0) for s in ("succeeded", "failed", "cancelled"))
    return done == sweep["n_jobs"]


@pytest.mark.slow
def test_compare_page_of_a_finished_sweep(service, page, tmp_path):
    api, worker, sqlite_url = service
    succeeded = _succeeded(api)
    created = api.post("/api/v1/sweeps", json=SWEEP)
    assert created.status_code == 201, created.text
    sweep_id, n_jobs = created.json()["id"], created.json()["n_jobs"]
    wait_for(lambda: _finished(api, sweep_id), 300, "the sweep to finish", worker)
    assert api.get(f"/api/v1/sweeps/{sweep_id}").json()["progress"]["succeeded"] == n_jobs
    for l2 in SWEEP["l2"]:  # a certified P* per objective
        objective = {"dataset": "synthetic-2000x300", "loss": "logistic", "l2": l2}
        reference = api.post("/api/v1/references", json=objective)
        assert reference.status_code in (200, 201, 202), reference.text
    wait_for(
        lambda: _succeeded(api) == succeeded + n_jobs + len(SWEEP["l2"]),
        300,
        "the reference runs",
        worker,
    )
    legend_names = {  # one legend entry per solver setting, shared by the two panels
        # an auto default names what it chose (issue 34)
        "dual_cd (auto: permutation)",
        "dual_cd[sampling=importance] (auto: plain)",
        "primal_cd (auto: newton + permutation)",
        "saga (auto: step_scale=3)",
        "lbfgs",
        "spdc[batch_size=8]",
        "sklearn.liblinear (refit)",
        "sklearn.lbfgs (refit)",
        "sklearn.saga (refit)",
        "cyanure (refit)",
        "lightning.cd (callback)",
    }
    with running_dashboard(sqlite_url) as base:
        page.goto(f"{base}/compare?sweep={sweep_id}&x=time&logy=linear")
        legend = page.locator("#compare-graph .legend .traces")
        legend.nth(len(legend_names) - 1).wait_for()
        assert legend.count() == len(legend_names) and n_jobs == 2 * len(legend_names)
        assert {legend.nth(i).text_content() for i in range(legend.count())} == legend_names
        titles = page.locator("#compare-graph .annotation-text").all_text_contents()
        for l2 in ("l2=0.001", "l2=0.0001"):  # one panel per objective, titled with it
            assert any(t.endswith(l2) and "logistic" in t for t in titles), titles
        page.locator("#compare-x").get_by_text("epochs", exact=True).click()
        page.locator("#compare-logy").get_by_text("log", exact=True).click()
        page.wait_for_function(
            f"{PLOT}._fullLayout.yaxis.type === 'log'"
            f" && {PLOT}._fullLayout.xaxis.title.text.startsWith('epochs')"
        )
        page.wait_for_url(lambda url: "x=epoch" in url and "logy=log" in url)
        assert "P* certified" in page.locator("#compare-graph").inner_text()
        shot = tmp_path / "compare.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 10_000
        dataset_id = api.get("/api/v1/datasets").json()["data"][0]["id"]
        pages = {  # every other page of the sweep, once drawn
            "sweep": (f"/sweep/{sweep_id}", "#sweep-ranking .heatmaplayer"),
            "runs": (f"/?sweep={sweep_id}", "#runs-table td"),
            "sweeps": ("/sweeps", "#sweeps-table td"),
            "datasets": ("/datasets", "#datasets-table td"),
            "dataset": (f"/dataset/{dataset_id}", "#dataset-graph .barlayer .trace"),
            "profiles": (f"/profiles?sweep={sweep_id}", "#profiles-data .legend"),
        }
        for name, (path, drawn) in pages.items():
            page.goto(base + path)
            page.wait_for_selector(drawn, timeout=60_000)
            page.wait_for_timeout(1000)  # the last figure's relayout
            page.screenshot(path=str(tmp_path / f"{name}.png"), full_page=True)
        if os.environ.get("FACEOFF_WRITE_SCREENSHOT"):  # refresh the README's pictures
            for name in ("compare", *pages):
                shutil.copyfile(tmp_path / f"{name}.png", DOCS / f"{name}.png")


@pytest.mark.slow
def test_a_running_jobs_curve_grows(service, page):
    api, worker, sqlite_url = service
    job = api.post(
        "/api/v1/jobs",
        json={
            "dataset": "synthetic-2000x300",
            "loss": "logistic",
            "l2": 1e-6,
            "solver": "saga",
            # tiny steps, and a limit far beyond the test: still running when it is looked at,
            # however loaded the machine (it is cancelled at the end)
            "params": {"step_scale": 1e-3},
            "stop": {"max_epochs": 1e6, "max_seconds": 120, "tol": 0},
        },
    ).json()
    try:
        wait_for(
            lambda: api.get(f"/api/v1/jobs/{job['id']}").json()["n_points"] >= 5,
            120,
            "the job's first points",
            worker,
        )
        with running_dashboard(sqlite_url) as base:
            page.goto(f"{base}/compare?jobs={job['id']}&x=time&y=gap&logx=log")
            count = point_count_js("compare-graph")
            page.wait_for_function(f"{count} > 0")
            # the trace is thinned to at most ~500 points, so growth shows in its extent
            last_x = f"(() => {{ const x = {PLOT}._fullData[0].x; return x[x.length - 1]; }})()"
            before = page.evaluate(last_x)
            assert "live" in page.locator("#compare-status").inner_text()
            page.wait_for_function(f"{last_x} > {before}", timeout=20_000)
            assert page.evaluate(last_x) > before
            assert api.get(f"/api/v1/jobs/{job['id']}").json()["status"] == "running"
    finally:  # the module's other tests share the worker
        api.post(f"/api/v1/jobs/{job['id']}/cancel")
        wait_for(lambda: _terminal(api, job["id"]), 60, "the cancelled job to end", worker)


@pytest.mark.slow
def test_compare_page_marks_a_refit_trace(service, page, tmp_path):
    """sklearn.liblinear (traced by refits) beside dual_cd, both run by the real worker:
    the refit curve has a marker on each point (each is a fit of its own) and says
    "(refit)" in its legend entry; ours is a plain line."""
    api, worker, sqlite_url = service
    created = api.post("/api/v1/datasets", json=DEMO_DATASET)
    assert created.status_code == 201, created.text
    objective = {"dataset": "breast_cancer", "loss": "logistic", "l2": 1e-2}
    stop = {"max_epochs": 1000, "max_seconds": 10, "tol": 1e-10}
    ids = {}
    for solver in ("sklearn.liblinear", "dual_cd"):
        job = api.post("/api/v1/jobs", json={**objective, "solver": solver, "stop": stop})
        assert job.status_code == 201, job.text
        ids[solver] = job.json()["id"]
    jobs = {
        solver: wait_for(lambda job_id=job_id: _terminal(api, job_id), 300, f"job {job_id}", worker)
        for solver, job_id in ids.items()
    }
    assert {job["status"] for job in jobs.values()} == {"succeeded"}, jobs
    assert jobs["sklearn.liblinear"]["trace_mode"] == "refit"
    assert jobs["dual_cd"]["trace_mode"] == "native"
    n_fits = jobs["sklearn.liblinear"]["n_points"]
    with running_dashboard(sqlite_url) as base:
        page.goto(f"{base}/compare?jobs={ids['sklearn.liblinear']},{ids['dual_cd']}&y=gap")
        legend = page.locator("#compare-graph .legend .traces")
        legend.nth(1).wait_for()
        names = sorted(legend.nth(i).text_content() for i in range(2))
        assert names[0].startswith("dual_cd (auto: "), names  # what its auto defaults chose
        assert names[1] == "sklearn.liblinear (refit)", names
        curves = page.evaluate(
            f"{PLOT}._fullData.map(t => ({{name: t.name, mode: t.mode, n: t.x.length,"
            " symbol: t.marker && t.marker.symbol}))"
        )
        by_name = {curve["name"]: curve for curve in curves}
        by_name["dual_cd"] = by_name.pop(names[0])
        refit = by_name["sklearn.liblinear (refit)"]
        assert (refit["mode"], refit["symbol"]) == ("lines+markers", "circle")
        assert 2 <= refit["n"] <= n_fits  # the first fit's time axis point (0 s) is off a log x
        assert by_name["dual_cd"]["mode"] == "lines"
        # the markers are drawn: one per plotted fit, on the refit curve only
        markers = page.locator("#compare-graph .scatterlayer .trace .points path")
        assert markers.count() == refit["n"]
        assert "each marked point is its own fit" in page.locator("#compare-graph").inner_text()
        shot = tmp_path / "compare-refit.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 10_000
        # against the certified P* the same curves keep their marking, the note its place
        page.locator("#compare-y").get_by_text("(P − P*)/|P*|", exact=True).click()
        page.wait_for_function(f"{PLOT}._fullLayout.yaxis.title.text.startsWith('relative')")
        text = page.locator("#compare-graph").inner_text()
        assert "P* certified" in text and "each marked point is its own fit" in text
        page.screenshot(path=str(tmp_path / "compare-refit-subopt.png"), full_page=True)


def _terminal(api, job_id: int) -> dict | None:
    job = api.get(f"/api/v1/jobs/{job_id}").json()
    return job if job["status"] in ("succeeded", "failed", "cancelled") else None


LASSO_PATH = {  # the README's path race: the Lasso on leu (38 × 7129), 30 λ down to λ_max/100
    "dataset": "leu_recon",
    "loss": "squared",
    "l2": 0.0,
    "path": {"n_lambdas": 30, "ratio": 0.01},
    "stop": {"tol": 1e-6, "max_epochs": 100_000, "max_seconds": 120},
}


def test_a_lasso_path_race_on_the_paths_page(service, page, tmp_path):
    """Three warm-starting solvers down the same Lasso path, run by the real worker: the
    Paths page draws each one's λs, all certified to tol, from λ_max (empty model) down to
    supports of several features. With FACEOFF_WRITE_SCREENSHOT=1: docs/path.png."""
    api, worker, sqlite_url = service
    ids = []
    for solver in ("ws_cd", "primal_cd", "agd"):
        created = api.post("/api/v1/jobs", json={**LASSO_PATH, "solver": solver})
        assert created.status_code == 201, created.text
        ids.append(created.json()["id"])

    def done() -> bool:
        return all(api.get(f"/api/v1/jobs/{i}").json()["status"] == "succeeded" for i in ids)

    wait_for(done, 300, "the path jobs to succeed", worker)
    paths = [api.get(f"/api/v1/jobs/{i}/path").json() for i in ids]
    for path in paths:
        assert path["reached"] and len(path["steps"]) == 30, path
        assert path["steps"][0]["nnz"] == 0 and path["steps"][-1]["nnz"] > 5
    # one objective: the same λ_max and the same supports within the certified gaps
    assert len({round(p["lambda_max"], 12) for p in paths}) == 1
    with running_dashboard(sqlite_url) as base:
        page.goto(f"{base}/path?jobs={','.join(map(str, ids))}")
        legend = page.locator("#path-graph .legend .traces")
        legend.nth(2).wait_for()
        names = [legend.nth(i).text_content() for i in range(legend.count())]
        # primal_cd's legend names what its auto parameters chose
        assert [n.split(" · ")[0].split(" (")[0] for n in names] == ["ws_cd", "primal_cd", "agd"]
        assert all("(30/30 λ, " in n and "above tol" not in n for n in names), names
        page.locator("#path-table tbody tr").nth(3).wait_for()
        assert page.locator("#path-table").inner_text().count("yes (tol 1e-06)") == 3
        page.wait_for_timeout(500)
        page.screenshot(path=str(tmp_path / "path.png"), full_page=True)
        if os.environ.get("FACEOFF_WRITE_SCREENSHOT"):
            shutil.copyfile(tmp_path / "path.png", DOCS / "path.png")
