"""Headless Chromium: the runs page writes parameters exactly and compactly (seed 2, l1 0,
l2 1e-4; a solver that uses no seed: ``none``), and the Sweeps and Datasets index pages,
reached from the navigation, list what the viewer's team may see and link to each sweep's
and dataset's page."""

from __future__ import annotations

from faceoff.core.db import session_scope
from tests.dashboard import factories
from tests.dashboard.conftest import running_dashboard
from tests.dashboard.test_auth_browser import _login
from tests.reliability.test_dashboard_auth import secured_dashboard  # noqa: F401


def _column(page, table: str, column: str) -> list[str]:
    return page.locator(f"#{table} td[data-dash-column='{column}']").all_inner_texts()


def test_runs_page_numbers_and_the_index_pages(sqlite_url, page):
    sweep_id, _ = factories.add_sweep(sqlite_url, settings=factories.SETTINGS[:1], n_points=20)
    dataset_id = factories.add_dataset(sqlite_url, "weights")
    with session_scope(sqlite_url) as session:
        seeded = factories.add_job(session, dataset_id, "weights", "dual_cd", {}, l2=1e-4, seed=2)
        plain = factories.add_job(session, dataset_id, "weights", "lbfgs", {}, l2=2.5e-7, seed=2)
        ids = (seeded.id, plain.id)
    with running_dashboard(sqlite_url) as base:
        page.goto(f"{base}/?dataset={dataset_id}")
        page.wait_for_function("document.querySelector('#runs-summary')?.innerText === '2 jobs'")
        jobs = [int(t) for t in _column(page, "runs-table", "job")]
        assert sorted(jobs) == sorted(ids)
        cells = zip(*(_column(page, "runs-table", c) for c in ("seed", "l1", "l2")), strict=True)
        rows = dict(zip(jobs, cells, strict=True))
        assert rows == {seeded.id: ("2", "0", "1e-4"), plain.id: ("none", "0", "2.5e-7")}

        page.locator("header").get_by_role("link", name="Sweeps", exact=True).click()
        page.wait_for_url(f"{base}/sweeps")
        page.wait_for_selector("#sweeps-table td")
        assert _column(page, "sweeps-table", "sweep") == [f"#{sweep_id}"]
        assert _column(page, "sweeps-table", "jobs") == ["1/1"]
        assert _column(page, "sweeps-table", "name") == ["synthetic faceoff"]
        page.locator("#sweeps-table").get_by_role("link", name=f"#{sweep_id}").click()
        page.wait_for_url(f"{base}/sweep/{sweep_id}")
        page.wait_for_function("document.querySelector('#sweep-title')?.innerText.length > 0")
        assert "No such sweep" not in page.locator("#sweep-title").inner_text()

        page.locator("header").get_by_role("link", name="Datasets", exact=True).click()
        page.wait_for_url(f"{base}/datasets")
        page.wait_for_selector("#datasets-table td")
        assert sorted(_column(page, "datasets-table", "dataset")) == [
            "synthetic-300x40",
            "weights",
        ]
        assert set(_column(page, "datasets-table", "n_samples")) == {"300"}
        assert "a9a" in page.locator("#datasets-public").inner_text()  # registered on first use
        page.locator("#datasets-table").get_by_role("link", name="weights").click()
        page.wait_for_url(f"{base}/dataset/{dataset_id}")
        page.wait_for_function("document.querySelector('#dataset-title')?.innerText.length > 0")
        assert "weights" in page.locator("#dataset-title").inner_text()


def test_the_index_pages_show_a_team_its_own(secured_dashboard, page):  # noqa: F811
    base, url, teams = secured_dashboard
    factories.add_dataset(url, "shared-data")  # no team: every team's
    _, alpha_secret, alpha_sweep, _ = teams["alpha"]
    _login(page, base, alpha_secret, "/sweeps")
    page.wait_for_url(base + "/sweeps")
    page.wait_for_selector("#sweeps-table td")
    assert _column(page, "sweeps-table", "sweep") == [f"#{alpha_sweep}"]
    page.goto(base + "/datasets")
    page.wait_for_selector("#datasets-table td")
    assert sorted(_column(page, "datasets-table", "dataset")) == ["alpha-data", "shared-data"]
    owners = dict(
        zip(
            _column(page, "datasets-table", "dataset"),
            _column(page, "datasets-table", "owner"),
            strict=True,
        )
    )
    assert owners == {"alpha-data": "your team (upload)", "shared-data": "every team"}
