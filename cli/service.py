"""``faceoff submit | sweep | status | trace | cancel``: the Faceoff API from the command line.

The server is ``--url``, else ``FACEOFF_URL``, else http://127.0.0.1:8000. Exit status: 0 on
success, 2 when the server (or the command line) refuses the input, 1 when the server
cannot be reached or fails.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from faceoff.cli import InputError
from faceoff.cli.up import print_fairness
from faceoff.solvers.vocabulary import LOSS_NAMES, NORMALIZATION_NAMES, SMOOTHED_LOSS_NAMES

DEFAULT_URL = "http://127.0.0.1:8000"
TERMINAL = ("succeeded", "failed", "cancelled")


def add_service_commands(commands: argparse._SubParsersAction) -> None:
    """Register the client subcommands on the ``faceoff`` parser."""
    url = argparse.ArgumentParser(add_help=False)
    url.add_argument(
        "--url",
        default=os.environ.get("FACEOFF_URL", DEFAULT_URL),
        help=f"the Faceoff API (default: $FACEOFF_URL or {DEFAULT_URL})",
    )

    submit = commands.add_parser(
        "submit",
        parents=[url],
        help="submit a job to the Faceoff service",
        description="Submit one solver run; an identical queued, running or succeeded job is "
        "returned instead unless --force.",
        epilog="Example: faceoff submit --dataset a9a --loss logistic --l2 1e-4 "
        "--solver spdc --param batch_size=8",
    )
    submit.add_argument("--dataset", required=True, help="registered or public dataset name")
    submit.add_argument("--loss", required=True, choices=LOSS_NAMES)
    submit.add_argument("--l2", required=True, type=float, help="l2 weight, > 0")
    submit.add_argument("--l1", type=float, help="l1 weight, >= 0 (default 0)")
    submit.add_argument(
        "--gamma", type=float, help=f"smoothing of {', '.join(SMOOTHED_LOSS_NAMES)} (default 1)"
    )
    submit.add_argument("--normalize", choices=NORMALIZATION_NAMES)
    submit.add_argument("--positive", help="comma-separated labels that become +1")
    submit.add_argument("--solver", required=True, help="see faceoff solvers")
    submit.add_argument(
        "--param", action="append", default=[], metavar="NAME=VALUE", help="repeatable"
    )
    submit.add_argument("--seed", type=int)
    submit.add_argument("--max-epochs", type=float)
    submit.add_argument("--max-seconds", type=float)
    submit.add_argument("--tol", type=float)
    submit.add_argument("--force", action="store_true", help="run even if an identical job exists")
    submit.add_argument("--host", help="run on this worker host only (GET /health lists them)")
    submit.set_defaults(handler=_guarded(_submit))

    sweep = commands.add_parser(
        "sweep",
        parents=[url],
        help="submit a sweep described by a YAML file",
        description="Submit the cartesian product datasets × losses × l2 × l1 × solver "
        "settings × seeds written as a YAML SweepSpec.",
    )
    sweep.add_argument("file", metavar="FILE.yaml")
    sweep.add_argument("--force", action="store_true", help="create new jobs even if identical")
    sweep.set_defaults(handler=_guarded(_sweep))

    status = commands.add_parser(
        "status",
        parents=[url],
        help="show a job, a sweep, or the latest jobs",
        description="One job (JOB_ID), one sweep (--sweep ID) or the 20 latest jobs.",
    )
    status.add_argument("job_id", nargs="?", type=int, metavar="JOB_ID")
    status.add_argument("--sweep", type=int, metavar="ID")
    status.add_argument("--format", choices=("table", "json"), default="table")
    status.set_defaults(handler=_guarded(_status))

    trace = commands.add_parser(
        "trace",
        parents=[url],
        help="show a job's convergence trace, or follow it live",
        description="Print the trace (downsampled), or with --follow show a live progress "
        "bar with the epoch, the gap and the status until the job finishes.",
    )
    trace.add_argument("job_id", type=int, metavar="JOB")
    trace.add_argument("--follow", action="store_true", help="follow the job live")
    trace.add_argument("--max-points", type=int, default=30, help="rows of the table")
    trace.add_argument("--format", choices=("table", "json"), default="table")
    trace.set_defaults(handler=_guarded(_trace))

    cancel = commands.add_parser("cancel", parents=[url], help="cancel a queued or running job")
    cancel.add_argument("job_id", type=int, metavar="JOB")
    cancel.set_defaults(handler=_guarded(_cancel))


def _guarded(handler: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """``handler`` with ClientError as one line: exit 2 when refused, 1 when unreachable."""

    def run(args: argparse.Namespace) -> int:
        from faceoff.client import ClientError, ServerUnreachable

        try:
            return handler(args)
        except ClientError as err:
            print(f"faceoff {args.command}: error: {err}", file=sys.stderr)
            refused = not isinstance(err, ServerUnreachable) and 400 <= (err.status or 0) < 500
            return 2 if refused else 1

    return run


def _client(args: argparse.Namespace):
    from faceoff.client import Client

    return Client(args.url, token=os.environ.get("FACEOFF_TOKEN"))


def parse_params(pairs: list[str]) -> dict[str, Any]:
    """``["batch_size=8", "sampling=uniform"]`` → ``{"batch_size": 8, "sampling": "uniform"}``
    (values are JSON when they parse as JSON, strings otherwise)."""
    params = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep or not name:
            raise InputError(f"--param expects NAME=VALUE, got {pair!r}")
        try:
            params[name] = json.loads(text)
        except ValueError:
            params[name] = text
    return params


def job_spec(args: argparse.Namespace) -> dict[str, Any]:
    """The job spec of ``faceoff submit``; options not given keep the server's defaults."""
    spec: dict[str, Any] = {
        "dataset": args.dataset,
        "loss": args.loss,
        "l2": args.l2,
        "solver": args.solver,
        "params": parse_params(args.param),
    }
    for key in ("l1", "gamma", "normalize", "seed", "host"):
        if getattr(args, key) is not None:
            spec[key] = getattr(args, key)
    if args.positive is not None:
        try:
            spec["positive"] = [float(v) for v in args.positive.split(",")]
        except ValueError:
            raise InputError(
                f"--positive expects labels such as 1,2,3, got {args.positive!r}"
            ) from None
    stop = {k: getattr(args, k) for k in ("max_epochs", "max_seconds", "tol")}
    if any(v is not None for v in stop.values()):
        spec["stop"] = {k: v for k, v in stop.items() if v is not None}
    return spec


