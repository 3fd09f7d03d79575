"""Warnings on views whose times are not comparable (core.machine.fairness_warnings):
curves measured on several CPU models, or by jobs that shared their host with more running
jobs than it has physical cores.

A page puts ``html.Div(id="PAGE-fairness")`` in its layout and calls :func:`watch` once
with the inputs that choose its jobs; the warning follows the selection and the page's
refresh interval.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from dash import Input, Output, callback, html

from faceoff.core.jobs import JobFilter
from faceoff.core.machine import fairness_warnings
from faceoff.dashboard import rows
from faceoff.dashboard.components import InputError, database_url, optional_id, viewer_team


def warning(found: Sequence[Mapping[str, Any]]) -> html.Div | None:
    """A visible warning naming what makes these jobs' times not comparable; None if
    nothing does."""
    sentences = fairness_warnings(found)
    if not sentences:
        return None
    return html.Div(
        [
            html.Strong("Times not comparable: "),
            html.Ul([html.Li(sentence) for sentence in sentences]),
        ],
        className="fairness-warning",
        role="alert",
    )


def sweep_jobs(sweep_id: Any) -> JobFilter | None:
    """The jobs of sweep ``sweep_id`` (None: none; InputError: not an id)."""
    checked = optional_id(sweep_id, "sweep")
    return None if checked is None else JobFilter(sweep_id=checked)


def watch(page: str, inputs: Sequence[Input], choose: Callable[..., JobFilter | None]) -> None:
    """Fill ``PAGE-fairness`` with :func:`warning` of the jobs that ``choose(*input
    values)`` names (None, or an InputError: no warning)."""

    @callback(Output(f"{page}-fairness", "children"), *inputs)
    def _warn(*values: Any) -> html.Div | None:
        try:
            where = choose(*values)
        except InputError:
            return None
        if where is None:
            return None
        found, _ = rows.list_jobs(database_url(), where, team_id=viewer_team())
        return warning(found)
