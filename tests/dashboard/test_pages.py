"""The pages through Dash's HTTP interface (Flask test client), without a browser."""

from __future__ import annotations

import base64
import json
import time

import numpy as np
import pytest

from faceoff.core.db import session_scope
from faceoff.core.models import Job
from tests.dashboard import factories

PAGES = (
    "/",
    "/compare?sweep=1&x=epoch",
    "/sweep/1?eps=1e-4",
    "/dataset/1",
    "/profiles?sweep=abc,2147483648&eps=1e400",
    "/nowhere",
)


def call(client, outputs, inputs, state=()):
    """Run a callback as the browser does; returns {component id: {property: value}}."""
    key = "...".join(f"{o}.{p}" for o, p in outputs)
    body = {
        "output": f"..{key}.." if len(outputs) > 1 else key,
        "outputs": [{"id": o, "property": p} for o, p in outputs]
        if len(outputs) > 1
        else {"id": outputs[0][0], "property": outputs[0][1]},
        "inputs": [{"id": i, "property": p, "value": v} for i, p, v in inputs],
        "state": [{"id": i, "property": p, "value": v} for i, p, v in state],
        "changedPropIds": [f"{i}.{p}" for i, p, _ in inputs[:1]],
    }
    response = client.post("/_dash-update-component", json=body)
    assert response.status_code == 200, response.data[:2000]
    return response.get_json()["response"]


def values(array) -> np.ndarray:
    """A figure array as JSON: a list, or Plotly's typed array {dtype, bdata}."""
    if isinstance(array, dict):
        return np.frombuffer(base64.b64decode(array["bdata"]), dtype=array["dtype"])
    return np.asarray(array)


def compare(
    client, jobs="", sweep="", x="time", y="subopt_rel", logx="linear", logy="log", seeds="median"
):
    outputs = [
        ("compare-graph", "figure"),
        ("compare-graph", "config"),
        ("compare-graph", "style"),
        ("compare-interval", "disabled"),
        ("compare-status", "children"),
        ("compare-share", "href"),
    ]
    inputs = [
        ("compare-jobs", "value", jobs),
        ("compare-sweep", "value", sweep),
        ("compare-x", "value", x),
        ("compare-y", "value", y),
        ("compare-logx", "value", logx),
        ("compare-logy", "value", logy),
        ("compare-seeds", "value", seeds),
        ("compare-interval", "n_intervals", None),
    ]
    return call(client, outputs, inputs)


@pytest.mark.parametrize("path", PAGES)
def test_every_page_is_served(client, sqlite_url, path):
    client.use(sqlite_url)
    assert client.get(path).status_code == 200
    layout = client.get("/_dash-layout")
    assert layout.status_code == 200 and b"_pages_content" in layout.data


HOSTILE_URLS = {  # url: the page's title
    "/profiles?sweep=1e400&dataset=%ED%A0%80&loss=%00&eps=nan&criterion=x&measure=%FF": "profiles",
    "/profiles?sweep=" + ",".join(["2147483648"] * 500) + "&loss=" + "a" * 5000: "profiles",
    "/sweeps?x=%ED%A0%80": "sweeps",
    "/datasets?page=1e400": "datasets",
    "/compare?seeds=%ED%A0%80&x=nan&logx=1e400&jobs=2147483648&sweep=abc": "compare",
    "/compare?seeds=all&seeds=x&jobs=" + ",".join(map(str, range(3000))): "compare",
    "/sweep/99999999999999999999?eps=1e400&criterion=%ED%A0%80&chart=x&x=nan": "sweep",
    "/dataset/2147483648?eps=nan": "dataset",
    "/?sweep=1e400&dataset=%ED%A0%80&solver=%00&status=x": "runs",
}


