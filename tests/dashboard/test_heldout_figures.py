"""The sweep page's held-out ranking without a browser: settings grouped over their seeds,
ranked only when every run succeeded with metrics, and what settled means in words."""

from __future__ import annotations

from faceoff.core import analysis
from faceoff.dashboard.figures.compare import held_out_note
from faceoff.dashboard.figures.heldout import settle_results, settle_rule


def row(job_id: int, solver: str, seed: int, status: str, held: bool, time: float | None):
    return {
        "id": job_id,
        "solver": solver,
        "params": {},
        "seed": seed,
        "dataset": "d",
        "loss": "logistic",
        "gamma": 1.0,
        "l2": 1e-3,
        "l1": 0.0,
        "normalize": "none",
        "objective_hash": "o",
        "status": status,
        "settle": {"held_out": held, "time": time},
    }


def test_settings_are_ranked_by_their_median_seed_once_all_succeeded():
    rows = [
        row(1, "saga", 0, "succeeded", True, 1.0),
        row(2, "saga", 1, "succeeded", True, 3.0),
        row(3, "agd", 0, "succeeded", True, 1.5),
        row(4, "spdc", 0, "succeeded", True, 0.1),
        row(5, "spdc", 1, "running", True, 0.2),  # its last value is not final
        row(6, "lbfgs", 0, "succeeded", False, None),
    ]
    results = {r["setting"]: r for r in settle_results(rows, "time")}
    assert results["saga"]["value"] == 2.0 and results["saga"]["job_ids"] == [1, 2]
    assert results["spdc"]["reason"] == "running" and results["spdc"]["value"] is None
    assert results["lbfgs"]["reason"] == "no held-out metrics"
    (ranked,) = analysis.ranking(list(results.values()))
    assert ranked["ranks"] == {"agd": 1, "saga": 2}
    assert ranked["unranked"] == {"lbfgs": "no held-out metrics", "spdc": "running"}


def test_settled_is_relative_for_the_loss_and_absolute_for_accuracy():
    assert settle_rule("test_loss", 1e-2) == "within 1% of its final value"
    assert settle_rule("test_loss", 1e-3) == "within 0.1% of its final value"
    assert settle_rule("test_score", 1e-2) == "within 0.01 of its final value"


def test_jobs_without_held_out_metrics_are_named():
    assert held_out_note([]) is None
    note = held_out_note([{"id": k} for k in range(1, 13)])
    assert note.startswith("12 job(s) without held-out metrics not drawn (job 1, 2,")
    assert "10, …)" in note
