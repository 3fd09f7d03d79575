"""Labels of sparse objectives: an l2 = 0 objective and its intercept twin are told apart
wherever objectives are named (panel titles, legends, exports)."""

from __future__ import annotations

from faceoff.dashboard.figures.labels import objective_labels, objective_order, weights_label


def row(objective_hash: str, l2: float, l1: float, intercept: bool) -> dict:
    return {
        "objective_hash": objective_hash,
        "dataset": "leu",
        "loss": "squared",
        "gamma": 1.0,
        "multiclass": None,
        "n_classes": None,
        "normalize": "none",
        "l2": l2,
        "l1": l1,
        "fit_intercept": intercept,
    }


def test_the_lasso_and_its_intercept_twin_have_their_own_labels_and_order():
    assert weights_label(0.0, 0.05) == "l2=0, l1=0.05"
    assert weights_label(0.0, 0.05, True) == "l2=0, l1=0.05, intercept"
    rows = [row("b" * 64, 0.0, 0.05, True), row("a" * 64, 0.0, 0.05, False)]
    labels = objective_labels(rows)
    assert labels == {"b" * 64: "l2=0, l1=0.05, intercept", "a" * 64: "l2=0, l1=0.05"}
    full = objective_labels(rows, full=True)
    assert full["b" * 64] == "leu · squared · l2=0, l1=0.05, intercept"
    assert objective_order(rows) == [full["a" * 64], full["b" * 64]]  # without first