@pytest.mark.parametrize(("url", "title"), HOSTILE_URLS.items())
def test_hostile_query_strings_still_lay_out_the_page(client, sqlite_url, url, title):
    """The page router calls each page's layout with the query string's values as they
    are: it falls back to defaults (the callbacks then say what they rejected)."""
    client.use(sqlite_url)
    pathname, _, search = url.partition("?")
    response = client.post(
        "/_dash-update-component",
        json={
            "output": ".._pages_content.children..._pages_store.data..",
            "outputs": [
                {"id": "_pages_content", "property": "children"},
                {"id": "_pages_store", "property": "data"},
            ],
            "inputs": [
                {"id": "_pages_location", "property": "pathname", "value": pathname},
                {"id": "_pages_location", "property": "search", "value": f"?{search}"},
            ],
            "changedPropIds": ["_pages_location.pathname"],
        },
    )
    assert response.status_code == 200, response.data[:2000]
    body = response.get_json()
    assert "sideUpdate" not in body  # no error banner
    assert body["response"]["_pages_store"]["data"]["title"] == f"Faceoff · {title}"


def test_without_auth_only_this_machine_is_served(client, sqlite_url):
    client.use(sqlite_url)
    for path in ("/", "/_dash-layout"):
        remote = client.get(path, environ_base={"REMOTE_ADDR": "10.0.0.5"})
        assert remote.status_code == 403 and b"FACEOFF_AUTH_ENABLED=true" in remote.data
    assert client.get("/", environ_base={"REMOTE_ADDR": "::1"}).status_code == 200
    assert client.get("/login").headers["location"] == "/"  # nothing to log in to


def test_compare_callback_draws_the_sweep_and_keeps_the_view_in_the_url(client, sqlite_url):
    sweep_id, ids = factories.add_sweep(sqlite_url)
    client.use(sqlite_url)
    out = compare(client, sweep=str(sweep_id), x="epoch", logx="log")
    figure = out["compare-graph"]["figure"]
    names = [t["name"] for t in figure["data"] if t.get("showlegend", True)]
    assert sorted(names) == [
        "dual_cd",
        "dual_cd[sampling=importance]",
        "primal_cd",
        "spdc[batch_size=8,sampling=weighted]",
    ]
    assert figure["layout"]["xaxis"]["type"] == "log"
    assert out["compare-interval"]["disabled"] is True  # finished: no refresh
    assert out["compare-share"]["href"] == (
        f"/compare?sweep={sweep_id}&x=epoch&y=subopt_rel&logx=log&logy=log"
    )
    assert out["compare-status"]["children"] == "4 jobs: 4 succeeded"
    two = compare(client, jobs=f"{ids[0]}, {ids[2]}")
    assert len(two["compare-graph"]["figure"]["data"]) == 2
    bad = compare(client, jobs="1,x")
    assert "'x' is not a positive integer" in bad["compare-status"]["children"]


def test_compare_refreshes_while_a_job_runs_and_stops_when_it_ends(client, sqlite_url):
    job_id = factories.add_running_job(sqlite_url, n_points=15)
    client.use(sqlite_url)
    first = compare(client, jobs=str(job_id))
    assert first["compare-interval"]["disabled"] is False
    assert len(values(first["compare-graph"]["figure"]["data"][0]["x"])) == 15
    factories.append_points(sqlite_url, job_id, 10)
    with session_scope(sqlite_url) as session:
        session.get(Job, job_id).status = "succeeded"
    second = compare(client, jobs=str(job_id))
    assert len(values(second["compare-graph"]["figure"]["data"][0]["x"])) == 25
    assert second["compare-interval"]["disabled"] is True


def test_compare_csv_download(client, sqlite_url):
    sweep_id, _ = factories.add_sweep(sqlite_url, n_points=50)
    client.use(sqlite_url)
    out = call(
        client,
        [("compare-download", "data")],
        [("compare-csv", "n_clicks", 1)],
        [
            ("compare-jobs", "value", ""),
            ("compare-sweep", "value", str(sweep_id)),
            ("compare-x", "value", "epoch"),
            ("compare-y", "value", "gap"),
            ("compare-logx", "value", "log"),
            ("compare-logy", "value", "log"),
        ],
    )
    data = out["compare-download"]["data"]
    assert data["filename"] == "faceoff-compare-synthetic-300x40-logistic-l2-0.001.csv"
    lines = data["content"].splitlines()
    assert lines[0] == (
        "curve,solver,setting,objective,trace_mode,jobs,epoch,gap,band_low,band_high"
    )
    assert len(lines) == 1 + 4 * 50


