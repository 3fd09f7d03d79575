"""``faceoff path``: one solver along a warm-started regularization path (solvers.path)."""

from __future__ import annotations

import argparse
import json
import sys
import traceback

from faceoff.cli import InputError


def run(args: argparse.Namespace) -> int:
    """``faceoff path``: 0 when the path ends, 1 if the solver fails, 2 for bad input."""
    from faceoff.solvers.numba_cache import configure_numba_cache

    configure_numba_cache()
    if args.l1 != 0:
        raise InputError(
            "--l1 is what the path varies: give the grid with --n-lambdas and --ratio, or --lambdas"
        )
    args.l1 = 1.0  # a placeholder weight for the checks: each λ of the grid replaces it
    from faceoff.cli.solve import build_request
    from faceoff.solvers.catalogue import catalogue, warm_start_error

    error = warm_start_error(args.solver) if args.solver in catalogue() else None
    if error is not None:  # before the data are read
        raise InputError(error)
    request = build_request(args)
    from rich.console import Console
    from rich.progress import Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn
    from rich.table import Table

    from faceoff.cli.output import bar_column
    from faceoff.solvers.path import PathStep, default_grid, solve_path
    from faceoff.solvers.trace import StopRules

    problem = request.problem
    try:
        grid = args.lambdas  # --lambdas, checked by its parser; else the default grid
        weights = grid if grid is not None else default_grid(problem, args.n_lambdas, args.ratio)
    except ValueError as err:
        raise InputError(str(err)) from None
    stop = StopRules(args.max_epochs, args.max_seconds, args.tol)
    table = (args.format or ("table" if sys.stdout.isatty() else "jsonl")) == "table"
    errors = Console(stderr=True)
    bar = Progress(
        TextColumn("λ {task.completed:.0f}/{task.total:.0f}"),
        bar_column(),
        TaskProgressColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[status]}"),
        console=errors,
        disable=not errors.is_terminal,
    )
    task = bar.add_task("path", total=len(weights), status="compiling kernels")

    def done(step: PathStep) -> None:
        bar.update(task, advance=1, status=f"l1 = {step.l1:.3g}: {step.nnz} features")
        if not table:
            print(json.dumps({"kind": "step", **vars(step)}), flush=True)

    try:
        with bar:
            result = solve_path(
                problem,
                request.solver,
                weights,
                request.params,
                stop,
                args.seed,
                on_step=done,
            )
    except Exception as err:
        if getattr(args, "debug", False):
            traceback.print_exc()
        message = " ".join(f"{type(err).__name__}: {err}".split())
        print(f"faceoff path: solver {request.solver!r} failed: {message}", file=sys.stderr)
        return 1
    converged = sum(step.stop_reason == "converged" for step in result.steps)
    summary = {
        "kind": "path",
        "solver": result.solver,
        "lambda_max": result.lambda_max,
        "n_lambdas": len(result.steps),
        "converged": converged,
        "seconds": result.seconds,
    }
    if not table:
        print(json.dumps(summary), flush=True)
        return 0
    out = Table(title=f"{request.solver} on {request.info['data']}: {len(result.steps)} l1 weights")
    for column in ("λ", "λ/λ_max", "nnz(x)", "gap", "epochs", "seconds", "stop"):
        out.add_column(column, justify="left" if column == "stop" else "right")
    for step in result.steps:
        out.add_row(
            f"{step.l1:.4g}",
            f"{step.l1 / result.lambda_max:.3g}",
            str(step.nnz),
            f"{step.gap:.1e}",
            f"{step.epochs:.3g}",
            f"{step.seconds:.4f}",
            step.stop_reason,
        )
    console = Console()
    console.print(out)
    console.print(
        f"λ_max {result.lambda_max:.6g} · {converged} of {len(result.steps)} converged · "
        f"path solver time {result.seconds:.4f} s"
    )
    return 0
