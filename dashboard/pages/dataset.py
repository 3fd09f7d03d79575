"""Dataset: statistics, the Faceoff advisor's prediction and the measured winner.

URL: ``/dataset/ID?objective=K&eps=1e-6``; ``objective`` indexes the objectives (loss, γ, l2,
l1, normalization) that jobs on this dataset minimize.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import dash
from dash import Input, Output, State, callback, dcc, html

from faceoff.core import analysis
from faceoff.core.errors import DataUnavailable
from faceoff.core.jobs import JobFilter
from faceoff.core.labels import advice_scope
from faceoff.core.specs import SpecError
from faceoff.dashboard import fairness, rows
from faceoff.dashboard.components import (
    caps,
    control,
    database_url,
    eps_choice,
    eps_dropdown,
    export_bar,
    href,
    optional_id,
    parse_int,
    share_link,
    upload_dir,
    url_sync,
    viewer_team,
)
from faceoff.dashboard.figures.advisor import advisor_figure, verdict
from faceoff.dashboard.figures.export import export_name, records_csv
from faceoff.dashboard.figures.labels import weights_label
from faceoff.dashboard.figures.style import empty_figure
from faceoff.dashboard.figures.time_to_eps import time_to_eps
from faceoff.solvers.vocabulary import loss_label, multiclass_label

if TYPE_CHECKING:
    import plotly.graph_objects as go

dash.register_page(
    __name__, path_template="/dataset/<dataset_id>", title="Faceoff · dataset", order=3
)

CD_SOLVERS = ("primal_cd", "dual_cd")


def layout(
    dataset_id: str | None = None, objective: str | None = None, eps: str | None = None, **_: str
) -> html.Div:
    return html.Div(
        [
            html.H2(id="dataset-title"),
            html.Div(id="dataset-source", className="status"),
            dcc.Store(id="dataset-id", data=parse_int(dataset_id) or None),
            dcc.Store(id="dataset-choice", data=str(parse_int(objective) or 0)),
            html.Div(
                [
                    control(
                        "objective",
                        dcc.Dropdown(
                            id="dataset-objective", clearable=False, style={"minWidth": "360px"}
                        ),
                    ),
                    control(
                        "ε (measured winner)",
                        eps_dropdown("dataset-eps", eps),
                    ),
                ],
                className="controls",
            ),
            share_link("dataset"),
            html.Div(id="dataset-verdict", className="verdict"),
            html.Div(id="dataset-fairness"),
            html.Div(
                [
                    html.Div([html.H3("Statistics"), html.Div(id="dataset-stats")]),
                    html.Div([html.H3("Faceoff advisor"), html.Div(id="dataset-advice")]),
                    html.Div(
                        [html.H3("Measured (finished runs)"), html.Div(id="dataset-measured")]
                    ),
                ],
                className="row",
            ),
            dcc.Graph(id="dataset-graph", style={"height": "420px"}, config={"displaylogo": False}),
            export_bar("dataset", ["dataset-graph"], csv_label="CSV (statistics and advice)"),
        ]
    )


url_sync("dataset")


def _analysis(dataset_id: int, objective: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(statistics, advice) of the dataset for ``objective`` (core's, kept for a while)."""
    key = (objective["loss"], objective["l2"], objective["gamma"], objective["normalize"])
    return rows.dataset_statistics(
        database_url(), dataset_id, key, upload_dir(), caps(), team_id=viewer_team()
    )


def _source_text(info: dict[str, Any]) -> str:
    """``registry dataset a9a · data: downloaded on first use (...)``."""
    source = info["source"]
    what = {"registry": f"registry dataset {source.get('name')}", "upload": "uploaded file"}
    kind = what.get(source.get("kind"), f"{source.get('kind')} dataset")
    return f"{kind} · data: {info['availability']}"


def _objective_label(o: dict[str, Any], n_classes: int | None = None) -> str:
    loss = loss_label(o["loss"], o["gamma"])
    form = multiclass_label(o.get("multiclass"), n_classes)
    loss += f" · {form}" if form else ""
    norm = "" if o["normalize"] == "none" else f" · normalize={o['normalize']}"
    return f"{loss} · {weights_label(o['l2'], o['l1'], bool(o.get('fit_intercept')))}{norm}"


def _n_classes(info: dict[str, Any]) -> int | None:
    """K of the dataset's labels (core.labels), None when not classes or not known."""
    labels = info.get("labels") or {}
    return labels.get("n_classes") if labels.get("kind") == "classes" else None


def _class_items(info: dict[str, Any], stats: dict[str, Any] | None) -> list[tuple[str, Any]]:
    """The dataset's classes as recorded (core.labels): K, and the samples of each class
    unless the statistics already list them (their ``labels`` row)."""
    labels = info.get("labels")
    if not labels:
        return []
    if labels["kind"] != "classes":
        return [("labels", "regression targets")]
    items: list[tuple[str, Any]] = [("classes K", labels["n_classes"])]
    if labels.get("counts") and not (stats and "label_counts" in stats):
        items.append(("samples per class", labels["counts"]))
    return items


