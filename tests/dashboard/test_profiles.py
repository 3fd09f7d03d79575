"""Performance and data profiles from job rows (time to ε over seeds, then
core.analysis's profiles), their CSV, and the profiles page through Dash's HTTP interface.
The profiles themselves against hand-computed cases: tests/core/test_analysis.py."""

from __future__ import annotations

import json
import math
import sys

import pytest

from faceoff.core import analysis
from faceoff.dashboard.components import parse_eps, parse_id_list
from faceoff.dashboard.figures import export, time_to_eps
from tests.dashboard import factories
from tests.dashboard.test_pages import call, values

INF = math.inf


def _result(setting, digest, value, solver="dual_cd"):
    return {
        "setting": setting,
        "solver": solver,
        "objective": f"label {digest}",
        "objective_hash": digest,
        "dataset": "d",
        "value": value,
        "reached": 0,
        "seeds": 1,
        "job_ids": [],
    }


def _row(job_id, solver, objective, seed, reached_at):
    """A job row whose relative suboptimality drops below 1e-6 at time ``reached_at`` (None:
    never); its epochs are ten times its seconds."""
    times = [1.0, 2.0, 3.0, 4.0, 5.0]
    subopt = [1e-2 if reached_at is None or t < reached_at else 1e-8 for t in times]
    return {
        "id": job_id,
        "solver": solver,
        "params": {},
        "seed": seed,
        "dataset": f"data-{objective}",
        "loss": "logistic",
        "gamma": 1.0,
        "l1": 0.0,
        "l2": 1e-3,
        "normalize": "none",
        "objective_hash": objective,
        "trace": {
            "seq": list(range(5)),
            "iteration": list(range(5)),
            "epoch": [10 * t for t in times],
            "time_s": times,
            "primal": [1.0 + s for s in subopt],
            "gap": subopt,
        },
    }


def test_median_over_seeds_through_time_to_eps():
    """Three seeds of dual_cd reach ε at 1, 3 and never: median 3; primal_cd at 2, never,
    never: median ∞. On the second objective both reach at 4 and 2 (one seed each)."""
    rows = [
        _row(1, "dual_cd", "o1", 0, 1.0),
        _row(2, "dual_cd", "o1", 1, 3.0),
        _row(3, "dual_cd", "o1", 2, None),
        _row(4, "primal_cd", "o1", 0, 2.0),
        _row(5, "primal_cd", "o1", 1, None),
        _row(6, "primal_cd", "o1", 2, None),
        _row(7, "dual_cd", "o2", 0, 4.0),
        _row(8, "primal_cd", "o2", 0, 2.0),
    ]
    refs = {"o1": {"primal": 1.0, "gap": 0.0}, "o2": {"primal": 1.0, "gap": 0.0}}
    found = analysis.problems(time_to_eps.time_to_eps(rows, 1e-6, "subopt_rel", refs, "time"))
    assert found.settings == ["dual_cd", "primal_cd"]
    assert found.t.tolist() == [[3, INF], [4, 2]]
    assert analysis.performance_profile(found.t).counts.tolist() == [[1, 1], [2, 1]]  # τ = 1, 2
    epochs = analysis.problems(time_to_eps.time_to_eps(rows, 1e-6, "subopt_rel", refs, "epoch"))
    data = analysis.data_profile(epochs.t)
    assert data.x.tolist() == [20, 30, 40] and data.counts.tolist() == [[0, 1], [1, 1], [2, 1]]
    no_reference = time_to_eps.time_to_eps(rows, 1e-6, "subopt_rel", {"o1": refs["o1"]}, "time")
    assert analysis.problems(no_reference).undecided == ["o2"]


def test_profiles_csv_lists_every_breakpoint_of_every_setting():
    results = [_result("A", "h1", 1.0), _result("B", "h1", 3.0), _result("B", "h2", 2.0)]
    found = analysis.problems(results)
    curves = {
        "performance": ("time", analysis.performance_profile(found.t)),
        "data": ("epoch", analysis.data_profile(found.t)),
    }
    lines = export.profiles_csv(found, curves).splitlines()
    assert lines[0] == "profile,measure,setting,solver,x,fraction,within,problems"
    assert "performance,time,B,dual_cd,3.0,1.0,2,2" in lines  # τ = 3: both problems
    assert "data,epoch,A,dual_cd,3.0,0.5,1,2" in lines
    assert len(lines) == 1 + 2 * 2 + 2 * 3  # breakpoints τ ∈ {1, 3}, κ ∈ {1, 2, 3}