def test_runs_table_filters_and_links(client, sqlite_url):
    sweep_id, ids = factories.add_sweep(sqlite_url)
    running = factories.add_running_job(sqlite_url)
    client.use(sqlite_url)
    filters = ("sweep", "dataset", "solver", "loss", "status")
    chosen = call(
        client,
        [(f"runs-{f}", p) for p in ("options", "value") for f in filters],
        [("runs-chosen", "data", {"sweep": sweep_id, "status": "running"})],
    )
    assert chosen["runs-sweep"] == {
        "options": [{"label": f"#{sweep_id} synthetic faceoff", "value": sweep_id}],
        "value": sweep_id,
    }
    assert chosen["runs-status"]["value"] == "running" and chosen["runs-loss"]["value"] is None
    outputs = [
        ("runs-table", "data"),
        ("runs-interval", "disabled"),
        ("runs-summary", "children"),
        ("runs-share", "href"),
    ]
    values = {"sweep": None, "dataset": None, "solver": None, "loss": None, "status": None}
    inputs = [(f"runs-{f}", "value", values[f]) for f in filters]
    out = call(client, outputs, inputs + [("runs-interval", "n_intervals", None)])
    rows = out["runs-table"]["data"]
    assert [r["id"] for r in rows] == [running, *sorted(ids, reverse=True)]
    assert rows[0]["progress"].endswith("(20 points)") and rows[0]["status"] == "running"
    assert rows[0]["job"] == f"[{running}](/compare?jobs={running})"
    assert out["runs-interval"]["disabled"] is False
    values["sweep"], values["solver"] = sweep_id, "dual_cd"
    inputs = [(f"runs-{f}", "value", values[f]) for f in filters]
    out = call(client, outputs, inputs + [("runs-interval", "n_intervals", None)])
    assert {r["setting"] for r in out["runs-table"]["data"]} == {
        "dual_cd",
        "dual_cd[sampling=importance]",
    }
    assert out["runs-interval"]["disabled"] is True
    assert out["runs-share"]["href"] == f"/?sweep={sweep_id}&solver=dual_cd"
    link = call(
        client,
        [("runs-compare", "href"), ("runs-compare", "children")],
        [("runs-table", "selected_row_ids", [ids[1], ids[0]]), ("runs-sweep", "value", None)],
    )
    assert link["runs-compare"]["href"] == f"/compare?jobs={ids[0]},{ids[1]}"


