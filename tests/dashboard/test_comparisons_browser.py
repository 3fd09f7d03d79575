"""Trustworthy comparisons, as a person sees them in headless Chromium (issue 15): the
median over seeds never rises when a seed finishes, one panel per objective, never-reached
settings grey and labelled, never ranked; exports name the objective."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import numpy as np

from faceoff.core.db import session_scope
from tests.dashboard import factories
from tests.dashboard.conftest import running_dashboard

SHOTS = "FACEOFF_SCREENSHOTS"  # a folder to keep the screenshots in, to look at them


def _figure(page, graph_id: str) -> dict:
    """The figure the page renders: Plotly's decoded data and layout of a dcc.Graph."""
    return page.evaluate(
        f"""(() => {{
            const gd = document.querySelector('#{graph_id} .js-plotly-plot');
            const data = gd._fullData.map(t => ({{
                name: t.name, legendgroup: t.legendgroup, showlegend: t.showlegend,
                x: Array.from(t.x || []), y: Array.from(t.y || []),
                z: t.z ? t.z.map(r => Array.from(r)) : null, text: t.text || null,
                color: t.line && t.line.color, type: t.type, colorscale: t.colorscale || null,
                xaxis: t.xaxis, offsetgroup: t.offsetgroup,
            }}));
            const annotations = (gd._fullLayout.annotations || []).map(a => a.text);
            const axes = Object.keys(gd._fullLayout).filter(k => /^xaxis[0-9]*$/.test(k));
            return {{data, annotations, axes, meta: gd._fullLayout.meta || null}};
        }})()"""
    )


def _wait_drawn(page, graph_id: str, condition: str = "true") -> None:
    page.wait_for_function(
        f"(() => {{ const gd = document.querySelector('#{graph_id} .js-plotly-plot');"
        f" return gd && gd._fullData && gd._fullData.length > 0 && ({condition}); }})()",
        timeout=30_000,
    )


def _shot(page, folder: Path, name: str) -> None:
    """A full-page screenshot into ``folder``, or the folder $FACEOFF_SCREENSHOTS names."""
    folder = Path(os.environ.get(SHOTS, folder))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 10_000


def _seeds_finishing_at_different_times(url: str) -> tuple[int, list[float]]:
    """Three seeds of dual_cd that end at different times and levels (the fastest at
    ~1e-10 after 0.19 s, the others later and lower): (sweep id, each seed's end time)."""
    from faceoff.core.models import Sweep

    dataset_id = factories.add_dataset(url)
    ends = []
    with session_scope(url) as session:
        sweep = Sweep(name="seeds", spec={"synthetic": True})
        session.add(sweep)
        session.flush()
        for seed, (n_points, seconds) in enumerate(((110, 0.004), (120, 0.006), (130, 0.01))):
            points = factories.trace(0.62, n_points, seconds)
            ends.append(points[-1]["time_s"])
            job = factories.add_job(
                session,
                dataset_id,
                "synthetic-300x40",
                "dual_cd",
                {},
                seed=seed,
                sweep_id=sweep.id,
                points=points,
            )
        factories.add_reference(session, job.objective_hash)
        sweep.n_jobs = 3
        return sweep.id, ends


def test_a_finished_seed_never_makes_the_median_rise(sqlite_url, page, tmp_path):
    sweep_id, ends = _seeds_finishing_at_different_times(sqlite_url)
    with running_dashboard(sqlite_url) as base:
        # a linear time axis: the median's grid is the axis' (the seeds end a decade apart,
        # which the page's default draws on a log axis)
        page.goto(f"{base}/compare?sweep={sweep_id}&x=time&logx=linear&logy=log")
        _wait_drawn(page, "compare-graph")
        figure = _figure(page, "compare-graph")
        (median,) = [t for t in figure["data"] if t["showlegend"]]
        assert median["name"] == "dual_cd (median of 3)"
        x, y = np.array(median["x"]), np.array(median["y"])
        assert x[-1] == max(ends)  # up to the end of the longest seed
        assert np.all(np.diff(np.log10(y)) <= 1e-9), "the median rises somewhere"
        after = y[x > min(ends)]  # once the fastest seed has finished, it still counts
        assert after.min() < 1e-12 and y[np.searchsorted(x, min(ends))] < 1e-6
        _shot(page, tmp_path, "seeds-median")
        # individual seeds: each seed's own curve, in the setting's colour, in the URL
        page.locator("#compare-seeds").get_by_text("median + each seed").click()
        _wait_drawn(page, "compare-graph", "gd._fullData.length === 6")
        page.wait_for_url(lambda u: "seeds=all" in u)
        figure = _figure(page, "compare-graph")
        own = [t for t in figure["data"] if "· job" in t["name"]]
        assert len(own) == 3 and {t["color"] for t in own} == {median["color"]}
        assert sorted(t["x"][-1] for t in own) == sorted(ends)
        _shot(page, tmp_path, "seeds-individual")