def _submit(args: argparse.Namespace) -> int:
    with _client(args) as client:
        job = client.submit_job(job_spec(args), force=args.force)
    print(f"job {job['id']}: {job['status']} ({job['solver']} on {job['spec']['dataset']})")
    return 0


def _sweep(args: argparse.Namespace) -> int:
    import yaml

    path = Path(args.file)
    try:
        spec = yaml.safe_load(path.read_text())
    except OSError as err:
        raise InputError(f"cannot read {path}: {err.strerror}") from None
    except yaml.YAMLError as err:
        raise InputError(f"{path} is not valid YAML: {' '.join(str(err).split())}") from None
    if not isinstance(spec, dict):
        raise InputError(f"{path} must hold a mapping of SweepSpec fields (datasets, losses, ...)")
    with _client(args) as client:
        sweep = client.submit_sweep(spec, force=args.force)
    print(f"sweep {sweep['id']}: {sweep['n_jobs']} jobs, {_progress_text(sweep['progress'])}")
    return 0


def _progress_text(progress: dict[str, int]) -> str:
    return ", ".join(f"{count} {status}" for status, count in progress.items() if count) or "none"


def _number(value: float | None, spec: str = ".3g") -> str:
    return "-" if value is None or not math.isfinite(value) else format(value, spec)


def _cost_text(job: dict[str, Any], short: bool = False) -> str:
    """How a job's trace is made and what its run cost: ``refit trace, wall 0.812 s``
    (short: ``refit, 0.812``); empty before a worker has started it."""
    parts = []
    if job.get("trace_mode"):
        parts.append(job["trace_mode"] if short else f"{job['trace_mode']} trace")
    if job.get("wall_s") is not None:
        wall = _number(job["wall_s"], ".3g")
        parts.append(wall if short else f"wall {wall} s")
    return ", ".join(parts)


