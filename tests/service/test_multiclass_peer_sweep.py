"""A K = 20 sweep racing our solvers against scikit-learn's and Cyanure's through the real
service — the API (uvicorn), PostgreSQL, Redis and a real Celery worker — then read in
headless Chromium: every job succeeds with every trace point certified through the K-class
Problem, and the compare, sweep and profiles pages name the objectives
``K = 20, one-vs-rest`` / ``K = 20, multinomial``.

The data is news20 cut small (the mirror's news20.rdatasets: 30 documents of each of its 20
groups, the columns they use), uploaded as an svmlight file: the full matrix (15,935 ×
62,061) takes minutes a job on a shared 2-core machine. With ``FACEOFF_WRITE_SCREENSHOT=1``
the compare page's picture is copied to ``docs/multiclass_compare.png``.
"""

from __future__ import annotations

import os
import shutil

import httpx
import numpy as np
import pytest

from tests.dashboard.conftest import REPO, running_dashboard
from tests.reliability.servers import api_env, running_api
from tests.service.workers import running_worker, wait_for

pytestmark = pytest.mark.slow

PER_CLASS = 30
TOL = 1e-8
SWEEP = {
    "name": "news20 K = 20, ours and peers",
    "datasets": ["news20-small"],
    "normalize": "rows",
    "losses": ["logistic"],
    "multiclass": ["ovr", "multinomial"],
    "l2": [1e-2, 1e-3],
    "solvers": ["dual_cd", "lbfgs", "sklearn.lbfgs", "sklearn.liblinear", "cyanure"],
    "seeds": [0],
    "stop": {"max_epochs": 5000, "max_seconds": 60, "tol": TOL},
}
# the smoothed hinge (no multinomial form), ours only: these peers have no smoothed hinge,
# and a sweep refuses a solver without one of its losses
HINGE = {
    **SWEEP,
    "name": "news20 K = 20, smoothed hinge",
    "losses": ["smooth_hinge"],
    "multiclass": ["ovr"],
    "solvers": ["dual_cd", "lbfgs"],
}
# per l2: logistic ovr × 5 solvers, logistic multinomial × 4 (liblinear has none: skipped),
# smoothed hinge ovr × 2
N_JOBS = 2 * (5 + 4 + 2)
TINY = 1e-12  # a certified gap is ≥ 0 up to rounding
DOCS = REPO / "docs"


def news20_small(path) -> None:
    """PER_CLASS rows of each news20 group, the columns they use, as svmlight."""
    from sklearn.datasets import dump_svmlight_file

    from faceoff.data.cache import load_dataset
    from tests.datasets import mirror_folder

    A, labels, _ = load_dataset("news20.rdatasets", mirror=mirror_folder(), progress=False)
    rows = np.concatenate([np.flatnonzero(labels == c)[:PER_CLASS] for c in np.unique(labels)])
    sub = A[rows]
    sub = sub[:, np.flatnonzero(sub.getnnz(axis=0))]
    dump_svmlight_file(sub, labels[rows].astype(int), str(path), zero_based=False)