def test_several_objectives_get_a_panel_each_and_exports_name_them(sqlite_url, page, tmp_path):
    sweep_id, ids = factories.add_sweep(sqlite_url, l2s=(1e-3, 1e-4, 1e-5), n_points=120)
    with running_dashboard(sqlite_url) as base:
        page.goto(f"{base}/compare?sweep={sweep_id}&x=epoch&logx=log")
        _wait_drawn(page, "compare-graph")
        figure = _figure(page, "compare-graph")
        assert figure["axes"] == ["xaxis", "xaxis2", "xaxis3"]
        titles = [f"synthetic-300x40 · logistic · l2={v}" for v in ("1e-05", "0.0001", "0.001")]
        assert figure["annotations"][:3] == titles
        # every panel holds the four settings, each with one style across panels
        panels = {t["xaxis"] for t in figure["data"]}
        assert panels == {"x", "x2", "x3"}
        styles = {}
        for t in figure["data"]:
            styles.setdefault(t["legendgroup"], set()).add(t["color"])
        assert len(styles) == 4 and all(len(c) == 1 for c in styles.values())
        assert len({next(iter(c)) for c in styles.values()}) == 4  # settings apart
        legend = page.locator("#compare-graph .legend .traces")
        assert legend.count() == 4  # once per setting, not per panel
        height = page.locator("#compare-graph .js-plotly-plot").bounding_box()["height"]
        assert height > 800  # grows with the panels
        _shot(page, tmp_path, "objectives-panels")
        with page.expect_download() as download:
            page.get_by_role("button", name="CSV", exact=True).click()
        assert download.value.suggested_filename == (
            "faceoff-compare-synthetic-300x40-logistic-3-objectives.csv"
        )
        saved = tmp_path / "curves.csv"
        download.value.save_as(saved)
        with saved.open() as f:
            assert {r["objective"] for r in csv.DictReader(f)} == set(titles)
        with page.expect_download() as download:
            page.get_by_role("button", name="PNG", exact=True).click()
        name = "faceoff-compare-synthetic-300x40-logistic-3-objectives.png"
        assert download.value.suggested_filename == name
        # a single curve has a legend entry, and the title names its objective
        page.goto(f"{base}/compare?jobs={ids[0]}")
        _wait_drawn(page, "compare-graph")
        assert page.locator("#compare-graph .legend .traces").count() == 1
        title = page.locator("#compare-graph .gtitle").text_content()
        assert title.endswith("synthetic-300x40 · logistic · l2=0.001"), title
        with page.expect_download() as download:
            page.get_by_role("button", name="PNG", exact=True).click()
        name = "faceoff-compare-synthetic-300x40-logistic-l2-0.001.png"
        assert download.value.suggested_filename == name
        _shot(page, tmp_path, "single-curve")


def test_never_reached_is_grey_and_labelled_never_ranked(sqlite_url, page, tmp_path):
    settings = (*factories.SETTINGS[:2], ("primal_cd", {}, 0.985))  # primal_cd: too slow
    sweep_id, _ = factories.add_sweep(sqlite_url, settings=settings, seeds=(0, 1, 2))
    with running_dashboard(sqlite_url) as base:
        page.goto(f"{base}/sweep/{sweep_id}?eps=1e-6&chart=heatmap")
        _wait_drawn(page, "sweep-ranking")
        _wait_drawn(page, "sweep-tte")
        ranking = _figure(page, "sweep-ranking")
        ranks, grey = ranking["data"]
        row = ranks["y"].index("primal_cd")
        assert np.isnan(ranks["z"][row][0]) and ranks["text"][row] == [""]  # no rank
        assert grey["text"][row] == ["not reached"] and grey["z"][row] == [1]
        assert {c[1] for c in grey["colorscale"]} <= {"#d9d9d9", "#9e9e9e"}
        assert ranks["text"][ranks["y"].index("dual_cd[sampling=importance]")] == ["1"]
        cells = page.locator("#sweep-ranking .heatmaplayer text, #sweep-ranking text")
        texts = [cells.nth(i).text_content() for i in range(cells.count())]
        assert "not reached" in texts and "3" not in texts  # labelled, and no rank 3
        tte = page.locator("#sweep-tte").inner_text()
        assert "not reached" in tte and "[" in tte  # median [q25–q75] over the 3 seeds
        _shot(page, tmp_path, "sweep-heatmap")
        page.locator("#sweep-chart").get_by_text("dots", exact=True).click()
        _wait_drawn(page, "sweep-tte", "gd._fullData[0].type === 'scatter'")
        dots = _figure(page, "sweep-tte")
        (grey,) = [t for t in dots["data"] if t["text"] == ["not reached"]]
        assert grey["y"] == ["primal_cd"]  # in primal_cd's row, at the axis' end
        assert grey["x"][0] > max(t["x"][0] for t in dots["data"] if t is not grey)
        assert "not reached" in page.locator("#sweep-tte").inner_text()
        _shot(page, tmp_path, "sweep-dots")
        with page.expect_download() as download:
            page.get_by_role("button", name="PNG (tte)", exact=True).click()
        assert download.value.suggested_filename == (
            f"faceoff-sweep-{sweep_id}-time-to-1e-6-synthetic-300x40-logistic-l2-0.001.png"
        )
