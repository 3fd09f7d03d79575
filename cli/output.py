"""What ``faceoff`` prints: JSON lines, or rich tables with a progress bar on stderr."""

from __future__ import annotations

import json
import math
import os
import sys
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

import numpy as np
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from faceoff.core.analysis import relative_gap
from faceoff.core.jsonsafe import json_safe
from faceoff.solvers.catalogue import broken_plugins, catalogue, distribution_of
from faceoff.solvers.trace import (
    CONVERGED,
    FINISHED,
    MAX_EPOCHS,
    MAX_SECONDS,
    StopRules,
    TracePoint,
)
from faceoff.solvers.vocabulary import multiclass_label

if TYPE_CHECKING:
    from faceoff.cli.solve import Request
    from faceoff.solvers.run import Result


def progress_fraction(point: TracePoint, stop: StopRules, first_gap: float) -> float:
    """How far the run is toward its first stop rule, in [0, 1]: the largest of
    epoch/max_epochs, time/max_seconds and log(first_gap/gap)/log(first_gap/tol), gaps
    relative as the ``tol`` stop rule compares them (:func:`relative_gap`)."""
    parts = [point.epoch / stop.max_epochs, point.time_s / stop.max_seconds]
    gap = relative_gap(point.gap, point.primal)
    if stop.tol > 0 and math.isfinite(gap) and math.isfinite(first_gap) and first_gap > stop.tol:
        if gap <= stop.tol:
            parts.append(1.0)
        elif gap < first_gap:
            parts.append(math.log(first_gap / gap) / math.log(first_gap / stop.tol))
    return min(max(parts), 1.0)


# stop reasons that mean the run went as far as it was asked to: its bar ends full
COMPLETE = (CONVERGED, MAX_EPOCHS, MAX_SECONDS, FINISHED)


def final_fraction(reason: str | None, last: float) -> float:
    """Where the bar ends: full when a stop rule was met or the method ended by itself
    (whichever rule fired, not only the one the bar was tracking), ``last`` when the run
    was cancelled or diverged."""
    return 1.0 if reason in COMPLETE else last


def bar_column() -> BarColumn:
    """A progress bar whose colours stay apart in a 16-colour terminal (TERM=xterm): rich's
    default green of a finished bar and grey of its background both become bright black
    there, so a finished bar looked empty and a converging one seemed to stop short."""
    return BarColumn(style="bright_black", complete_style="magenta", finished_style="green")


def log_spaced(points: list[TracePoint], count: int = 20) -> list[TracePoint]:
    """About ``count`` points, evenly spaced in log(epoch), always the first and the last."""
    if len(points) <= count:
        return list(points)
    epochs = np.array([p.epoch for p in points])
    positive = epochs[epochs > 0]
    chosen = {0, len(points) - 1}
    if len(positive):
        grid = np.geomspace(positive[0], epochs[-1], count - 1)
        chosen.update(int(i) for i in np.searchsorted(epochs, grid * (1 - 1e-12)))
    return [points[i] for i in sorted(chosen) if i < len(points)]


def objective_text(info: dict[str, Any]) -> str:
    """The loss and, for a K-class problem, its form: ``logistic``, ``logistic, K = 20,
    one-vs-rest``."""
    form = multiclass_label(info.get("multiclass"), info.get("n_classes"))
    return f"{info['loss']}, {form}" if form else info["loss"]


def coefficients(info: dict[str, Any]) -> str:
    """How many coefficients x has: d, or d × K = … for a K-class problem."""
    d, k = info["n_features"], info.get("n_classes")
    return f"{d} × {k} = {d * k}" if k else str(d)


class JsonlReporter:
    """One JSON object per trace point on stdout, flushed, then ``{"summary": {...}}``.

    If the reader goes away (``faceoff solve ... | head``), ``closed`` becomes True and the
    run is asked to stop."""

    def __init__(self, request: Request, stop: StopRules) -> None:
        self.info = request.info
        self.closed = False

    def __enter__(self) -> JsonlReporter:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def _write(self, obj: dict) -> None:
        if self.closed:
            return
        try:
            sys.stdout.write(json.dumps(json_safe(obj), allow_nan=False) + "\n")
            sys.stdout.flush()
        except BrokenPipeError:
            # point stdout at /dev/null so that the interpreter's final flush stays quiet
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            self.closed = True

    def point(self, point: TracePoint) -> None:
        self._write(point.to_dict())

    def finish(self, result: Result) -> None:
        self._write({"summary": {**result.summary(), "problem": self.info}})