@pytest.mark.parametrize(
    ("text", "shown", "rejected"),
    [
        ("1e-8", "1e-8", False),
        ("0.00025", "0.00025", False),
        ("1E-10", "1e-10", False),
        ("", "1e-6", False),
        ("1e400", "1e-6", True),
        ("nan", "1e-6", True),
        ("-1", "1e-6", True),
        ("2", "1e-6", True),
        ("abc", "1e-6", True),
    ],
)
def test_eps_from_the_url(text, shown, rejected):
    eps, why = parse_eps(text)
    assert eps == shown and (why is not None) == rejected
    if rejected:
        assert "a number from 1e-16 to 1" in why


def test_ids_from_the_url():
    assert parse_id_list("3, 1,3", "sweep") == ([1, 3], [])
    ids, rejected = parse_id_list(f"abc,{2**31},2", "sweep")
    assert ids == [2]
    assert "'abc' is not a positive integer" in rejected[0]
    assert "out of range" in rejected[1]
    assert parse_id_list({"x": 1}, "sweep")[0] == []


# ---------------------------------------------------------------- the page's callbacks

OUTPUTS = [
    ("profiles-performance", "figure"),
    ("profiles-data", "figure"),
    ("profiles-performance", "style"),
    ("profiles-data", "style"),
    ("profiles-status", "children"),
    ("profiles-fairness", "children"),
    ("profiles-rejected", "children"),
    ("profiles-notes", "children"),
    ("profiles-settings", "children"),
    ("profiles-problems", "children"),
    ("profiles-share", "href"),
]


def update(
    client, sweep=None, dataset=None, loss=None, eps="1e-6", criterion="subopt_rel", measure="time"
):
    inputs = [
        ("profiles-sweep", "value", sweep),
        ("profiles-dataset", "value", dataset),
        ("profiles-loss", "value", loss),
        ("profiles-eps", "value", eps),
        ("profiles-criterion", "value", criterion),
        ("profiles-measure", "value", measure),
    ]
    return call(client, OUTPUTS, inputs)


def test_profiles_of_two_sweeps(client, sqlite_url):
    one, _ = factories.add_sweep(sqlite_url, l2s=(1e-3, 1e-4), seeds=(0, 1))
    two, _ = factories.add_sweep(
        sqlite_url, settings=factories.SETTINGS[:2], dataset_name="second", reference=False
    )
    client.use(sqlite_url)
    out = update(client, sweep=[one, two], measure="epoch")
    status = out["profiles-status"]["children"]
    assert status.startswith(f"sweeps #{one}, #{two}: 2 problems × 4 settings"), status
    assert out["profiles-share"]["href"] == (
        f"/profiles?sweep={one}%2C{two}&eps=1e-6&criterion=subopt_rel&measure=epoch"
    )
    notes = json.dumps(out["profiles-notes"]["children"])
    assert "1 objectives left out of P, no certified P*" in notes  # the second sweep's
    assert "Data profile in epochs" in notes
    curves = out["profiles-performance"]["figure"]["data"]
    assert sorted(c["name"] for c in curves) == [
        "dual_cd",
        "dual_cd[sampling=importance]",
        "primal_cd",
        "spdc[batch_size=8,sampling=weighted]",
    ]
    fastest = next(c for c in curves if c["name"] == "dual_cd[sampling=importance]")
    assert values(fastest["y"])[0] == 1.0  # fastest on both problems: ρ(1) = 1
    gap = update(client, sweep=[one, two], criterion="gap_rel")
    assert gap["profiles-status"]["children"].startswith(f"sweeps #{one}, #{two}: 3 problems")
    notes = json.dumps(gap["profiles-notes"]["children"])
    assert "2 (problem, setting) pairs were not run" in notes  # primal_cd and spdc on "second"
    csv = call(
        client,
        [("profiles-download", "data")],
        [("profiles-csv", "n_clicks", 1)],
        [
            ("profiles-sweep", "value", [one, two]),
            ("profiles-dataset", "value", None),
            ("profiles-loss", "value", None),
            ("profiles-eps", "value", "1e-6"),
            ("profiles-criterion", "value", "gap_rel"),
            ("profiles-measure", "value", "time"),
        ],
    )["profiles-download"]["data"]
    assert csv["filename"] == "faceoff-profiles-time-1e-6.csv"
    lines = csv["content"].splitlines()
    assert lines[0].startswith("profile,measure,setting") and len(lines) > 8


