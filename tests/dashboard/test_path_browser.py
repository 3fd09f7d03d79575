"""What a researcher sees of a path race (headless Chromium against the dashboard): each
path job's time along the λ grid and its support size, λ decreasing to the right, a λ left
above its tol drawn open and said so, one table row of totals per job, and the jobs that are
not paths named as such. The traces are solve_path's own on a small Lasso, written as the
worker writes them."""

from __future__ import annotations

import json
from datetime import timedelta

import numpy as np

from faceoff.core.db import session_scope
from faceoff.core.models import SUCCEEDED, Job, TracePoint, utcnow
from faceoff.core.specs import JobSpec, canonical_job, objective_hash, spec_hash
from faceoff.data.synthetic import correlated
from faceoff.solvers.path import solve_path
from faceoff.solvers.problem import build_problem
from faceoff.solvers.trace import StopRules
from tests.dashboard import factories
from tests.dashboard.conftest import running_dashboard

PLOT = "document.querySelector('#path-graph .js-plotly-plot')"
GRID = {"n_lambdas": 8, "ratio": 0.01}


def add_path_job(url: str, dataset_id: int, dataset: str, solver: str, stop: StopRules) -> int:
    A, b = correlated(80, 200, rho=0.5, seed=1)
    problem = build_problem(A, b, "squared", l1=1.0, l2=0.0)
    result = solve_path(problem, solver, None, stop=stop, n_lambdas=8, ratio=0.01)
    limits = {"tol": stop.tol, "max_epochs": stop.max_epochs, "max_seconds": stop.max_seconds}
    spec = canonical_job(
        JobSpec(dataset=dataset, loss="squared", l2=0.0, solver=solver, path=GRID, stop=limits)
    )
    with session_scope(url) as session:
        job = Job(
            dataset_id=dataset_id,
            spec=spec.model_dump(mode="json"),
            spec_hash=spec_hash(spec),
            objective_hash=objective_hash(spec.objective()),
            solver=solver,
            loss="squared",
            status=SUCCEEDED,
            stop_reason=result.stop_reason,
            started_at=utcnow() - timedelta(seconds=5),
            finished_at=utcnow(),
            n_points=len(result.trace),
        )
        session.add(job)
        session.flush()
        for p in result.trace:
            extras = json.loads(json.dumps(p.extras, default=float))
            session.add(
                TracePoint(job_id=job.id, seq=p.seq, iteration=p.iteration, epoch=p.epoch,
                           time_s=p.time_s, primal=p.primal, dual=p.dual, gap=p.gap,
                           nnz_x=p.nnz_x, extras=extras)
            )  # fmt: skip
        return job.id


def test_a_path_race_reads_as_a_race(sqlite_url, page, tmp_path):
    dataset_id = factories.add_dataset(sqlite_url)
    name = "synthetic-300x40"
    certified = add_path_job(
        sqlite_url, dataset_id, name, "ws_cd", StopRules(tol=1e-8, max_epochs=1e4)
    )
    short = add_path_job(sqlite_url, dataset_id, name, "agd", StopRules(tol=1e-8, max_epochs=3))
    with session_scope(sqlite_url) as session:
        one = factories.add_job(session, dataset_id, name, "dual_cd", {}).id
    with running_dashboard(sqlite_url) as base:
        page.goto(f"{base}/path?jobs={certified},{short},{one}")
        legend = page.locator("#path-graph .legend .traces")
        legend.nth(1).wait_for()
        names = [legend.nth(i).text_content() for i in range(legend.count())]
        assert len(names) == 2
        assert names[0].startswith(f"ws_cd · job {certified} (8/8 λ, ")
        assert names[1].startswith(f"agd · job {short} (8/8 λ, ")
        assert names[1].endswith(" λ above tol)") and "above tol" not in names[0]
        status = page.locator("#path-status").inner_text()
        assert status.startswith("2 path jobs · 1 chosen jobs solve one l1")
        layout = f"{PLOT}._fullLayout"
        assert page.evaluate(f"{layout}.xaxis.type") == "log"
        low, high = page.evaluate(f"{layout}.xaxis.range")
        assert low > high  # λ decreases to the right
        assert "l1 / λ_max" in page.evaluate(f"{layout}.xaxis2.title.text")
        # every ws_cd λ is certified to tol: filled markers; agd's 3 epochs leave λs open
        symbols = page.evaluate(f"{PLOT}._fullData.map(t => t.marker.symbol)")
        assert set(symbols[0]) == {"circle"}
        assert "circle-open" in symbols[2]
        # the path time only grows along the path; the support starts empty at λ_max
        times = page.evaluate(f"{PLOT}._fullData[0].y")
        assert list(times) == sorted(times) and times[-1] > 0
        support = page.evaluate(f"{PLOT}._fullData[1].y")
        assert support[0] == 0 and max(support) > 0
        rows = page.locator("#path-table tbody tr")
        rows.nth(2).wait_for()  # the header and the two jobs
        text = [rows.nth(i).inner_text() for i in range(rows.count())]
        row_of = {solver: next(t for t in text if solver in t) for solver in ("ws_cd", "agd")}
        assert "8 of 8" in row_of["ws_cd"] and "yes (tol 1e-08)" in row_of["ws_cd"]
        assert "8 of 8" in row_of["agd"] and "no" in row_of["agd"].split()
        shot = tmp_path / "path.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 10_000
        with page.expect_download() as download:
            page.get_by_role("button", name="CSV", exact=True).click()
        saved = tmp_path / "path.csv"
        download.value.save_as(saved)
        lines = saved.read_text().splitlines()
        assert lines[0].startswith("job,solver,index,l1,ratio")
        assert len(lines) == 1 + 16
        ratios = [float(line.split(",")[4]) for line in lines[1:9]]
        assert ratios[0] == 1.0 and np.allclose(ratios[-1], 0.01)
