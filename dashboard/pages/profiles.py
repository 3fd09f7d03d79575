"""Profiles: performance profiles (Dolan & Moré) and data profiles (Moré & Wild) of time to ε
over many objectives, chosen by sweeps, datasets and loss (core.analysis computes them,
dashboard.figures.profiles draws them).

URL: ``/profiles?sweep=1,2&dataset=3&loss=logistic&eps=1e-6&criterion=subopt_rel|gap_rel
&measure=time|epoch``; without ``sweep`` the newest sweep, with ``sweep=all`` every sweep.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import dash
from dash import Input, Output, State, callback, dcc, html

from faceoff.core import analysis, summaries
from faceoff.core.jobs import JobFilter
from faceoff.core.models import CANCELLED, FAILED, QUEUED, RUNNING, SUCCEEDED
from faceoff.dashboard import fairness, rows
from faceoff.dashboard.components import (
    InputError,
    choice,
    control,
    database_url,
    export_bar,
    href,
    name_filter,
    options,
    parse_eps,
    parse_id_list,
    radio,
    share_link,
    url_sync,
    viewer_team,
)
from faceoff.dashboard.figures.export import profiles_csv
from faceoff.dashboard.figures.profiles import profile_figure
from faceoff.dashboard.figures.style import empty_figure
from faceoff.dashboard.figures.time_to_eps import time_to_eps

if TYPE_CHECKING:
    import plotly.graph_objects as go

dash.register_page(__name__, path="/profiles", title="Faceoff · profiles", order=4)

MEASURES = {"time": "seconds", "epoch": "epochs"}
NEWEST, ALL = "newest", "all"  # the sweeps chosen when the address names none, or every one
FINISHED = (SUCCEEDED, FAILED)  # a failed run counts for what its trace reached
UNFINISHED = (QUEUED, RUNNING, CANCELLED)
DATA_UNIT_NOTE = (
    "Data profile in epochs: κ counts passes over the problem's data (an epoch is nnz(A) "
    "non-zeros visited, the same unit for every solver), Moré & Wild's cost unit c_p. It is "
    "not drawn in seconds: no time per pass is recorded for a problem independently of the "
    "solvers (a setting's own seconds per epoch would make its time profile its epoch "
    "profile; a pooled one would change with the settings selected)."
)


def _multi(page_id: str) -> dcc.Dropdown:
    """A dropdown of several ids, filled by :func:`fill_filters`."""
    return dcc.Dropdown(id=page_id, multi=True, placeholder="any", style={"minWidth": "220px"})


def layout(
    sweep: str | None = None,
    dataset: str | None = None,
    loss: str | None = None,
    eps: str | None = None,
    criterion: str | None = None,
    measure: str | None = None,
    **_: str,
) -> html.Div:
    sweeps, bad_sweeps = parse_id_list(None if sweep == ALL else sweep, "sweep")
    datasets, bad_datasets = parse_id_list(dataset, "dataset")
    eps_text, bad_eps = parse_eps(eps)
    rejected = [*bad_sweeps, *bad_datasets, *([bad_eps] if bad_eps else [])]
    try:
        loss = name_filter(loss, "loss")
    except InputError as err:
        loss, rejected = None, [*rejected, f"{err}; ignored"]
    # no sweep in the address: the newest (fill_filters finds it); "all": every sweep
    chosen = {
        "sweep": NEWEST if sweep is None else (ALL if sweep == ALL else sweeps),
        "dataset": datasets,
        "loss": loss,
    }
    return html.Div(
        [
            html.H2("Performance and data profiles"),
            html.P(
                "Which solver setting reaches ε fastest over many problems? A problem is an "
                "objective (data, loss, weights); a setting's time to ε on it is the median "
                "over its seeds. The performance profile ρ(τ) is the fraction of problems a "
                "setting solves within τ times the fastest setting's time (Dolan & Moré "
                "2002); the data profile d(κ), the fraction it solves within κ passes over "
                "the data (Moré & Wild 2009).",
                className="status",
            ),
            dcc.Store(id="profiles-chosen", data=chosen),
            html.Div(
                [
                    control("sweeps", _multi("profiles-sweep")),
                    control("datasets", _multi("profiles-dataset")),
                    control("loss", dcc.Dropdown(id="profiles-loss", placeholder="any")),
                    control(
                        "ε", dcc.Input(id="profiles-eps", value=eps_text, debounce=True, size="8")
                    ),
                    control(
                        "criterion",
                        radio("profiles-criterion", analysis.CRITERIA, criterion, "subopt_rel"),
                    ),
                    control("measured in", radio("profiles-measure", MEASURES, measure, "time")),
                ],
                className="controls",
            ),
            html.Div(
                [
                    html.Span(id="profiles-status", className="status"),
                    " · ",
                    share_link("profiles"),
                ]
            ),
            html.Div(
                f"In the address: {'; '.join(rejected)}" if rejected else "",
                id="profiles-address",
                className="status error",
            ),
            html.Div(id="profiles-rejected", className="status error"),
            html.Div(id="profiles-unknown", className="status error"),
            html.Ul(id="profiles-notes", className="status"),
            html.Div(id="profiles-fairness"),
            dcc.Graph(id="profiles-performance", config={"displaylogo": False}),
            dcc.Graph(id="profiles-data", config={"displaylogo": False}),
            export_bar(
                "profiles",
                ["profiles-performance", "profiles-data"],
                csv_label="CSV (profile curves)",
            ),
            html.H3("Settings"),
            html.Div(id="profiles-settings"),
            html.H3("Problems"),
            html.Div(id="profiles-problems"),
        ]
    )


url_sync("profiles")


@callback(
    Output("profiles-sweep", "options"),
    Output("profiles-dataset", "options"),
    Output("profiles-loss", "options"),
    Output("profiles-sweep", "value"),
    Output("profiles-dataset", "value"),
    Output("profiles-loss", "value"),
    Output("profiles-unknown", "children"),
    Input("profiles-chosen", "data"),
)
def fill_filters(
    chosen: Any,
) -> tuple[
    list[dict[str, Any]],
    list[dict[str, Any]],
    list[dict[str, Any]],
    list[int],
    list[int],
    str | None,
    str,
]:
    """What the team can filter by, with the URL's choices that it may see selected (no
    sweep in the URL: the newest)."""
    if not isinstance(chosen, dict):
        raise InputError(f"the filters {chosen!r:.40} are not a mapping of filter to value")
    available = rows.filter_options(database_url(), team_id=viewer_team())
    wanted = chosen.get("sweep")
    if wanted == NEWEST:  # the newest first
        sweeps = [s for s, _ in available["sweep"][:1]]
    else:
        sweeps, _ = parse_id_list(None if wanted == ALL else wanted, "sweep")
    datasets, _ = parse_id_list(chosen.get("dataset"), "dataset")
    loss = name_filter(chosen.get("loss"), "loss")
    known_sweeps = {s for s, _ in available["sweep"]}
    known_datasets = {d for d, _ in available["dataset"]}
    unknown = [f"no sweep {s}" for s in sweeps if s not in known_sweeps]
    unknown += [f"no dataset {d}" for d in datasets if d not in known_datasets]
    if loss is not None and loss not in available["loss"]:
        unknown.append(f"no jobs with loss {loss!r}")
        loss = None
    return (
        options(available["sweep"]),
        options(available["dataset"]),
        options(available["loss"]),
        [s for s in sweeps if s in known_sweeps],
        [d for d in datasets if d in known_datasets],
        loss,
        "; ".join(unknown) + (" (ignored)" if unknown else ""),
    )


def _view(
    sweep: Any, dataset: Any, loss: Any, eps: Any, criterion: Any, measure: Any
) -> tuple[JobFilter, dict[str, Any], str]:
    """(the finished jobs to read, the view's URL parameters, what was not accepted)."""
    sweeps, bad = parse_id_list(sweep, "sweep")
    datasets, bad_datasets = parse_id_list(dataset, "dataset")
    eps, bad_eps = parse_eps(eps)
    where = JobFilter(
        sweep_ids=tuple(sweeps) or None,
        dataset_ids=tuple(datasets) or None,
        loss=name_filter(loss, "loss"),
        statuses=FINISHED,
    )
    params = {
        "sweep": ",".join(map(str, sweeps)) or ALL,
        "dataset": ",".join(map(str, datasets)),
        "loss": where.loss,
        "eps": eps,
        "criterion": choice(criterion, analysis.CRITERIA, "subopt_rel"),
        "measure": choice(measure, MEASURES, "time"),
    }
    return where, params, "; ".join([*bad, *bad_datasets, *([bad_eps] if bad_eps else [])])


def compute(where: JobFilter, eps: float, criterion: str, measure: str) -> dict[str, Any]:
    """The profiles of every finished job matching ``where`` (their times to ε come from
    the trace summaries, core.summaries): the problems, the performance profile in
    ``measure``, the data profile in epochs, and the counts."""
    url, team = database_url(), viewer_team()
    xs = list(dict.fromkeys((measure, "epoch")))
    found, refs = rows.job_times(url, where, eps, criterion, xs, team_id=team)
    _, unfinished = rows.list_jobs(url, replace(where, statuses=UNFINISHED), 0, team_id=team)
    results = time_to_eps(found, eps, criterion, refs, measure)
    epochs = results if measure == "epoch" else time_to_eps(found, eps, criterion, refs, "epoch")
    matrix = analysis.problems(results)  # the same problems and settings in either measure
    return {
        "rows": found,
        "jobs": len(found),
        "eps": eps,
        "unfinished": unfinished,
        "problems": matrix,
        "results": results,
        "performance": analysis.performance_profile(matrix.t),
        "data": analysis.data_profile(analysis.problems(epochs).t),
    }


def _notes(view: dict[str, Any], criterion: str) -> list[html.Li]:
    found: analysis.Problems = view["problems"]
    n = len(found.hashes)
    notes = [
        f"|P| = {n} problems from {view['jobs']} finished jobs and {len(found.settings)} "
        "solver settings"
    ]
    if found.unsolved:
        k, names = len(found.unsolved), "; ".join(found.labels[h] for h in found.unsolved)
        notes.append(
            f"{k} of the {n} problems were solved by no setting: they count in |P|, so no "
            f"curve rises above {1 - k / n:.0%} ({names})"
        )
    if found.not_run:
        notes.append(
            f"{found.not_run} (problem, setting) pairs were not run: they count as not reaching ε"
        )
    if found.undecided:
        why = (
            "no certified P* for the relative suboptimality (the gap criterion needs none)"
            if criterion == "subopt_rel"
            else "undecidable"
        )
        notes.append(
            f"{len(found.undecided)} objectives left out of P, {why}: "
            + "; ".join(found.labels[h] for h in found.undecided)
        )
    if summaries.grid_exponent(view["eps"]) is None:
        notes.append(
            f"ε = {view['eps']:g} is not one of 1e-1, 1e-2, … 1e-12, whose times to ε are "
            "summarized when the jobs run: each job's trace was read instead (slower)"
        )
    if view["unfinished"]:
        notes.append(f"{view['unfinished']} queued, running or cancelled jobs are not counted")
    notes.append(DATA_UNIT_NOTE)
    return [html.Li(text) for text in notes]


def _table(head: list[str], body: list[list[Any]], numeric: set[int]) -> html.Table:
    return html.Table(
        [
            html.Thead(html.Tr([html.Th(h) for h in head])),
            html.Tbody(
                [
                    html.Tr(
                        [
                            html.Td(v, className="num" if i in numeric else None)
                            for i, v in enumerate(r)
                        ]
                    )
                    for r in body
                ]
            ),
        ],
        className="facts",
    )


def _settings_table(found: analysis.Problems) -> html.Table:
    body = [
        [
            s["setting"],
            f"{s['run']}",
            f"{s['solved']} of {s['problems']}",
            f"{s['fraction_solved']:.0%}",
            f"{s['fastest']} ({s['fraction_fastest']:.0%})",
        ]
        for s in analysis.solved_summary(found)
    ]
    head = ["setting", "problems run", "reached ε on", "fraction solved", "fastest on (ρ(1))"]
    return _table(head, body, {1, 2, 3, 4})


def _problems_table(found: analysis.Problems, unit: str) -> html.Table:
    body = []
    for i, digest in enumerate(found.hashes):
        t = found.t[i]
        solved, best = int((t < math.inf).sum()), int(t.argmin())
        body.append(
            [
                found.labels[digest],
                found.settings[best] if solved else "nobody reached ε",
                f"{t[best]:.3g} {unit}" if solved else "",
                f"{solved} of {int(found.ran[i].sum())}",
            ]
        )
    for digest in found.undecided:
        body.append([found.labels[digest], "left out: no certified P*", "", ""])
    head = ["objective", "fastest setting", "its time to ε", "settings reaching ε"]
    return _table(head, body, {2, 3})


def _figures(
    view: dict[str, Any], eps: str, criterion: str, measure: str
) -> tuple[go.Figure, go.Figure]:
    found, unit = view["problems"], MEASURES[measure]
    criterion_text = analysis.CRITERIA[criterion].replace("ε", f"ε = {eps}")
    if not found.hashes:
        blank = empty_figure("no finished jobs with traces match the filters")
        return blank, blank
    performance = profile_figure(
        found,
        view["performance"],
        f"Performance profile: {unit} to {criterion_text}",
        f"τ: {unit} to ε ÷ the fastest setting's (log)",
        "τ",
        from_zero=False,
    )
    data = profile_figure(
        found,
        view["data"],
        f"Data profile: epochs to {criterion_text}",
        "κ: passes over the data (epochs) to ε (log)",
        "κ",
        from_zero=True,
    )
    return performance, data


def _sweeps_shown(sweep_ids: tuple[int, ...] | None) -> str:
    """Which sweeps the profiles are of: ``sweep #12 (the newest)``, ``sweeps #3, #5``,
    ``every sweep``."""
    if not sweep_ids:
        return "every sweep"
    newest, _ = rows.sweep_index(database_url(), 1, team_id=viewer_team())
    names = ", ".join(f"#{s}" for s in sweep_ids)
    if len(sweep_ids) == 1 and newest and newest[0]["id"] == sweep_ids[0]:
        return f"sweep {names} (the newest; choose others above, or clear for every sweep)"
    return f"sweep{'s' if len(sweep_ids) > 1 else ''} {names}"


def _height(figure: go.Figure) -> dict[str, str]:
    return {"height": f"{figure.layout.height or 480}px"}


@callback(
    Output("profiles-performance", "figure"),
    Output("profiles-data", "figure"),
    Output("profiles-performance", "style"),
    Output("profiles-data", "style"),
    Output("profiles-status", "children"),
    Output("profiles-fairness", "children"),
    Output("profiles-rejected", "children"),
    Output("profiles-notes", "children"),
    Output("profiles-settings", "children"),
    Output("profiles-problems", "children"),
    Output("profiles-share", "href"),
    Input("profiles-sweep", "value"),
    Input("profiles-dataset", "value"),
    Input("profiles-loss", "value"),
    Input("profiles-eps", "value"),
    Input("profiles-criterion", "value"),
    Input("profiles-measure", "value"),
)
def update(
    sweep: Any, dataset: Any, loss: Any, eps: Any, criterion: Any, measure: Any
) -> tuple[
    go.Figure,
    go.Figure,
    dict[str, str],
    dict[str, str],
    str,
    html.Div | None,
    str,
    list[html.Li],
    html.Table,
    html.Table,
    str,
]:
    """The profiles of the chosen objectives."""
    where, params, rejected = _view(sweep, dataset, loss, eps, criterion, measure)
    eps, criterion, measure = params["eps"], params["criterion"], params["measure"]
    view = compute(where, float(eps), criterion, measure)
    found = view["problems"]
    performance, data = _figures(view, eps, criterion, measure)
    status = (
        f"{_sweeps_shown(where.sweep_ids)}: {len(found.hashes)} problems × "
        f"{len(found.settings)} settings, ε = {eps}, {analysis.CRITERIA[criterion]}"
    )
    return (
        performance,
        data,
        _height(performance),
        _height(data),
        status,
        fairness.warning(view["rows"]),
        rejected,
        _notes(view, criterion),
        _settings_table(found),
        _problems_table(found, MEASURES[measure]),
        href("/profiles", params),
    )


@callback(
    Output("profiles-download", "data"),
    Input("profiles-csv", "n_clicks"),
    State("profiles-sweep", "value"),
    State("profiles-dataset", "value"),
    State("profiles-loss", "value"),
    State("profiles-eps", "value"),
    State("profiles-criterion", "value"),
    State("profiles-measure", "value"),
    prevent_initial_call=True,
)
def download_csv(
    _clicks: int | None,
    sweep: Any,
    dataset: Any,
    loss: Any,
    eps: Any,
    criterion: Any,
    measure: Any,
) -> dict[str, Any]:
    """The profile curves as CSV."""
    where, params, _ = _view(sweep, dataset, loss, eps, criterion, measure)
    eps, criterion, measure = params["eps"], params["criterion"], params["measure"]
    view = compute(where, float(eps), criterion, measure)
    curves = {"performance": (measure, view["performance"]), "data": ("epoch", view["data"])}
    text = profiles_csv(view["problems"], curves)
    return dcc.send_string(text, f"faceoff-profiles-{measure}-{eps}.csv")
