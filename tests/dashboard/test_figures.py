"""The dashboard's pure figure functions, without a browser or a database."""

from __future__ import annotations

import csv
import io
import math

import numpy as np
import pytest

from faceoff.dashboard import figures

P_STAR = 2.0
REFS = {"obj-a": {"primal": P_STAR, "gap": 1e-12}}


def row(
    job_id,
    solver="dual_cd",
    params=None,
    seed=0,
    objective="obj-a",
    rate=0.8,
    n=30,
    dataset="a9a",
    l2=1e-4,
    status="succeeded",
    time_scale=0.01,
):
    epochs = 0.01 * 10 ** (np.arange(n) / 10)
    subopt = rate**epochs
    return {
        "id": job_id,
        "solver": solver,
        "params": params if params is not None else figures.solver_defaults(solver),
        "seed": seed,
        "dataset": dataset,
        "loss": "logistic",
        "gamma": 1.0,
        "l1": 0.0,
        "l2": l2,
        "normalize": "none",
        "objective_hash": objective,
        "status": status,
        "trace": {
            "seq": list(range(n)),
            "iteration": list((epochs * 100).astype(int)),
            "epoch": list(epochs),
            "time_s": list(epochs * time_scale),
            "primal": list(P_STAR + subopt),
            "gap": list(2 * subopt),
        },
    }


def legend_entries(fig):
    return [t.name for t in fig.data if t.showlegend is not False]


def test_legend_name_shows_only_non_default_parameters():
    defaults = figures.solver_defaults("spdc")
    params = {**defaults, "batch_size": 8, "sampling": "weighted"}
    assert figures.legend_name("spdc", params, defaults) == "spdc[batch_size=8,sampling=weighted]"
    assert figures.legend_name("spdc", defaults, defaults) == "spdc"
    assert figures.legend_name("saga", {"step_scale": 0.5}, {"step_scale": 1.0}) == (
        "saga[step_scale=0.5]"
    )


def test_compare_figure_one_entry_per_job_colour_per_solver_style_per_setting():
    rows = [
        row(1, "dual_cd"),
        row(2, "dual_cd", {"sampling": "importance", "step": "exact"}),
        row(3, "primal_cd"),
        row(4, "spdc", {**figures.solver_defaults("spdc"), "batch_size": 8}),
    ]
    fig = figures.compare_figure(rows, "epoch", "subopt_rel", True, True, REFS)
    assert sorted(legend_entries(fig)) == [
        "dual_cd",
        "dual_cd[sampling=importance]",
        "primal_cd",
        "spdc[batch_size=8]",
    ]
    by_name = {t.name: t for t in fig.data}
    dual, dual_imp = by_name["dual_cd"], by_name["dual_cd[sampling=importance]"]
    assert dual.line.color == dual_imp.line.color != by_name["primal_cd"].line.color
    assert dual.line.dash != dual_imp.line.dash
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    np.testing.assert_allclose(dual.y, 0.8 ** np.asarray(dual.x) / P_STAR, rtol=1e-6)
    # hover carries the exact trace point: job id, seq, iteration, epoch, time, P, gap
    assert dual.customdata.shape == (30, 7) and dual.customdata[0, 0] == 1
    assert "P = %{customdata[5]" in dual.hovertemplate


def test_compare_figure_axes_and_measures():
    rows = [row(1)]
    fig = figures.compare_figure(rows, "time", "gap", False, False, {})
    trace = fig.data[0]
    np.testing.assert_allclose(trace.x, rows[0]["trace"]["time_s"])
    np.testing.assert_allclose(trace.y, rows[0]["trace"]["gap"])
    assert fig.layout.xaxis.type == "linear"
    fig = figures.compare_figure(rows, "iteration", "subopt", False, True, REFS)
    np.testing.assert_allclose(fig.data[0].x, rows[0]["trace"]["iteration"])
    np.testing.assert_allclose(
        fig.data[0].y, np.asarray(rows[0]["trace"]["primal"]) - P_STAR, rtol=1e-6
    )
    primal = figures.compare_figure(rows, "epoch", "primal", False, False, {})
    np.testing.assert_allclose(primal.data[0].y, rows[0]["trace"]["primal"])


def test_log_axes_drop_points_they_cannot_show():
    r = row(1)
    r["trace"]["time_s"][0] = 0.0
    fig = figures.compare_figure([r], "time", "subopt_rel", True, True, REFS)
    assert len(fig.data[0].x) == 29 and min(fig.data[0].x) > 0