FILTERS = [
    ("profiles-sweep", "options"),
    ("profiles-dataset", "options"),
    ("profiles-loss", "options"),
    ("profiles-sweep", "value"),
    ("profiles-dataset", "value"),
    ("profiles-loss", "value"),
    ("profiles-unknown", "children"),
]


def test_the_page_shows_the_newest_sweep_unless_told_otherwise(client, sqlite_url):
    """The issue's case: a bare /profiles read every sweep at once (the demo's agd then
    "fastest on 29%"); it now shows the newest sweep and says so, and ``sweep=all`` (the
    link of a cleared choice) every sweep."""
    old, _ = factories.add_sweep(sqlite_url)
    new, _ = factories.add_sweep(sqlite_url, dataset_name="second")
    client.use(sqlite_url)
    chosen = {"dataset": [], "loss": None}
    newest = call(client, FILTERS, [("profiles-chosen", "data", {**chosen, "sweep": "newest"})])
    assert newest["profiles-sweep"]["value"] == [new]
    every = call(client, FILTERS, [("profiles-chosen", "data", {**chosen, "sweep": "all"})])
    assert every["profiles-sweep"]["value"] == []
    shown = update(client, sweep=[new])
    assert shown["profiles-status"]["children"].startswith(f"sweep #{new} (the newest;")
    assert update(client, sweep=[old])["profiles-status"]["children"].startswith(f"sweep #{old}:")
    cleared = update(client, sweep=[])
    assert cleared["profiles-status"]["children"].startswith("every sweep: 2 problems")
    assert cleared["profiles-share"]["href"].startswith("/profiles?sweep=all&")
    (page,) = [m for m in list(sys.modules.values()) if hasattr(m, "DATA_UNIT_NOTE")]

    def chosen_sweep(**query):
        (store,) = [
            c for c in page.layout(**query).children if getattr(c, "id", None) == "profiles-chosen"
        ]
        return store.data["sweep"]

    assert chosen_sweep() == "newest"  # nothing in the address
    assert chosen_sweep(sweep="all") == "all" and chosen_sweep(sweep="3,1") == [1, 3]


def test_hostile_values_fall_back_and_say_so(client, sqlite_url):
    sweep, _ = factories.add_sweep(sqlite_url)
    client.use(sqlite_url)
    out = update(client, sweep=["abc", 2**31, sweep], eps="1e400")
    rejected = out["profiles-rejected"]["children"]
    assert "'abc' is not a positive integer" in rejected and "out of range" in rejected
    assert "ε '1e400' is not accepted" in rejected
    assert out["profiles-share"]["href"].startswith(f"/profiles?sweep={sweep}&eps=1e-6")
    empty = update(client, sweep=[99], eps="nan")
    assert "no finished jobs" in json.dumps(empty["profiles-performance"]["figure"])
    filled = call(
        client,
        FILTERS,
        [("profiles-chosen", "data", {"sweep": [sweep, 99], "dataset": [], "loss": "hinge"})],
    )
    assert filled["profiles-sweep"]["value"] == [sweep]
    assert (
        filled["profiles-unknown"]["children"] == "no sweep 99; no jobs with loss 'hinge' (ignored)"
    )


def test_every_finished_job_counts_and_unfinished_jobs_are_stated(client, sqlite_url):
    """No cap on the jobs read (their times to ε come from the trace summaries); the jobs
    left out are named; an ε off the summaries' grid says its times came from traces."""
    factories.add_sweep(sqlite_url, seeds=(0, 1))
    factories.add_running_job(sqlite_url)
    client.use(sqlite_url)
    notes = json.dumps(update(client)["profiles-notes"]["children"])
    assert "from 8 finished jobs" in notes and "only the newest" not in notes
    assert "1 queued, running or cancelled jobs are not counted" in notes
    assert "not one of 1e-1" not in notes
    off_grid = json.dumps(update(client, eps="3e-6")["profiles-notes"]["children"])
    assert "3e-06 is not one of 1e-1, 1e-2" in off_grid