def _facts(items: list[tuple[str, Any]]) -> html.Table:
    def show(value: Any) -> str:
        if isinstance(value, float):
            return f"{value:.4g}"
        if isinstance(value, dict):
            return ", ".join(f"{k} {show(v)}" for k, v in value.items())
        return str(value)

    return html.Table(
        [html.Tr([html.Td(k), html.Td(show(v), className="num")]) for k, v in items],
        className="facts",
    )


def _stat_items(stats: dict[str, Any]) -> list[tuple[str, Any]]:
    items = [
        ("n (examples)", stats["n"]),
        ("d (features)", stats["d"]),
        ("nnz(A)", stats["nnz"]),
        ("density", stats["density"]),
        ("nnz per row", stats["row_nnz"]),
        ("nnz per column", stats["col_nnz"]),
        ("R = max ‖aᵢ‖", stats["R"]),
        ("R̄ = mean ‖aᵢ‖", stats["R_mean"]),
        ("R/R̄", stats["R_ratio"]),
    ]
    if "label_counts" in stats:
        items.append(("labels", stats["label_counts"]))
    return items


def _class_facts(info: dict[str, Any]) -> html.Table | str:
    """The classes alone, while the statistics cannot be had."""
    items = _class_items(info, None)
    return _facts(items) if items else "no statistics"


def _advice_items(advice: dict[str, Any]) -> list[tuple[str, Any]]:
    return [
        ("β (smoothness)", advice["smoothness"]),
        ("κ = R²β/λ", advice["kappa"]),
        ("C_P = Σⱼ nnz(A:ⱼ)‖A:ⱼ‖²", advice["C_P"]),
        ("C_D = Σᵢ nnz(aᵢ)‖aᵢ‖²", advice["C_D"]),
        ("T_P uniform (passes per log 1/ε)", advice["T_P_uniform"] / advice["nnz"]),
        ("T_D uniform (passes per log 1/ε)", advice["T_D_uniform"] / advice["nnz"]),
        ("T_P importance (passes per log 1/ε)", advice["T_P"] / advice["nnz"]),
        ("T_D importance (passes per log 1/ε)", advice["T_D"] / advice["nnz"]),
        ("T_P / T_D", advice["ratio"]),
        ("predicted winner", advice["winner"]),
    ]


def _measured(dataset_id: int, objective: dict[str, Any], eps: float) -> dict[str, Any]:
    """Time and epochs to ε of the finished jobs of ``objective``: the fastest setting
    overall and of each coordinate-descent side."""
    where = JobFilter(dataset_id=dataset_id, loss=objective["loss"], status="succeeded")
    keys = ("gamma", "l2", "l1", "normalize", "multiclass", "fit_intercept")
    url, team = database_url(), viewer_team()
    xs = ("time", "epoch")
    found, refs = rows.job_times(url, where, eps, "subopt_rel", xs, team_id=team)
    # a path job's l1 is its grid's: none of its points is this objective's
    found = [r for r in found if all(r[k] == objective.get(k) for k in keys) and not r["path"]]
    criterion = "subopt_rel" if found and found[0]["objective_hash"] in refs else "gap_rel"
    if criterion == "gap_rel":
        found, refs = rows.job_times(url, where, eps, criterion, xs, team_id=team)
        found = [r for r in found if all(r[k] == objective.get(k) for k in keys) and not r["path"]]
    seconds = time_to_eps(found, eps, criterion, refs, "time")
    epochs = {r["setting"]: r["value"] for r in time_to_eps(found, eps, criterion, refs, "epoch")}
    timed = sorted((r for r in seconds if r["value"] is not None), key=lambda r: r["value"])
    best = {}
    for solver in CD_SOLVERS:
        mine = [r for r in timed if r["solver"] == solver]
        best[solver] = mine[0] if mine else None
    return {
        "criterion": criterion,
        "rows": found,
        "jobs": len(found),
        "winner": timed[0] if timed else None,
        "best": best,
        "epochs": epochs,
    }


def _measured_items(measured: dict[str, Any], eps: float) -> list[tuple[str, Any]]:
    items: list[tuple[str, Any]] = [
        ("finished jobs", measured["jobs"]),
        ("criterion", analysis.CRITERIA[measured["criterion"]].replace("ε", f"{eps:g}")),
    ]
    winner = measured["winner"]
    items.append(
        ("fastest overall", f"{winner['setting']} ({winner['value']:.3g} s)" if winner else "—")
    )
    for solver, r in measured["best"].items():
        text = "did not reach ε or not run"
        if r is not None:
            text = (
                f"{r['setting']}: {r['value']:.3g} s, {measured['epochs'][r['setting']]:.3g} epochs"
            )
        items.append((f"best {solver}", text))
    return items


def _index(value: Any, objectives: list) -> int:
    """The objective ``value`` chooses (its index, as text), the first one by default."""
    index = parse_int(value)
    return index if index is not None and index < len(objectives) else 0


def _objectives(info: dict[str, Any]) -> list[dict[str, Any]]:
    """The objectives run on the dataset, or a default one to get advice for."""
    return info["objectives"] or [
        {"loss": "logistic", "gamma": 1.0, "l2": 1e-4, "l1": 0.0, "normalize": "none"}
    ]