def test_sweep_page_time_to_eps_and_ranking(client, sqlite_url):
    sweep_id, _ = factories.add_sweep(sqlite_url, l2s=(1e-3, 1e-4), seeds=(0, 1))
    client.use(sqlite_url)
    outputs = [
        ("sweep-title", "children"),
        ("sweep-tte", "figure"),
        ("sweep-tte", "style"),
        ("sweep-ranking", "figure"),
        ("sweep-ranking", "style"),
        ("sweep-winners", "children"),
        ("sweep-status", "children"),
        ("sweep-interval", "disabled"),
        ("sweep-share", "href"),
        ("sweep-compare", "href"),
        ("sweep-runs", "href"),
    ]
    inputs = [
        ("sweep-id", "data", sweep_id),
        ("sweep-eps", "value", "1e-6"),
        ("sweep-criterion", "value", "subopt_rel"),
        ("sweep-x", "value", "time"),
        ("sweep-chart", "value", "heatmap"),
        ("sweep-scale", "value", "auto"),
        ("sweep-interval", "n_intervals", None),
        ("sweep-settle", "value", "test_loss"),
        ("sweep-delta", "value", "1e-2"),
    ]
    out = call(client, outputs, inputs)
    assert out["sweep-title"]["children"] == f"Sweep #{sweep_id} · synthetic faceoff"
    heat = out["sweep-tte"]["figure"]["data"][0]
    assert heat["type"] == "heatmap" and heat["x"] == ["l2=0.001", "l2=0.0001"]
    assert len(heat["y"]) == 4
    ranking = out["sweep-ranking"]["figure"]["data"][0]
    assert ranking["x"] == ["l2=0.001", "l2=0.0001"]
    winners = json.dumps(out["sweep-winners"]["children"])
    assert "dual_cd[sampling=importance]" in winners  # the fastest synthetic setting
    assert out["sweep-share"]["href"] == (
        f"/sweep/{sweep_id}?eps=1e-6&criterion=subopt_rel&x=time&chart=heatmap&scale=auto"
    )
    dots = call(client, outputs, [*inputs[:4], ("sweep-chart", "value", "dots"), *inputs[5:]])
    panels = {t["xaxis"] for t in dots["sweep-tte"]["figure"]["data"]}
    assert panels == {"x", "x2"}  # one panel per objective
    assert (
        dots["sweep-tte"]["style"]["height"]
        == f"{dots['sweep-tte']['figure']['layout']['height']}px"
    )
    csv = call(
        client,
        [("sweep-download", "data")],
        [("sweep-csv", "n_clicks", 1)],
        [(i, p, v) for i, p, v in inputs[:4]],
    )["sweep-download"]["data"]
    assert csv["content"].startswith("objective,dataset,setting,solver,value,q25,q75")
    assert csv["filename"] == (
        f"faceoff-sweep-{sweep_id}-time-to-1e-6-synthetic-300x40-logistic-2-objectives.csv"
    )
    assert len(csv["content"].splitlines()) == 1 + 8


def test_dataset_page_advisor_next_to_the_measured_winner(client, sqlite_url):
    factories.add_sweep(sqlite_url, settings=factories.SETTINGS[:3])
    client.use(sqlite_url)
    options = call(
        client,
        [("dataset-objective", "options"), ("dataset-objective", "value")],
        [("dataset-id", "data", 1)],
        [("dataset-choice", "data", "7")],
    )
    assert options["dataset-objective"] == {
        "options": [{"label": "logistic · l2=0.001", "value": "0"}],
        "value": "0",
    }
    outputs = [
        ("dataset-title", "children"),
        ("dataset-source", "children"),
        ("dataset-stats", "children"),
        ("dataset-advice", "children"),
        ("dataset-measured", "children"),
        ("dataset-verdict", "children"),
        ("dataset-fairness", "children"),
        ("dataset-graph", "figure"),
        ("dataset-share", "href"),
    ]
    inputs = [
        ("dataset-id", "data", 1),
        ("dataset-objective", "value", "0"),
        ("dataset-eps", "value", "1e-6"),
    ]
    start = time.perf_counter()
    out = call(client, outputs, inputs)
    assert time.perf_counter() - start < 30
    assert out["dataset-title"]["children"] == "Dataset synthetic-300x40"
    assert out["dataset-source"]["children"] == "synthetic dataset · data: generated when used"
    assert out["dataset-share"]["href"] == "/dataset/1?objective=0&eps=1e-6"
    stats = json.dumps(out["dataset-stats"]["children"])
    assert '"300"' in stats and '"40"' in stats
    advice = json.dumps(out["dataset-advice"]["children"], ensure_ascii=False)
    assert "C_P" in advice and "predicted winner" in advice
    verdict = out["dataset-verdict"]["children"]
    assert verdict.startswith("The advisor predicts") and "dual_cd is faster" in verdict
    assert out["dataset-fairness"]["children"] is None  # no machine recorded: nothing to say
    measured = json.dumps(out["dataset-measured"]["children"])
    assert "dual_cd[sampling=importance]" in measured
    (ratios,) = out["dataset-graph"]["figure"]["data"]  # predicted T_P/T_D beside measured
    assert len(ratios["y"]) == 4 and all(ratios["y"])