def test_missing_reference_is_said_on_the_plot():
    rows = [row(1), row(2, "primal_cd", objective="obj-b", l2=1e-5)]
    fig = figures.compare_figure(rows, "epoch", "subopt_rel", False, True, REFS)
    assert legend_entries(fig) == ["dual_cd · l2=0.0001"]
    note = fig.layout.annotations[0].text
    assert "No certified reference P*" in note and "1 job(s) (l2=1e-05)" in note
    blank = figures.compare_figure([row(3, objective="obj-b")], "epoch", "subopt", False, True, {})
    assert not blank.data and "No certified reference" in blank.layout.annotations[0].text
    # the gap needs no reference; and a certified reference is reported with its gap
    gap = figures.compare_figure(rows, "epoch", "gap", False, True, {})
    assert len(legend_entries(gap)) == 2 and not gap.layout.annotations
    certified = figures.compare_figure([row(1)], "epoch", "subopt", False, True, REFS)
    assert "certified" in certified.layout.annotations[0].text


def test_seeds_become_a_median_with_a_quantile_band():
    rows = [row(i, seed=i, rate=rate) for i, rate in enumerate((0.7, 0.8, 0.9), start=1)]
    fig = figures.compare_figure(rows, "epoch", "subopt_rel", False, True, REFS)
    assert legend_entries(fig) == ["dual_cd (median of 3)"]
    hi, lo, mid = fig.data
    assert lo.fill == "tonexty" and hi.showlegend is False
    assert np.all(np.asarray(lo.y) <= np.asarray(mid.y) + 1e-300)
    assert np.all(np.asarray(mid.y) <= np.asarray(hi.y) * (1 + 1e-12))
    # the median of three geometric curves is the middle one (interpolated in log space)
    x = np.asarray(mid.x)
    np.testing.assert_allclose(mid.y, 0.8**x / P_STAR, rtol=1e-6)


def test_median_band_covers_curves_of_different_lengths():
    a = (np.array([1.0, 2.0, 3.0, 4.0]), np.array([4.0, 3.0, 2.0, 1.0]))
    b = (np.array([1.0, 2.0]), np.array([6.0, 5.0]))
    x, mid, lo, hi = figures.median_band([a, b], log_x=False, log_y=False, n_grid=7)
    assert x[0] == 1.0 and x[-1] == 4.0
    assert mid[0] == pytest.approx(5.0) and mid[-1] == pytest.approx(1.0)
    assert lo[0] == pytest.approx(4.5) and hi[0] == pytest.approx(5.5)
    empty = figures.median_band([(np.array([0.0]), np.array([-1.0]))], True, True)
    assert all(len(v) == 0 for v in empty)


def test_legend_names_the_objective_when_several_are_compared():
    rows = [row(1, l2=1e-4), row(2, l2=1e-5, objective="obj-b")]
    refs = {**REFS, "obj-b": {"primal": P_STAR, "gap": 1e-12}}
    fig = figures.compare_figure(rows, "epoch", "gap", False, True, refs)
    assert legend_entries(fig) == ["dual_cd · l2=0.0001", "dual_cd · l2=1e-05"]


def test_a_peers_trace_mode_is_named_and_a_refit_traces_points_are_marked():
    """Each point of a refit trace is a fit of its own: marked, and named in the legend;
    a callback trace is named; ours (native) and jobs not started yet are not."""
    rows = [
        {**row(1, "sklearn.liblinear"), "trace_mode": "refit"},
        {**row(2, "lightning.sdca"), "trace_mode": "callback"},
        {**row(3, "dual_cd"), "trace_mode": "native"},
        {**row(4, "primal_cd"), "trace_mode": None},
    ]
    fig = figures.compare_figure(rows, "epoch", "subopt_rel", True, True, REFS)
    by_name = {t.name: t for t in fig.data}
    assert sorted(by_name) == [
        "dual_cd",
        "lightning.sdca (callback)",
        "primal_cd",
        "sklearn.liblinear (refit)",
    ]
    refit = by_name["sklearn.liblinear (refit)"]
    assert refit.mode == "lines+markers" and refit.marker.symbol == "circle"
    assert "this fit" in refit.hovertemplate
    assert all(t.mode == "lines" for name, t in by_name.items() if "(refit)" not in name)
    assert any(a.text == figures.REFIT_NOTE for a in fig.layout.annotations)
    seeds = [{**row(i, "sklearn.saga", seed=i), "trace_mode": "refit"} for i in (5, 6)]
    median = figures.compare_figure(seeds, "epoch", "gap", True, True, {})
    assert legend_entries(median) == ["sklearn.saga (refit, median of 2)"]
    assert median.data[-1].mode == "lines"  # a median's points are not fits: no markers
    assert not median.layout.annotations
    ours = figures.compare_figure(rows[2:], "epoch", "gap", True, True, {})
    assert not ours.layout.annotations and all(t.mode == "lines" for t in ours.data)
    series, _ = figures.compare_series(rows, "epoch", "gap", True, True, {})
    assert [s.trace_mode for s in series] == ["native", "callback", None, "refit"]