class TableReporter:
    """A progress bar on stderr while running; a table of log-spaced points and the
    summary on stdout at the end."""

    def __init__(self, request: Request, stop: StopRules) -> None:
        self.request = request
        self.stop = stop
        self.closed = False
        self.out = Console()
        self.progress = Progress(
            TextColumn("{task.description}"),
            bar_column(),
            TaskProgressColumn(),
            TextColumn("{task.fields[status]}"),
            TimeElapsedColumn(),
            console=Console(stderr=True),
        )
        self.task = self.progress.add_task("warm-up", total=1.0, status="compiling kernels")
        self.first_gap = math.nan
        self.fraction = 0.0

    def __enter__(self) -> TableReporter:
        info = self.request.info
        self.out.print(
            f"[bold]{self.request.solver}[/] {_params_text(self.request.params)} on "
            f"{info['data']}: n = {info['n_samples']}, d = {info['n_features']}, "
            f"nnz = {info['nnz']}; {objective_text(info)}, l2 = {info['l2']:g}, "
            f"l1 = {info['l1']:g}"
            + ("" if info["normalize"] == "none" else f", normalize {info['normalize']}"),
            highlight=False,
        )
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def point(self, point: TracePoint) -> None:
        if point.seq == 0:
            self.first_gap = relative_gap(point.gap, point.primal)
        self.fraction = progress_fraction(point, self.stop, self.first_gap)
        self.progress.update(
            self.task,
            description="solving",
            completed=self.fraction,
            status=_point_text(point),
        )

    def finish(self, result: Result) -> None:
        """Leave the bar in its final state (full, unless cancelled or diverged, with the
        stop reason and the last point), then print the table and the summary."""
        reason = result.stop_reason
        last = f"  {_point_text(result.trace[-1])}" if result.trace else ""
        self.progress.update(
            self.task,
            description="done" if reason in COMPLETE else "stopped",
            completed=final_fraction(reason, self.fraction),
            status=f"{reason}{last}",
        )
        self.progress.refresh()
        self.progress.stop()
        table = Table(title="trace (log-spaced points)", title_justify="left")
        for name in ("epoch", "time (s)", "primal P(x)", "dual D(y)", "gap", "nnz(x)"):
            table.add_column(name, justify="right")
        for p in log_spaced(result.trace):
            table.add_row(
                f"{p.epoch:.4g}",
                f"{p.time_s:.4f}",
                f"{p.primal + 0.0:.10g}",
                f"{p.dual + 0.0:.10g}",
                f"{p.gap:.3e}",
                str(p.nnz_x),
            )
        self.out.print(table)
        s = result.summary()
        grid = Table.grid(padding=(0, 2))
        rows = [
            ("stop reason", s["stop_reason"]),
            ("epochs", f"{s['epochs']:.4g} ({s['iterations']} iterations)"),
            ("solver time", f"{s['time_s']:.4f} s"),
            ("primal P(x)", f"{s['primal']:.12g}"),
            ("dual D(y)", f"{s['dual']:.12g}"),
            ("gap", f"{s['gap']:.3e} (tol {self.stop.tol:g} x max(1, |P|))"),
            ("nnz(x)", f"{s['nnz_x']} of {coefficients(self.request.info)}"),
            ("trace", TRACE_MODES[s["trace_mode"]]),
            (
                "wall time",
                f"{s['wall_s']:.4f} s (the whole run, evaluation and every refit included)",
            ),
        ]
        for name, value in rows:
            grid.add_row(f"[bold]{name}[/]", value)
        self.out.print(grid, highlight=False)


TRACE_MODES = {
    "native": "native (solver time between chunks, evaluation excluded)",
    "callback": "callback (the library called us back; our time excluded)",
    "refit": "refit (one fit from scratch per budget; a point's time is its own fit's)",
}


def _point_text(point: TracePoint) -> str:
    return f"epoch {point.epoch:.3g}  gap {point.gap:.2e}"


def _params_text(params: Any) -> str:
    """``name=value ...`` of a solver's typed parameters."""
    return " ".join(f"{k}={v}" for k, v in asdict(params).items())


def print_catalogue(fmt: str, solvers: list[dict] | None = None, where: str = "") -> None:
    """The solver catalogue as a table or as JSON (a list of solver objects, with the
    distribution and version each comes from): this installation's, or ``solvers`` (GET
    /solvers of the server at ``where``), whose live workers may be unable to run some
    (``unavailable_on``: said on stderr, one line per worker, with the reason)."""
    errors = Console(stderr=True)
    if solvers is None:
        solvers = []
        for spec in catalogue().values():
            distribution, version = distribution_of(spec.name)
            solvers.append({**spec.to_dict(), "distribution": distribution, "version": version})
        for broken in broken_plugins():
            errors.print(
                f"[bold red]plug-in {broken.name!r}[/] of {broken.distribution} is left out: "
                f"{broken.error}",
                highlight=False,
            )
    for s in solvers:
        for worker in s.get("unavailable_on") or []:
            errors.print(
                f"[bold red]solver {s['name']!r}[/] is unavailable on worker {worker['host']}: "
                f"{worker['reason']}",
                highlight=False,
            )
    if fmt == "json":
        print(json.dumps(solvers, indent=2))
        return
    table = Table(
        title=f"faceoff solvers{where} (--format json for references)",
        title_justify="left",
        show_lines=True,
    )
    # the names (a peer's are long, e.g. sklearn.newton_cholesky) are never cut
    table.add_column("solver", no_wrap=True, min_width=max(len(s["name"]) for s in solvers))
    for name in ("method", "losses / penalties", "parameters (default)"):
        table.add_column(name)
    for s in solvers:
        name = f"[bold]{s['name']}[/]\n{s['side']}, {s['trace_mode']}"
        if s.get("requires") is not None:
            name += "\n" + requirement_text(s)
        supports = f"{', '.join(s['losses'])}\n{', '.join(s['penalties'])}"
        params = "\n".join(_param_text(p) for p in s["params"]) or "-"
        table.add_row(name, s["title"], supports, params)
    Console().print(table)


def requirement_text(solver: dict) -> str:
    """What a peer (a solver dict with ``requires``) needs, said as installed or missing:
    ``peer of scikit-learn (installed)`` or ``not installed: pip install …``."""
    if solver.get("available", True):
        return f"peer of {solver['requires']} (installed)"
    reason = solver.get("unavailable_reason") or f"needs {solver['requires']}"
    return f"[red]not installed[/]: {escape(reason)}"


def _param_text(p: dict) -> str:
    if p["kind"] == "choice":
        return f"{p['name']}={p['default']}\n  {' | '.join(p['choices'])}"
    default = "auto" if p["default"] is None else p["default"]
    low, high = (format(p[k], "g") if p.get(k) is not None else "∞" for k in ("low", "high"))
    return f"{p['name']}={default}\n  {p['kind']} in [{low}, {high}]"