def _jobs_table(jobs: list[dict[str, Any]], title: str) -> Table:
    """The jobs, one a row; a narrow terminal folds values but never cuts them, and never
    a solver's name."""
    table = Table(title=title)
    for column in ("id", "status", "solver", "dataset", "loss", "l2", "epoch", "gap", "stop"):
        if column == "solver":
            longest = max((len(job["solver"]) for job in jobs), default=6)
            table.add_column(column, no_wrap=True, min_width=longest)
        else:
            table.add_column(column, overflow="fold")
    table.add_column("trace, wall s", overflow="fold")
    for job in jobs:
        table.add_row(
            str(job["id"]),
            job["status"],
            job["solver"],
            job["spec"]["dataset"],
            job["loss"],
            _number(job["spec"]["l2"]),
            _number(job["epoch"]),
            _number(job["gap"]),
            job["stop_reason"] or "",
            _cost_text(job, short=True),
        )
    return table


def _status(args: argparse.Namespace) -> int:
    console = Console()
    with _client(args) as client:
        if args.job_id is not None:
            result: Any = client.job(args.job_id)
            jobs, title = [result], f"job {args.job_id}"
        elif args.sweep is not None:
            result = client.sweep(args.sweep)
            jobs = client.jobs(sweep_id=args.sweep, limit=1000)["data"]
            title = f"sweep {args.sweep}: {result['n_jobs']} jobs, "
            title += _progress_text(result["progress"])
        else:
            result = client.jobs(limit=20)
            jobs, title = result["data"], f"latest jobs ({result['count']} in all)"
    if args.format == "json":
        print(json.dumps(result))
        return 0
    console.print(_jobs_table(jobs, title))
    if args.job_id is not None and result["error"]:
        console.print(f"error: {result['error']}")
    print_fairness(console, jobs, one=args.job_id is not None)
    return 0


def _trace(args: argparse.Namespace) -> int:
    with _client(args) as client:
        if args.follow:
            return _follow(client, args.job_id)
        trace = client.trace(args.job_id, max_points=max(args.max_points, 2))
    if args.format == "json":
        print(json.dumps(trace))
        return 0
    title = f"job {args.job_id}: {trace['status']}, {trace['n_points']} points"
    cost = _cost_text(trace)
    if trace.get("trace_mode") == "refit":
        cost += " (time_s: each point's own fit)"
    table = Table(title=f"{title}; {cost}" if cost else title)
    for column in ("seq", "epoch", "time_s", "primal", "dual", "gap", "nnz_x"):
        table.add_column(column, justify="right")
    for point in trace["data"]:
        table.add_row(
            str(point["seq"]),
            _number(point["epoch"], ".4g"),
            _number(point["time_s"], ".4g"),
            _number(point["primal"], ".10g"),
            _number(point["dual"], ".10g"),
            _number(point["gap"], ".3e"),
            str(point["nnz_x"]),
        )
    Console().print(table)
    return 0


def _follow(client, job_id: int) -> int:
    """A live progress bar (fraction of max_epochs) with the epoch, gap and status."""
    job = client.job(job_id)
    max_epochs = job["spec"]["stop"]["max_epochs"]
    columns = (
        TextColumn(f"job {job_id}"),
        BarColumn(),
        TextColumn("epoch {task.fields[epoch]}  gap {task.fields[gap]}  {task.fields[status]}"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=Console(stderr=True)) as progress:
        task = progress.add_task("", total=max_epochs, epoch="-", gap="-", status=job["status"])
        for kind, data in client.follow(job_id):
            if kind == "point":
                progress.update(
                    task,
                    completed=min(data["epoch"] or 0.0, max_epochs),
                    epoch=_number(data["epoch"], ".4g"),
                    gap=_number(data["gap"], ".3e"),
                )
            elif kind == "status":
                job = data
                progress.update(task, status=job["status"])
                if job["status"] == "succeeded":
                    progress.update(task, completed=max_epochs)
    cost = _cost_text(job)
    print(
        f"job {job_id}: {job['status']}"
        + (f" ({job['stop_reason']})" if job["stop_reason"] else "")
        + f", epoch {_number(job['epoch'])}, gap {_number(job['gap'], '.3e')}"
        + (f"; {cost}" if cost else "")
        + (f"; error: {job['error']}" if job["error"] else "")
    )
    return 0 if job["status"] in TERMINAL else 1


def _cancel(args: argparse.Namespace) -> int:
    with _client(args) as client:
        job = client.cancel(args.job_id)
    state = "cancelled" if job["status"] == "cancelled" else "will stop at its next trace point"
    print(f"job {args.job_id}: {state}")
    return 0