def test_a_k20_sweep_with_peers_is_certified_and_shown(
    postgres_url, redis_url, settings_for, page, tmp_path
):
    settings = settings_for(postgres_url, redis_url)
    news20_small(tmp_path / "news20-small.svm")
    with (
        running_api(api_env(settings), tmp_path / "api.log") as api,
        running_worker(settings, start_timeout=600) as worker,  # a loaded machine: minutes
    ):
        with open(tmp_path / "news20-small.svm", "rb") as handle:
            created = httpx.post(
                f"{api.url}/datasets/upload",
                files={"file": ("news20-small.svm", handle)},
                data={"name": "news20-small"},
                timeout=120,
            )
        assert created.status_code == 201, created.text
        assert created.json()["labels"]["n_classes"] == 20
        ids = []
        for body in (SWEEP, HINGE):
            sweep = httpx.post(f"{api.url}/sweeps", json=body, timeout=60)
            assert sweep.status_code == 201, sweep.text
            ids.append(sweep.json()["id"])
        sweep_id = ids[0]

        def finished() -> bool:
            counts = [httpx.get(f"{api.url}/sweeps/{i}", timeout=30).json() for i in ids]
            return sum(c["n_jobs"] for c in counts) == N_JOBS and all(
                sum(c["progress"].get(s, 0) for s in ("succeeded", "failed", "cancelled"))
                == c["n_jobs"]
                for c in counts
            )

        wait_for(finished, 1500, "the sweeps to finish", worker)
        jobs = {"data": []}
        for i in ids:
            found = httpx.get(
                f"{api.url}/jobs", params={"sweep_id": i, "limit": 100}, timeout=30
            ).json()
            jobs["data"] += found["data"]
        statuses = [job["status"] for job in jobs["data"]]
        assert statuses == ["succeeded"] * N_JOBS, (jobs, worker.log()[-3000:])
        traces = {
            job["id"]: httpx.get(f"{api.url}/jobs/{job['id']}/trace", timeout=30).json()["data"]
            for job in jobs["data"]
        }
        references = {
            digest: httpx.get(f"{api.url}/references/{digest}", timeout=30).json()
            for digest in {job["objective_hash"] for job in jobs["data"]}
        }

    assert len(references) == 6  # 2 l2 × (logistic ovr, logistic multinomial, hinge ovr)
    peers = {j["solver"] for j in jobs["data"] if "." in j["solver"] or j["solver"] == "cyanure"}
    assert peers == {"sklearn.lbfgs", "sklearn.liblinear", "cyanure"}
    for job in jobs["data"]:
        points = traces[job["id"]]
        what = (job["solver"], job["loss"], job["spec"]["multiclass"], job["spec"]["l2"])
        assert len(points) == job["n_points"] >= 2, what
        # every point certified through the K-class Problem: P − D ≥ 0 up to rounding
        assert all(p["gap"] >= -TINY * max(1.0, abs(p["primal"])) for p in points), what
        last = points[-1]
        assert job["stop_reason"] == "converged", (what, job["stop_reason"], last)
        assert last["gap"] <= TOL * max(1.0, abs(last["primal"])), (what, last)
        p_star = references[job["objective_hash"]]["primal"]
        assert abs(last["primal"] - p_star) <= TOL * max(1.0, abs(p_star)), (what, p_star)

    with running_dashboard(postgres_url) as base:
        page.goto(f"{base}/compare?sweep={sweep_id}&x=time")
        titles = page.locator("#compare-graph .annotation-text")
        titles.nth(5).wait_for(timeout=60_000)
        shown = titles.all_text_contents()
        for l2 in ("l2=0.01", "l2=0.001"):
            for form in ("K = 20, one-vs-rest", "K = 20, multinomial"):
                assert any(form in t and t.endswith(l2) for t in shown), (form, l2, shown)
        legend = page.locator("#compare-graph .legend .traces").all_text_contents()
        assert {"cyanure (refit)", "sklearn.lbfgs (refit)", "dual_cd (auto: permutation)"} <= set(
            legend
        ), legend  # dual_cd names what its auto defaults chose
        page.wait_for_timeout(1000)  # the last relayout
        shot = tmp_path / "compare.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 10_000

        page.goto(f"{base}/sweep/{sweep_id}")
        page.wait_for_selector("#sweep-ranking .heatmaplayer", timeout=60_000)
        page.get_by_text("K = 20, one-vs-rest").first.wait_for(timeout=30_000)
        assert "K = 20, multinomial" in page.locator("body").inner_text()
        page.screenshot(path=str(tmp_path / "sweep.png"), full_page=True)

        page.goto(f"{base}/profiles?sweep={ids[0]},{ids[1]}&eps=1e-6")
        page.wait_for_selector("#profiles-problems td", timeout=60_000)
        problems = page.locator("#profiles-problems").inner_text()
        assert "K = 20, one-vs-rest" in problems and "K = 20, multinomial" in problems
        page.screenshot(path=str(tmp_path / "profiles.png"), full_page=True)
    if os.environ.get("FACEOFF_WRITE_SCREENSHOT"):
        for name in ("compare", "sweep", "profiles"):
            shutil.copyfile(tmp_path / f"{name}.png", DOCS / f"multiclass_{name}.png")
