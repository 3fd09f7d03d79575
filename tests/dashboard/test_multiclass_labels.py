"""K-class objectives on the dashboard: names, panel titles and CSVs say ``K = 20,
one-vs-rest`` / ``K = 20, multinomial``; the dataset page shows the class counts and says
how the advisor applies to the K classes."""

from __future__ import annotations

import csv
import io
import json

from faceoff.core.db import session_scope
from faceoff.core.models import Dataset, Job
from faceoff.core.specs import JobSpec, canonical_job, objective_hash, spec_hash
from faceoff.dashboard import rows as dashboard_rows
from faceoff.dashboard.figures import compare, export
from tests.dashboard.test_figures import P_STAR, row
from tests.dashboard.test_pages import call


def k_row(job_id: int, form: str | None, objective: str, solver: str = "lbfgs") -> dict:
    return {
        **row(job_id, solver, dataset="news20", objective=objective),
        "multiclass": form,
        "n_classes": 20 if form else None,
    }


def test_panel_titles_csv_and_exports_name_the_k_class_form():
    rows = [
        k_row(1, None, "binary", "dual_cd"),  # news20 with positive: a binary objective
        k_row(2, "ovr", "ovr"),
        k_row(3, "multinomial", "multinomial"),
    ]
    refs = {h: {"primal": P_STAR, "gap": 1e-12} for h in ("binary", "ovr", "multinomial")}
    fig = compare.compare_figure(rows, "epoch", "subopt_rel", True, True, refs)
    # a long title wraps at its " · " separators (<br>): read it as one line
    titles = [a.text.replace("<br>", " · ") for a in fig.layout.annotations][:3]
    assert titles == [  # binary first, then the forms; each names K
        "news20 · logistic · l2=0.0001",
        "news20 · logistic · K = 20, multinomial · l2=0.0001",
        "news20 · logistic · K = 20, one-vs-rest · l2=0.0001",
    ]
    series, _ = compare.compare_series(rows, "epoch", "subopt_rel", True, True, refs)
    records = csv.DictReader(io.StringIO(export.series_csv(series, "epoch", "subopt_rel")))
    assert {r["objective"] for r in records} == set(titles)
    one = compare.compare_figure(rows[1:2], "epoch", "subopt_rel", True, True, refs)
    assert one.layout.title.text.endswith("news20 · logistic · K = 20, one-vs-rest · l2=0.0001")
    assert one.layout.meta["export"] == (
        "faceoff-compare-news20-logistic-K-20-one-vs-rest-l2-0.0001"
    )


PLANTED = {
    "kind": "synthetic",
    "generator": "multiclass",
    "n_samples": 300,
    "n_features": 40,
    "density": 0.3,
    "seed": 0,
    "n_classes": 3,
    "layout": "clusters",
}
LABELS = {"kind": "classes", "n_classes": 3, "counts": {"0": 100, "1": 100, "2": 100}}


def add_k_class_job(url: str, form: str) -> None:
    with session_scope(url) as session:
        dataset = session.query(Dataset).filter_by(name="planted").one_or_none()
        if dataset is None:
            dataset = Dataset(name="planted", source=PLANTED, labels=LABELS, n_samples=300)
            session.add(dataset)
            session.flush()
        spec = canonical_job(
            JobSpec(dataset="planted", loss="logistic", l2=1e-3, solver="lbfgs", multiclass=form)
        )
        session.add(
            Job(
                dataset_id=dataset.id,
                spec=spec.model_dump(mode="json", exclude_none=True),
                spec_hash=spec_hash(spec),
                objective_hash=objective_hash(spec),
                solver="lbfgs",
                loss="logistic",
                status="queued",
            )
        )


def test_job_rows_carry_the_form_and_k(sqlite_url):
    add_k_class_job(sqlite_url, "ovr")
    found, _ = dashboard_rows.list_jobs(sqlite_url, dashboard_rows.JobFilter(), team_id=None)
    assert [(r["multiclass"], r["n_classes"]) for r in found] == [("ovr", 3)]
    (indexed,), _, _ = dashboard_rows.dataset_index(sqlite_url, team_id=None)
    assert indexed["n_classes"] == 3  # the datasets index's "classes K"


def test_dataset_page_shows_the_class_counts_and_the_advisor_per_class(client, sqlite_url):
    add_k_class_job(sqlite_url, "ovr")
    add_k_class_job(sqlite_url, "multinomial")
    client.use(sqlite_url)
    options = call(
        client,
        [("dataset-objective", "options"), ("dataset-objective", "value")],
        [("dataset-id", "data", 1)],
        [("dataset-choice", "data", "0")],
    )
    assert [o["label"] for o in options["dataset-objective"]["options"]] == [
        "logistic · K = 3, multinomial · l2=0.001",
        "logistic · K = 3, one-vs-rest · l2=0.001",
    ]
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
    for index, words in (("1", "apply per class"), ("0", "only a guide")):
        inputs = [
            ("dataset-id", "data", 1),
            ("dataset-objective", "value", index),
            ("dataset-eps", "value", "1e-6"),
        ]
        out = call(client, outputs, inputs)
        stats = json.dumps(out["dataset-stats"]["children"], ensure_ascii=False)
        assert "classes K" in stats and "0 100, 1 100, 2 100" in stats
        advice = json.dumps(out["dataset-advice"]["children"], ensure_ascii=False)
        assert "C_P" in advice and words in advice