@callback(
    Output("dataset-objective", "options"),
    Output("dataset-objective", "value"),
    Input("dataset-id", "data"),
    State("dataset-choice", "data"),
)
def fill_objectives(dataset_id: Any, chosen: Any) -> tuple[list[dict[str, str]], str | None]:
    """The objectives to choose from, with the one the URL names selected."""
    dataset_id = optional_id(dataset_id, "dataset")
    info = (
        rows.dataset_summary(database_url(), dataset_id, team_id=viewer_team())
        if dataset_id is not None
        else None
    )
    if info is None:
        return [], None
    objectives = _objectives(info)
    k = _n_classes(info)
    labels = [{"label": _objective_label(o, k), "value": str(i)} for i, o in enumerate(objectives)]
    return labels, str(_index(chosen, objectives))


@callback(
    Output("dataset-title", "children"),
    Output("dataset-source", "children"),
    Output("dataset-stats", "children"),
    Output("dataset-advice", "children"),
    Output("dataset-measured", "children"),
    Output("dataset-verdict", "children"),
    Output("dataset-fairness", "children"),
    Output("dataset-graph", "figure"),
    Output("dataset-share", "href"),
    Input("dataset-id", "data"),
    Input("dataset-objective", "value"),
    Input("dataset-eps", "value"),
)
def update(
    dataset_id: Any, index: Any, eps: Any
) -> tuple[
    str,
    str,
    html.Table | str,
    html.Div | html.Table | str,
    html.Table | str,
    str,
    html.Div | None,
    go.Figure,
    str,
]:
    """Statistics, advice and the measured winner of the chosen objective."""
    dataset_id = optional_id(dataset_id, "dataset")
    eps = eps_choice(eps)
    link = href(f"/dataset/{dataset_id}", {"objective": parse_int(index), "eps": eps})
    info = (
        rows.dataset_summary(database_url(), dataset_id, team_id=viewer_team())
        if dataset_id is not None
        else None
    )
    if info is None:
        blank = empty_figure("no such dataset")
        return "No such dataset", "", "", "", "", "", None, blank, link
    objectives = _objectives(info)
    objective = objectives[_index(index, objectives)]
    k = _n_classes(info)
    unavailable: str | None = None  # why there is no advice, when the data are not the reason
    try:
        stats, advice = _analysis(dataset_id, objective)
        advice_view: html.Div | html.Table = _facts(_advice_items(advice))
        scope = advice_scope(objective.get("multiclass"), k)
        if scope:
            advice_view = html.Div([advice_view, html.P(scope, className="status")])
    except (DataUnavailable, LookupError, SpecError) as err:  # SpecError: γ, or l2 = 0
        stats, advice = info["stats"], None
        advice_view = html.Div(str(err), className="error")
        unavailable = (
            "no advice for l2 = 0" if isinstance(err, SpecError) and err.loc == ("l2",) else None
        )
    measured = _measured(dataset_id, objective, float(eps))
    best = measured["best"]
    epochs = {s: r and measured["epochs"][r["setting"]] for s, r in best.items()}
    seconds = {s: r and r["value"] for s, r in best.items()}
    label = f"{info['name']} · {_objective_label(objective, k)}"
    figure = (
        advisor_figure(advice, epochs, seconds, label)
        if advice
        else empty_figure(unavailable or "the advisor needs the data, which cannot be loaded")
    )
    return (
        f"Dataset {info['name']}",
        _source_text(info),
        _facts(_stat_items(stats) + _class_items(info, stats)) if stats else _class_facts(info),
        advice_view,
        _facts(_measured_items(measured, float(eps))),
        verdict(
            advice["winner"] if advice else None,
            advice["ratio"] if advice else None,
            seconds,
            epochs,
        ),
        fairness.warning(measured["rows"]),
        figure,
        link,
    )


@callback(
    Output("dataset-download", "data"),
    Input("dataset-csv", "n_clicks"),
    State("dataset-id", "data"),
    State("dataset-objective", "value"),
    prevent_initial_call=True,
)
def download_csv(
    _clicks: int | None, dataset_id: Any, index: Any
) -> dict[str, Any] | dash.NoUpdate:
    """The statistics and the advice as CSV (name, value)."""
    dataset_id = optional_id(dataset_id, "dataset")
    info = (
        rows.dataset_summary(database_url(), dataset_id, team_id=viewer_team())
        if dataset_id is not None
        else None
    )
    if info is None or not info["objectives"]:
        return dash.no_update
    objective = info["objectives"][_index(index, info["objectives"])]
    stats, advice = _analysis(dataset_id, objective)
    items = _stat_items(stats) + _class_items(info, stats) + _advice_items(advice)
    records = [{"name": k, "value": v} for k, v in items]
    label = f"{info['name']} · {_objective_label(objective, _n_classes(info))}"
    name = export_name("faceoff-dataset", [label]) + ".csv"
    return dcc.send_string(records_csv(records, ("name", "value")), name)
