"""What the pages download: CSV of the plotted numbers, and file names that say what they hold."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from faceoff.core.analysis import Problems, Profile

if TYPE_CHECKING:  # compare names its downloads here: no import back at run time
    from faceoff.dashboard.figures.compare import Series


def export_name(prefix: str, objectives: Sequence[str]) -> str:
    """A file name (without extension) naming the objective shown (full labels), or what
    several share and how many: ``faceoff-compare-a9a-logistic-l2-0.0001``,
    ``faceoff-compare-a9a-logistic-3-objectives``."""
    if not objectives:
        return prefix
    parts = [o.split(" · ") for o in objectives]
    shared = []  # the leading parts all share
    for i, part in enumerate(parts[0]):
        if not all(len(q) > i and q[i] == part for q in parts):
            break
        shared.append(part)
    if len(objectives) > 1:
        shared.append(f"{len(objectives)} objectives")
    slug = re.sub(r"[^A-Za-z0-9._]+", "-", " ".join(shared)).strip("-")
    return f"{prefix}-{slug[:150]}" if slug else prefix


def records_csv(records: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """Records as CSV with the given columns (lists joined by spaces)."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(columns)
    for record in records:
        writer.writerow(
            [" ".join(map(str, v)) if isinstance(v, list) else v for v in map(record.get, columns)]
        )
    return out.getvalue()


def series_csv(series: Iterable[Series], x: str, y: str) -> str:
    """The plotted curves as CSV, one line per point, each naming its objective."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(
        [
            "curve",
            "solver",
            "setting",
            "objective",
            "trace_mode",
            "jobs",
            x,
            y,
            "band_low",
            "band_high",
        ]
    )
    for s in series:
        jobs = " ".join(map(str, s.job_ids))
        lo = s.lo if s.lo is not None else [None] * len(s.x)
        hi = s.hi if s.hi is not None else [None] * len(s.x)
        for xv, yv, lv, hv in zip(s.x, s.y, lo, hi, strict=True):
            writer.writerow(
                [
                    s.name,
                    s.solver,
                    s.setting,
                    s.objective,
                    s.trace_mode or "",
                    jobs,
                    repr(float(xv)),
                    repr(float(yv)),
                    "" if lv is None else repr(float(lv)),
                    "" if hv is None else repr(float(hv)),
                ]
            )
    return out.getvalue()


PROFILE_COLUMNS = ("profile", "measure", "setting", "solver", "x", "fraction", "within", "problems")


def profiles_csv(found: Problems, curves: Mapping[str, tuple[str, Profile]]) -> str:
    """The profile curves as CSV: per profile (name → (measure, profile)) and setting, one
    line per breakpoint: x (τ or κ), the fraction of problems within it and their count."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(PROFILE_COLUMNS)
    for name, (measure, profile) in curves.items():
        for j, setting in enumerate(found.settings):
            for k, x in enumerate(profile.x):
                writer.writerow(
                    [
                        name,
                        measure,
                        setting,
                        found.solvers[setting],
                        repr(float(x)),
                        repr(float(profile.y[k, j])),
                        int(profile.counts[k, j]),
                        profile.n_problems,
                    ]
                )
    return out.getvalue()