def test_series_csv_lists_every_plotted_point():
    rows = [row(1), row(2, seed=1, rate=0.6), row(3, "primal_cd")]
    series, _ = figures.compare_series(rows, "epoch", "gap", False, True, {})
    text = figures.series_csv(series, "epoch", "gap")
    records = list(csv.DictReader(io.StringIO(text)))
    assert len(records) == sum(len(s.x) for s in series)
    median = [r for r in records if r["curve"] == "dual_cd"]
    assert median[0]["jobs"] == "1 2" and median[0]["band_low"] != ""
    single = [r for r in records if r["curve"] == "primal_cd"]
    assert single[0]["band_low"] == "" and float(single[0]["gap"]) == pytest.approx(2.0, rel=0.1)


def test_time_to_eps_first_point_median_over_seeds_and_unreached():
    rows = [
        row(1, rate=0.2, time_scale=1.0),
        row(2, seed=1, rate=0.2, time_scale=2.0),
        row(3, seed=2, rate=0.2, time_scale=3.0),
        row(4, "primal_cd", rate=0.99),
        row(5, "agd", objective="obj-none", rate=0.2),
    ]
    results = {r["setting"]: r for r in figures.time_to_eps(rows, 1e-3, "subopt_rel", REFS)}
    epochs = np.asarray(rows[0]["trace"]["epoch"])
    first = epochs[np.flatnonzero(0.2**epochs / P_STAR <= 1e-3)[0]]
    assert results["dual_cd"]["value"] == pytest.approx(first * 2.0)  # median of 1×, 2×, 3×
    assert results["dual_cd"]["reached"] == 3 and results["dual_cd"]["seeds"] == 3
    assert results["primal_cd"]["value"] is None and results["primal_cd"]["reached"] == 0
    assert math.isnan(results["agd"]["value"])  # no reference P*: undecidable
    by_epoch = figures.time_to_eps(rows[:1], 1e-3, "subopt_rel", REFS, "epoch")
    assert by_epoch[0]["value"] == pytest.approx(first)
    gap = figures.time_to_eps(rows[4:], 1e-3, "gap_rel", {}, "epoch")[0]["value"]
    assert gap == pytest.approx(epochs[np.flatnonzero(2 * 0.2**epochs / P_STAR <= 1e-3)[0]])


def test_time_to_eps_figures_bars_and_heatmap():
    rows = [row(1), row(2, "primal_cd", rate=0.99), row(3, l2=1e-5, objective="obj-b")]
    refs = {**REFS, "obj-b": {"primal": P_STAR, "gap": 1e-12}}
    results = figures.time_to_eps(rows, 1e-4, "subopt_rel", refs)
    bars = figures.time_to_eps_figure(results, "bars", 1e-4, "subopt_rel")
    assert [t.name for t in bars.data] == ["dual_cd", "primal_cd"]
    assert list(bars.data[0].x) == ["l2=0.0001", "l2=1e-05"]
    assert bars.data[1].y[0] is None and list(bars.data[1].text) == ["not reached", "not run"]
    heat = figures.time_to_eps_figure(results, "heatmap", 1e-4, "subopt_rel")
    assert list(heat.data[0].y) == ["dual_cd", "primal_cd"]
    assert heat.data[0].text[1] == ["not reached", "not run"]
    assert "ε = 0.0001" in heat.layout.title.text
    with pytest.raises(ValueError, match="bars, heatmap"):
        figures.time_to_eps_figure(results, "pie", 1e-4, "subopt_rel")


def test_ranking_names_the_winner_per_objective():
    results = [
        {"setting": "a", "objective": "a9a", "value": 1.0},
        {"setting": "b", "objective": "a9a", "value": 3.0},
        {"setting": "c", "objective": "a9a", "value": None},
        {"setting": "a", "objective": "w8a", "value": 5.0},
        {"setting": "b", "objective": "w8a", "value": 2.0},
        {"setting": "c", "objective": "w8a", "value": math.nan},
    ]
    ranked = {r["objective"]: r for r in figures.ranking(results)}
    assert ranked["a9a"]["winner"] == "a" and ranked["a9a"]["speedup"] == pytest.approx(3.0)
    assert ranked["a9a"]["ranks"] == {"a": 1, "b": 2, "c": 3}
    assert ranked["w8a"]["winner"] == "b" and ranked["w8a"]["ranks"]["c"] is None
    fig = figures.ranking_figure(list(ranked.values()))
    assert list(fig.data[0].x) == ["a9a", "w8a"] and fig.data[0].z[0][1] == 2


def test_records_csv_and_advisor_figure():
    text = figures.records_csv([{"a": 1, "b": [2, 3]}], ("a", "b"))
    assert text.splitlines() == ["a,b", "1,2 3"]
    advice = {"nnz": 100, "T_P_uniform": 800, "T_D_uniform": 400, "T_P": 600, "T_D": 300}
    fig = figures.advisor_figure(advice, {"primal_cd": 7.0, "dual_cd": None})
    assert list(fig.data[1].y) == [6.0, 3.0] and list(fig.data[2].y) == [7.0, None]
    assert figures.empty_figure("nothing").layout.annotations[0].text == "nothing"
