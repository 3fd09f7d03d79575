"""What a person sees: headless Debian Chromium against ``python -m faceoff.dashboard``."""

from __future__ import annotations

from tests.dashboard import factories
from tests.dashboard.conftest import point_count_js, running_dashboard

PLOT = "document.querySelector('#compare-graph .js-plotly-plot')"


def test_compare_page_of_a_finished_sweep(sqlite_url, page, tmp_path):
    sweep_id, ids = factories.add_sweep(sqlite_url)
    with running_dashboard(sqlite_url) as base:
        page.goto(f"{base}/compare?sweep={sweep_id}&logy=linear")
        legend = page.locator("#compare-graph .legend .traces")
        legend.nth(len(ids) - 1).wait_for()
        assert legend.count() == len(ids)  # one legend entry per job
        names = sorted(legend.nth(i).text_content() for i in range(legend.count()))
        assert names == sorted(
            [
                "dual_cd",
                "dual_cd[sampling=importance]",
                "primal_cd",
                "spdc[batch_size=8,sampling=weighted]",
            ]
        )
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
        for button, suffix in (("SVG", ".svg"), ("CSV", ".csv")):
            with page.expect_download() as download:
                page.get_by_role("button", name=button, exact=True).click()
            name = f"faceoff-compare-synthetic-300x40-logistic-l2-0.001{suffix}"  # the objective
            assert download.value.suggested_filename == name
            saved = tmp_path / download.value.suggested_filename
            download.value.save_as(saved)
            head = saved.read_text()[:200]
            assert ("<svg" in head) if suffix == ".svg" else head.startswith("curve,solver")


def test_a_running_jobs_curve_grows(sqlite_url, page):
    job_id = factories.add_running_job(sqlite_url, n_points=20)
    with running_dashboard(sqlite_url) as base:
        page.goto(f"{base}/compare?jobs={job_id}&x=epoch&logx=log")
        count = point_count_js("compare-graph")
        page.wait_for_function(f"{count} > 0")
        before = page.evaluate(count)
        factories.append_points(sqlite_url, job_id, 15)
        page.wait_for_function(f"{count} > {before}", timeout=15_000)
        after = page.evaluate(count)
        assert (before, after) == (20, 35)
        assert "live" in page.locator("#compare-status").inner_text()


def test_a_dataset_that_cannot_be_loaded_says_why(sqlite_url, page, tmp_path):
    """A registered public dataset missing from the mirror and the cache, with no URL to
    download it from: the page names the dataset and the reason, as the API's 422 does."""
    from faceoff.core.db import session_scope
    from faceoff.core.models import Dataset

    with session_scope(sqlite_url) as session:
        dataset = Dataset(name="phishing", source={"kind": "registry", "name": "phishing"})
        session.add(dataset)
        session.flush()
        dataset_id = dataset.id
    empty = {"FACEOFF_DATA_MIRROR": str(tmp_path / "mirror"), "FACEOFF_DATA_CACHE": str(tmp_path)}
    (tmp_path / "mirror").mkdir()
    with running_dashboard(sqlite_url, extra_env=empty) as base:
        page.goto(f"{base}/dataset/{dataset_id}")
        advice = page.locator("#dataset-advice .error")
        advice.wait_for(timeout=30_000)
        text = advice.inner_text()
        assert text.startswith(f"dataset {dataset_id} (phishing) cannot be loaded: "), text
        assert "phishing" in text[len("dataset 1 (phishing) cannot be loaded: ") :], text
        assert page.locator("#dataset-title").inner_text() == "Dataset phishing"
        assert not page.locator(".error.banner").inner_text().strip()  # no callback failed
