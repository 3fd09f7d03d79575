"""The profiles page as a person sees it: headless Debian Chromium against
``python -m faceoff.dashboard``."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.dashboard import factories
from tests.dashboard.conftest import running_dashboard
from tests.reliability.test_dashboard_auth import secured_dashboard  # noqa: F401

PERFORMANCE = "document.querySelector('#profiles-performance .js-plotly-plot')"
SETTINGS = [
    "dual_cd",
    "dual_cd[sampling=importance]",
    "primal_cd",
    "spdc[batch_size=8,sampling=weighted]",
]


def test_profiles_of_two_sweeps_in_the_browser(sqlite_url, page, tmp_path):
    """Two sweeps: one of 4 settings × 2 weights × 2 seeds with P*, one of 2 settings on
    another dataset without P*. By relative suboptimality the second is left out and said
    so; by the gap it joins P and the settings not run on it are counted."""
    one, _ = factories.add_sweep(sqlite_url, l2s=(1e-3, 1e-4), seeds=(0, 1))
    two, _ = factories.add_sweep(
        sqlite_url, settings=factories.SETTINGS[:2], dataset_name="second", reference=False
    )
    with running_dashboard(sqlite_url) as base:
        page.goto(f"{base}/profiles?sweep={one},{two}&eps=1e-6")
        legend = page.locator("#profiles-performance .legend .traces")
        legend.nth(len(SETTINGS) - 1).wait_for()
        names = sorted(legend.nth(i).text_content() for i in range(legend.count()))
        assert names == SETTINGS
        title = page.locator("#profiles-performance .gtitle").text_content()
        assert title == "Performance profile: seconds to (P − P*)/|P*| ≤ ε = 1e-6"
        data_title = page.locator("#profiles-data .gtitle").text_content()
        assert data_title.startswith("Data profile: epochs to")
        # each graph draws on its own once the callback has answered: wait for it, not once
        expect(page.locator("#profiles-data .legend .traces")).to_have_count(len(SETTINGS))
        # the two chosen sweeps show as chosen, the status counts the problems
        chosen = page.locator("#profiles-sweep").inner_text()
        assert f"#{one} synthetic faceoff" in chosen and f"#{two} synthetic faceoff" in chosen
        status = page.locator("#profiles-status")
        assert status.inner_text().startswith(
            f"sweeps #{one}, #{two}: 2 problems × 4 settings, ε = 1e-6"
        )
        notes = page.locator("#profiles-notes").inner_text()
        assert "1 objectives left out of P, no certified P*" in notes
        assert "Data profile in epochs" in notes
        # the fastest synthetic setting is fastest on both problems: ρ(1) = 1
        table = page.locator("#profiles-settings table")
        fast = table.locator("tr", has_text="dual_cd[sampling=importance]")
        assert fast.locator("td").nth(4).inner_text() == "2 (100%)"
        problems = page.locator("#profiles-problems tbody tr")
        assert problems.count() == 3  # two in P, one left out
        assert "left out: no certified P*" in problems.nth(2).inner_text()
        # the gap criterion needs no P*: the second sweep's objective joins P
        page.locator("#profiles-criterion").get_by_text("gap", exact=False).click()
        status.filter(has_text="3 problems × 4 settings").wait_for()
        assert (
            "2 (problem, setting) pairs were not run"
            in page.locator("#profiles-notes").inner_text()
        )
        page.locator("#profiles-measure").get_by_text("epochs", exact=True).click()
        page.wait_for_function(
            f"{PERFORMANCE}._fullLayout.title.text.startsWith('Performance profile: epochs')"
            f" && {PERFORMANCE}._fullLayout.xaxis.type === 'log'"
        )
        page.wait_for_url(lambda url: "measure=epoch" in url and "criterion=gap_rel" in url)
        shot = tmp_path / "profiles.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 10_000
        for button, name in (
            ("SVG (performance)", "faceoff-profiles-performance.svg"),
            ("PNG (data)", "faceoff-profiles-data.png"),
            ("CSV (profile curves)", "faceoff-profiles-epoch-1e-6.csv"),
        ):
            with page.expect_download() as download:
                page.get_by_role("button", name=button, exact=True).click()
            assert download.value.suggested_filename == name
            saved = tmp_path / name
            download.value.save_as(saved)
            head = saved.read_bytes()[:200]
            if name.endswith(".svg"):
                assert b"<svg" in head
            elif name.endswith(".png"):
                assert head.startswith(b"\x89PNG")
            else:
                assert head.startswith(b"profile,measure,setting,solver,x,fraction")
        assert not page.locator(".error.banner").inner_text().strip()  # no callback failed


def test_hostile_addresses_fall_back_and_say_what_is_accepted(sqlite_url, page):
    sweep, _ = factories.add_sweep(sqlite_url)
    with running_dashboard(sqlite_url) as base:
        for query, said in (
            ("eps=1e400", "ε '1e400' is not accepted (a number from 1e-16 to 1"),
            ("eps=nan", "ε 'nan' is not accepted"),
            ("sweep=abc", "sweep 'abc' is not a positive integer; ignored"),
            (f"sweep={2**31}", "sweep 2147483648 is out of range: ids go from 1 to 2147483647"),
        ):
            page.goto(f"{base}/profiles?{query}")
            status = page.locator("#profiles-status")
            status.filter(has_text="ε = 1e-6").wait_for()  # the default, shown
            assert ": 1 problems × 4 settings" in status.inner_text()  # which sweeps first
            assert said in page.locator("#profiles-address").inner_text()  # still said
            assert not page.locator(".error.banner").inner_text().strip()
        page.fill("#profiles-eps", "1e-400")  # typed: a message, the default used
        page.press("#profiles-eps", "Enter")
        page.locator("#profiles-rejected").filter(has_text="ε '1e-400' is not accepted").wait_for()
        assert ": 1 problems × 4 settings" in page.locator("#profiles-status").inner_text()
        page.goto(f"{base}/profiles?sweep={sweep},99")
        page.locator("#profiles-unknown").filter(has_text="no sweep 99 (ignored)").wait_for()
        page.wait_for_url(
            lambda url: url.endswith(
                f"/profiles?sweep={sweep}&eps=1e-6&criterion=subopt_rel&measure=time"
            )
        )


def test_a_team_profiles_only_its_own_jobs(secured_dashboard, page):  # noqa: F811
    """Alpha owns a sweep of the first two settings, beta one of the last two: alpha's
    profiles show its two settings only, and beta's sweep is not there to choose."""
    base, _, teams = secured_dashboard
    _, alpha_secret, alpha_sweep, _ = teams["alpha"]
    _, _, beta_sweep, _ = teams["beta"]
    page.goto(f"{base}/profiles?sweep={beta_sweep}")
    page.wait_for_selector("#login-submit")
    page.fill("#token", alpha_secret)
    page.click("#login-submit")
    page.wait_for_url(f"{base}/profiles?sweep={beta_sweep}")
    unknown = page.locator("#profiles-unknown")
    unknown.filter(has_text=f"no sweep {beta_sweep} (ignored)").wait_for()
    page.locator("#profiles-status").filter(has_text="1 problems × 2 settings").wait_for()
    legend = page.locator("#profiles-performance .legend .traces")
    # the status is text, the figure draws after it (Plotly renders asynchronously)
    expect(legend).to_have_count(2)
    names = sorted(legend.nth(i).text_content() for i in range(legend.count()))
    assert names == SETTINGS[:2]
    page.locator("#profiles-sweep").click()
    options = page.get_by_role("option").filter(has_text="synthetic faceoff")
    options.first.wait_for()
    assert options.all_inner_texts() == [f"#{alpha_sweep} synthetic faceoff"]
