"""What a person sees of a 20-setting race (issue 31), in headless Chromium 1,280 px wide:
each legend entry its own (colour, dash), no solver grey, legends inside the page and clear
of the axes, time to ε as labelled dots, and every page no wider than the window with the
navigation bar across it (also at 1,400 px)."""

from __future__ import annotations

import pytest

from faceoff.dashboard.figures import vision
from faceoff.dashboard.figures.style import MIN_CHROMA
from tests.dashboard import factories
from tests.dashboard.conftest import running_dashboard

GREYS = ("#7f7f7f", "#9e9e9e")


def _legend_looks(page, graph: str) -> list[dict]:
    """Name, colour and dash of each legend entry of a dcc.Graph, as Plotly drew them."""
    return page.evaluate(
        f"""(() => {{
            const gd = document.querySelector('#{graph} .js-plotly-plot');
            return gd._fullData.filter(t => t.showlegend && t.visible === true).map(t => ({{
                name: t.name, color: t.line.color, dash: t.line.dash }}));
        }})()"""
    )


def _boxes(page, selector: str) -> list[dict]:
    return page.evaluate(
        f"""Array.from(document.querySelectorAll({selector!r})).map(e => {{
            const r = e.getBoundingClientRect();
            return {{left: r.left, right: r.right, top: r.top, bottom: r.bottom}};
        }}).filter(r => r.right > r.left && r.bottom > r.top)"""
    )


def _overlap(a: dict, b: dict) -> bool:
    return (
        a["left"] < b["right"]
        and b["left"] < a["right"]
        and a["top"] < b["bottom"]
        and (b["top"] < a["bottom"])
    )


def assert_legend_clear(page, graph: str, entries: int) -> None:
    """The legend of ``graph`` lies inside the page and covers no plot area, tick label or
    axis title of it; it shows ``entries`` entries."""
    page.locator(f"#{graph} .legend .traces").nth(entries - 1).wait_for()
    assert page.locator(f"#{graph} .legend .traces").count() == entries
    (legend,) = _boxes(page, f"#{graph} .legend .bg")
    width = page.evaluate("document.documentElement.clientWidth")
    assert 0 <= legend["left"] and legend["right"] <= width, (legend, width)
    axes = _boxes(
        page,
        f"#{graph} .nsewdrag, #{graph} .xtick text, #{graph} .ytick text, "
        f"#{graph} .g-xtitle, #{graph} .g-ytitle",
    )
    assert axes, f"no axes found in {graph}"
    covered = [box for box in axes if _overlap(legend, box)]
    assert not covered, (legend, covered)


def assert_own_looks(looks: list[dict]) -> None:
    pairs = [(look["color"], look["dash"]) for look in looks]
    assert len(set(pairs)) == len(pairs), pairs  # never a repeated look
    for look in looks:
        assert look["color"].lower() not in GREYS, look
        assert vision.chroma(look["color"]) >= MIN_CHROMA, look  # nothing near grey either
        solver = look["name"].split(" (")[0].split("[")[0]
        peer = "." in solver or solver == "cyanure"
        assert (look["dash"] not in ("solid", "dot")) == peer, look  # peers dashed, ours not


@pytest.fixture
def wide_page(browser):
    """A fresh page 1,280 px wide (the narrow laptop the issue names)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    yield context.new_page()
    context.close()


def test_twenty_settings_each_their_own_look_legends_clear_of_the_axes(sqlite_url, wide_page):
    page = wide_page
    sweep_id, _ = factories.add_sweep(
        sqlite_url, settings=factories.TWENTY, l2s=(1e-3, 1e-4), seeds=(0, 1)
    )
    with running_dashboard(sqlite_url) as base:
        page.goto(f"{base}/compare?sweep={sweep_id}&x=epoch")
        assert_legend_clear(page, "compare-graph", 20)
        looks = _legend_looks(page, "compare-graph")
        assert len(looks) == 20
        assert_own_looks(looks)
        by_name = {look["name"].split(" (")[0]: look for look in looks}
        assert by_name["saga"]["color"] != by_name["cyanure"]["color"]  # the pairs
        assert by_name["sklearn.lbfgs"]["color"] not in GREYS

        page.goto(f"{base}/profiles?sweep={sweep_id}")
        for graph in ("profiles-performance", "profiles-data"):
            assert_legend_clear(page, graph, 20)
            profile = _legend_looks(page, graph)
            assert_own_looks(profile)
            same = {look["name"]: (look["color"], look["dash"]) for look in profile}
            for name, look in by_name.items():  # the same look as on the compare page
                assert same[name] == (look["color"], look["dash"]), name

        page.goto(f"{base}/sweep/{sweep_id}")
        page.wait_for_function(
            "document.querySelectorAll('#sweep-tte .scatterlayer .textpoint').length >= 20",
            timeout=30_000,
        )
        labels = page.locator("#sweep-tte .scatterlayer .textpoint").all_text_contents()
        assert labels.count("not reached") >= 1 and any(t.strip()[:1].isdigit() for t in labels)
        names = page.locator("#sweep-tte .yaxislayer-above .ytick text").all_text_contents()
        assert {"dual_cd", "sklearn.liblinear", "cyanure[solver=miso]"} <= set(names)
        title = page.locator("#sweep-tte .xtitle").first.text_content()
        assert title.endswith("from 0") or title.endswith("log scale"), title


@pytest.mark.parametrize("width", [1280, 1400])
def test_every_page_fits_the_window_with_the_navigation_bar_across(sqlite_url, browser, width):
    """The issue measured the sweeps index at 1,861 px and the runs index at 1,487 px in a
    1,400 px window, the navigation bar stopping short."""
    sweep_id, _ = factories.add_sweep(
        sqlite_url, settings=factories.TWENTY, l2s=(1e-3, 1e-4), seeds=(0, 1)
    )
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    drawn = {
        "/": "#runs-table td",
        "/sweeps": "#sweeps-table td",
        "/datasets": "#datasets-table td",
        f"/compare?sweep={sweep_id}": "#compare-graph .legend",
        f"/sweep/{sweep_id}": "#sweep-tte .scatterlayer .trace",
        f"/profiles?sweep={sweep_id}": "#profiles-data .legend",
        "/dataset/1": "#dataset-graph .barlayer .trace",
    }
    try:
        with running_dashboard(sqlite_url) as base:
            for path, selector in drawn.items():
                page.goto(base + path)
                page.wait_for_selector(selector, timeout=60_000)
                page.wait_for_timeout(500)  # a table's last columns, a figure's relayout
                page_width, window, bar = page.evaluate(
                    "[document.documentElement.scrollWidth, window.innerWidth,"
                    " document.querySelector('header.topbar').getBoundingClientRect().width]"
                )
                assert page_width <= window, (path, page_width, window)
                assert bar == window, (path, bar, window)
    finally:
        context.close()
