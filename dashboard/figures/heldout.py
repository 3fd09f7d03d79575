"""Held-out metrics on the sweep page: the time each solver setting's test metric takes to
settle within δ of its final value (:func:`faceoff.core.analysis.time_to_settle`), per
objective, ranked by :func:`faceoff.core.analysis.ranking`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from faceoff.core import analysis
from faceoff.dashboard.figures.labels import objective_labels, setting_name

# the held-out measures, as the sweep page offers them
SETTLE_MEASURES = {"test_loss": "test loss", "test_score": "test accuracy / R²"}


def settle_rule(name: str, delta: float) -> str:
    """What settled means for measure ``name``: ``within 1% of its final value``."""
    if analysis.SETTLE_RELATIVE[name]:
        return f"within {delta * 100:g}% of its final value"
    return f"within {delta:g} of its final value"


def settle_results(rows: Sequence[Mapping[str, Any]], x: str) -> list[dict[str, Any]]:
    """Time to settle per solver setting and objective, from job rows with ``settle``
    (dashboard.rows.job_settle_times): :func:`faceoff.core.analysis.settled_value` over the
    setting's runs (its seeds), so a setting is ranked only once every run succeeded with
    held-out metrics. Each result: ``setting``, ``solver``, ``objective`` (label naming
    what differs), ``objective_hash``, ``value`` (the median over runs, None without one),
    ``reason`` (why there is none), ``job_ids``."""
    labels = objective_labels(rows)
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for row in rows:
        groups.setdefault((setting_name(row), row["objective_hash"]), []).append(row)
    results = []
    for (setting, digest), members in sorted(groups.items()):
        runs = [(r["status"], r["settle"]["held_out"], r["settle"][x]) for r in members]
        value, reason = analysis.settled_value(runs)
        results.append(
            {
                "setting": setting,
                "solver": members[0]["solver"],
                "objective": labels[digest] or members[0]["dataset"],
                "objective_hash": digest,
                "value": value,
                "reason": reason,
                "job_ids": [r["id"] for r in members],
            }
        )
    return results
