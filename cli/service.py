"""``faceoff submit | sweep | status | trace | coefficients | cancel``: the Faceoff API from
the command line.

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
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from faceoff.cli import InputError, add_grid_arguments
from faceoff.cli.up import print_fairness
from faceoff.solvers.catalogue import catalogue
from faceoff.solvers.vocabulary import (
    LOSS_NAMES,
    MULTICLASS_NAMES,
    NORMALIZATION_NAMES,
    PENALTY_NAMES,
    SMOOTHED_LOSS_NAMES,
    multiclass_label,
)

if TYPE_CHECKING:
    from faceoff.client import Client

DEFAULT_URL = "http://127.0.0.1:8000"
URL_HELP = (
    f"the Faceoff API (default: $FACEOFF_URL or {DEFAULT_URL}); also accepted before the "
    "command: faceoff --url URL status"
)
TERMINAL = ("succeeded", "failed", "cancelled")
MAX_SWEEP_FILE_BYTES = 16 * 1024 * 1024


def add_service_commands(commands: argparse._SubParsersAction) -> None:
    """Register the client subcommands on the ``faceoff`` parser."""
    url = argparse.ArgumentParser(add_help=False)
    url.add_argument("--url", help=URL_HELP)

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
    submit.add_argument(
        "--l2",
        required=True,
        type=float,
        help="l2 weight, >= 0 (0 with --l1 > 0: Lasso, l1-logistic)",
    )
    submit.add_argument("--l1", type=float, help="l1 weight, >= 0 (default 0)")
    submit.add_argument(
        "--gamma", type=float, help=f"smoothing of {', '.join(SMOOTHED_LOSS_NAMES)} (default 1)"
    )
    submit.add_argument("--normalize", choices=NORMALIZATION_NAMES)
    submit.add_argument("--positive", help="comma-separated labels that become +1")
    submit.add_argument(
        "--multiclass",
        choices=MULTICLASS_NAMES,
        help="a K-class problem on the dataset's labels as read: ovr (one-vs-rest) or "
        "multinomial (logistic loss); not with --positive",
    )
    submit.add_argument(
        "--fit-intercept",
        action="store_true",
        default=None,
        help="fit an unpenalized intercept (binary and regression problems)",
    )
    grid = submit.add_argument_group(
        "a regularization path (--l1 left out): λ_max·geomspace(1, RATIO, N) or --lambdas"
    )
    grid.add_argument(
        "--path",
        action="store_true",
        help="solve a warm-started path over l1 (any grid option implies it); its λs: "
        "faceoff trace JOB --by-lambda",
    )
    add_grid_arguments(grid)
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
    submit.add_argument(
        "--wait-for-host",
        action="store_true",
        help="accept a --host no live worker serves: the job waits queued until one starts there",
    )
    submit.set_defaults(handler=_guarded(_submit))

    sweep = commands.add_parser(
        "sweep",
        parents=[url],
        help="submit a sweep described by a YAML file",
        description="Submit the cartesian product datasets × losses × l2 × l1 × solver "
        "settings × seeds (× multiclass forms: multiclass: [ovr, multinomial]) written as a "
        "YAML SweepSpec.",
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
    status.add_argument(
        "--wide",
        action="store_true",
        help="also l1, epoch, trace mode and wall time, at least 160 columns wide",
    )
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
    trace.add_argument(
        "--by-lambda",
        action="store_true",
        help="a path job: one row per λ (l1, time, epochs, certified gap, support size)",
    )
    trace.add_argument("--format", choices=("table", "json"), default="table")
    trace.set_defaults(handler=_guarded(_trace))

    refs = commands.add_parser(
        "references",
        parents=[url],
        help="list the certified optima P* of objectives",
        description="The reference optima P* the service has certified (every succeeded "
        "job offers its final point; POST /references runs a high-precision one), newest "
        "first. P* lies in [P - gap, P].",
    )
    refs.add_argument("--objective-hash", metavar="HASH", help="a job's objective_hash")
    refs.add_argument("--dataset", help="a shared dataset's name, or one of your team's")
    refs.add_argument("--loss", choices=LOSS_NAMES)
    refs.add_argument("--penalty", choices=PENALTY_NAMES)
    refs.add_argument("--l1", type=float)
    refs.add_argument("--l2", type=float)
    refs.add_argument("--limit", type=int, default=50, help="rows (default 50)")
    refs.add_argument("--format", choices=("table", "json"), default="table")
    refs.set_defaults(handler=_guarded(_references))

    coefficients = commands.add_parser(
        "coefficients",
        parents=[url],
        help="download a finished job's final coefficients x",
        description="Write the final iterate x of a finished job (its last trace point's): csv "
        "(feature,coef; the class values as the header of a K-class job) or npy (np.save's "
        "format, float64, shape (d,) or (d, K)), to FILE or standard output.",
        epilog="Example: faceoff coefficients 42 --format npy -o x.npy",
    )
    coefficients.add_argument("job_id", type=int, metavar="JOB_ID")
    coefficients.add_argument("--format", choices=("csv", "npy"), default="csv")
    coefficients.add_argument(
        "-o", "--output", type=Path, metavar="FILE", help="write here (default: standard output)"
    )
    coefficients.set_defaults(handler=_guarded(_coefficients))

    cancel = commands.add_parser("cancel", parents=[url], help="cancel a queued or running job")
    cancel.add_argument("job_id", type=int, metavar="JOB")
    cancel.set_defaults(handler=_guarded(_cancel))


def _guarded(handler: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """``handler`` with ClientError as one line: exit 2 when refused, 1 when unreachable."""

    def run(args: argparse.Namespace) -> int:
        # httpx only for the commands that call a server: CLI start-up
        from faceoff.client import ClientError, ServerUnreachable

        try:
            return handler(args)
        except ClientError as err:
            print(f"faceoff {args.command}: error: {err}", file=sys.stderr)
            refused = not isinstance(err, ServerUnreachable) and 400 <= (err.status or 0) < 500
            return 2 if refused else 1

    return run


def client_of(args: argparse.Namespace) -> Client:
    """The client of ``--url`` (else $FACEOFF_URL, else the default), with $FACEOFF_TOKEN."""
    # as in _guarded
    import httpx

    from faceoff.client import Client

    url = args.url or os.environ.get("FACEOFF_URL") or DEFAULT_URL
    try:
        return Client(url, token=os.environ.get("FACEOFF_TOKEN"))
    except httpx.InvalidURL as err:
        raise InputError(f"--url {url!r} is not a valid URL: {err}") from None
    except UnicodeEncodeError:  # an HTTP header is ASCII
        raise InputError("$FACEOFF_TOKEN is not a token: it holds non-ASCII characters") from None


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
    for key in ("l1", "gamma", "normalize", "seed", "host", "multiclass", "fit_intercept"):
        if getattr(args, key) is not None:
            spec[key] = getattr(args, key)
    if args.positive is not None:
        try:
            spec["positive"] = [float(v) for v in args.positive.split(",")]
        except ValueError:
            raise InputError(
                f"--positive expects labels such as 1,2,3, got {args.positive!r}"
            ) from None
    grid = {k: getattr(args, k) for k in ("n_lambdas", "ratio", "lambdas")}
    if args.path or any(v is not None for v in grid.values()):
        spec["path"] = {k: v for k, v in grid.items() if v is not None}
    stop = {k: getattr(args, k) for k in ("max_epochs", "max_seconds", "tol")}
    if any(v is not None for v in stop.values()):
        spec["stop"] = {k: v for k, v in stop.items() if v is not None}
    if args.wait_for_host:
        spec["wait_for_host"] = True
    return spec


def _submit(args: argparse.Namespace) -> int:
    with client_of(args) as client:
        job, created = client.submit_job_created(job_spec(args), force=args.force)
    what = "submitted job" if created else "existing job"
    print(
        f"{what} {job['id']} ({status_text(job)}): {job['solver']} on {job['spec']['dataset']}"
        + ("" if created else "; an identical job exists, --force runs it again")
    )
    return 0


def status_text(job: dict[str, Any]) -> str:
    """``queued``, or ``queued, waiting for host H`` while the API says why it waits."""
    return job["status"] + (f", {job['waiting']}" if job.get("waiting") else "")


def _sweep(args: argparse.Namespace) -> int:
    # PyYAML only for a sweep file
    import yaml

    path = Path(args.file)
    try:
        if path.stat().st_size > MAX_SWEEP_FILE_BYTES:  # read nothing that large
            raise InputError(
                f"{path} is {path.stat().st_size} bytes; a sweep file is at most "
                f"{MAX_SWEEP_FILE_BYTES} (the largest sweep the API takes is ~0.3 MB of JSON)"
            )
        spec = yaml.safe_load(path.read_text())
    except OSError as err:
        raise InputError(f"cannot read {path}: {err.strerror}") from None
    except UnicodeDecodeError as err:
        raise InputError(f"{path} is not UTF-8 text (byte {err.start + 1})") from None
    except yaml.YAMLError as err:
        raise InputError(f"{path} is not valid YAML: {' '.join(str(err).split())}") from None
    if not isinstance(spec, dict):
        raise InputError(f"{path} must hold a mapping of SweepSpec fields (datasets, losses, ...)")
    with client_of(args) as client:
        sweep = client.submit_sweep(spec, force=args.force)
    print(f"sweep {sweep['id']}: {sweep['n_jobs']} jobs, {_progress_text(sweep['progress'])}")
    if dropped := sweep.get("duplicates_dropped"):
        repeats = ", ".join(f"{count} of {axis}" for axis, count in dropped.items())
        print(f"repeated values dropped: {repeats}")
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


def params_text(solver: str, params: dict[str, Any]) -> str:
    """The parameters that differ from the solver's defaults, ``sampling=permutation
    batch_size=8`` (``-``: all defaults; every one for a solver this catalogue lacks)."""
    spec = catalogue().get(solver)
    changed = params if spec is None else spec.changed_params(params)
    return " ".join(f"{k}={v}" for k, v in changed.items()) or "-"


def fitted_table(
    title: str,
    columns: list[str],
    rows: list[list[str]],
    width: int,
    flexible: tuple[str, ...],
    right: tuple[str, ...] = (),
) -> Table:
    """A borderless table at most ``width`` columns wide in which only the ``flexible``
    columns wrap (the widest first, down to 4 characters) and no value is ever cut: rich
    left alone crops words with an ellipsis ("succe…") and drops whole columns."""
    flexible = tuple(c for c in flexible if c in columns)
    natural = {c: max([len(c), *(len(row[i]) for row in rows)]) for i, c in enumerate(columns)}
    widths = dict(natural)
    budget = width - 2 * (len(columns) - 1) - sum(natural[c] for c in columns if c not in flexible)
    while sum(widths[c] for c in flexible) > budget:
        widest = max(flexible, key=lambda c: widths[c])
        if widths[widest] <= 4:
            break
        widths[widest] -= 1
    table = Table(title=title, box=None, padding=(0, 1), pad_edge=False)
    for column in columns:
        table.add_column(
            column,
            width=widths[column],
            no_wrap=column not in flexible,
            overflow="fold",
            justify="right" if column in right else "left",
        )
    for row in rows:
        table.add_row(*row)
    return table


def _seed_text(spec: dict[str, Any]) -> str:
    """The seed column: the seed, "none" for a setting that uses no seed, and "r k" for the
    k-th timing repeat of such a setting."""
    seed = spec.get("seed")
    text = "none" if seed is None else str(seed)
    return f"{text} r{spec['repeat']}" if spec.get("repeat") else text


def _loss_text(job: dict[str, Any], classes: dict[Any, int]) -> str:
    """The job's loss and, for a K-class problem, its form: ``logistic``, ``logistic
    (K = 20, one-vs-rest)`` (``classes``: K of each dataset id, where known)."""
    k = classes.get(job.get("dataset_id"))
    return _form_text(job["loss"], job["spec"].get("multiclass"), k)


def _form_text(loss: str, multiclass: str | None, n_classes: int | None = None) -> str:
    """``logistic``, ``logistic (K = 20, one-vs-rest)``, ``logistic (multinomial)``."""
    form = multiclass_label(multiclass, n_classes)
    return f"{loss} ({form})" if form else loss


def dataset_classes(client: Client, jobs: list[dict[str, Any]]) -> dict[int, int]:
    """K of the datasets of the K-class jobs among ``jobs``, where the server knows it."""
    wanted = {job["dataset_id"] for job in jobs if job["spec"].get("multiclass")}
    out = {}
    for dataset_id in wanted:
        labels = client.dataset(dataset_id).get("labels") or {}
        if labels.get("kind") == "classes":
            out[dataset_id] = labels["n_classes"]
    return out


def _jobs_table(
    jobs: list[dict[str, Any]],
    title: str,
    width: int,
    wide: bool,
    classes: dict[int, int] | None = None,
) -> Table:
    """The jobs, one a row, with the solver's non-default parameters and the seed (runs
    that differ only there are told apart); only the parameters and the objective (dataset,
    loss and its K-class form, weights) wrap. ``wide``: the objective in separate columns,
    plus the epoch, the trace mode and the wall time."""
    columns = ["id", "status", "solver", "params", "seed"]
    columns += ["dataset", "loss", "l2", "l1", "epoch"] if wide else ["objective"]
    columns += ["gap", "stop"] + (["trace, wall s"] if wide else [])
    rows = []
    for job in jobs:
        spec = job["spec"]
        row = [
            str(job["id"]),
            status_text(job),
            job["solver"],
            params_text(job["solver"], spec.get("params") or {}),
            _seed_text(spec),
        ]
        l2, l1 = _number(spec["l2"], ".3g"), _number(spec.get("l1"), ".3g")
        loss = _loss_text(job, classes or {})
        if wide:
            row += [spec["dataset"], loss, l2, l1, _number(job["epoch"])]
        else:
            weights = f"l2={l2}" + (f" l1={l1}" if spec.get("l1") else "")
            row.append(f"{spec['dataset']} {loss} {weights}")
        row += [_number(job["gap"], ".1e"), job["stop_reason"] or ""]
        if wide:
            row.append(_cost_text(job, short=True))
        rows.append(row)
    right = ("id", "seed", "l2", "l1", "epoch", "gap")
    return fitted_table(title, columns, rows, width, ("params", "objective", "loss"), right)


def _status(args: argparse.Namespace) -> int:
    console = Console()
    with client_of(args) as client:
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
        classes = dataset_classes(client, jobs) if args.format == "table" else {}
    if args.format == "json":
        print(json.dumps(result))
        return 0
    if args.wide:
        console = Console(width=max(console.width, 160))
    console.print(_jobs_table(jobs, title, console.width, args.wide, classes))
    if args.job_id is not None and result["error"]:
        console.print(f"error: {result['error']}")
    print_fairness(console, jobs, one=args.job_id is not None)
    return 0


def _trace(args: argparse.Namespace) -> int:
    with client_of(args) as client:
        if args.follow:
            return _follow(client, args.job_id)
        if args.by_lambda:
            return _lambdas(client.path(args.job_id), args.format)
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


def _lambdas(path: dict[str, Any], fmt: str) -> int:
    """A path job's λs (GET /jobs/{id}/path) as JSON or a table with its totals."""
    if fmt == "json":
        print(json.dumps(path))
        return 0
    steps = path["steps"]
    reached = "every λ at tol" if path["reached"] else "not every λ at tol yet"
    title = (
        f"job {path['job_id']}: {path['status']}, {path['solver']}, {len(steps)} of "
        f"{path['n_lambdas']} λs in {_number(path['seconds'], '.4g')} s ({reached}); "
        f"λ_max = {_number(path['lambda_max'], '.6g')}"
    )
    table = Table(title=title)
    for column in ("λ", "l1", "l1/λ_max", "seconds", "epochs", "gap/max(1,|P|)", "nnz"):
        table.add_column(column, justify="right")
    for step in steps:
        table.add_row(
            str(step["index"]),
            _number(step["l1"], ".4g"),
            _number(step["ratio"], ".3g"),
            _number(step["seconds"], ".4g"),
            _number(step["epochs"], ".4g"),
            _number(step["gap_rel"], ".2e"),
            str(step["nnz"]),
        )
    Console().print(table)
    return 0


def _follow(client: Client, job_id: int) -> int:
    """A live progress bar (fraction of max_epochs) with the epoch, gap and status; it
    ends in the job's final state: full once it succeeded, with its stop reason and last
    point (a job that has already finished is shown so at once)."""
    # cli.output imports Numba (solvers.trace): CLI start-up
    from faceoff.cli.output import bar_column

    job = client.job(job_id)
    max_epochs = job["spec"]["stop"]["max_epochs"]
    columns = (
        TextColumn(f"job {job_id}"),
        bar_column(),
        TaskProgressColumn(),
        TextColumn("epoch {task.fields[epoch]}  gap {task.fields[gap]}  {task.fields[status]}"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=Console(stderr=True)) as progress:
        task = progress.add_task("", total=max_epochs, epoch="-", gap="-", status=job["status"])
        if job["status"] not in TERMINAL:
            for kind, data in client.follow(job_id):
                if kind == "point" and job["status"] not in TERMINAL:
                    progress.update(
                        task,
                        completed=min(data["epoch"] or 0.0, max_epochs),
                        epoch=_number(data["epoch"], ".4g"),
                        gap=_number(data["gap"], ".3e"),
                    )
                elif kind == "status":
                    job = data
                    progress.update(task, status=job["status"])
        epoch = job["epoch"] or 0.0
        done = job["status"] == "succeeded"
        progress.update(
            task,
            completed=max_epochs if done else min(epoch, max_epochs),
            epoch=_number(job["epoch"], ".4g"),
            gap=_number(job["gap"], ".3e"),
            status=job["status"] + (f" ({job['stop_reason']})" if job["stop_reason"] else ""),
        )
    cost = _cost_text(job)
    print(
        f"job {job_id}: {job['status']}"
        + (f" ({job['stop_reason']})" if job["stop_reason"] else "")
        + f", epoch {_number(job['epoch'])}, gap {_number(job['gap'], '.3e')}"
        + (f"; {cost}" if cost else "")
        + (f"; error: {job['error']}" if job["error"] else "")
    )
    return 0 if job["status"] in TERMINAL else 1


def _references(args: argparse.Namespace) -> int:
    filters = {
        "objective_hash": args.objective_hash,
        "dataset": args.dataset,
        "loss": args.loss,
        "penalty": args.penalty,
        "l1": args.l1,
        "l2": args.l2,
    }
    with client_of(args) as client:
        found = client.references(limit=args.limit, **filters)
    if args.format == "json":
        print(json.dumps(found))
        return 0
    shown = f"{len(found['data'])} of {found['count']}"
    rows = []
    for ref in found["data"]:
        objective = ref["objective"]
        weights = f"l2={_number(objective.get('l2'), '.3g')}"
        if objective.get("l1"):
            weights += f" l1={_number(objective['l1'], '.3g')}"
        rows.append(
            [
                ref["objective_hash"][:12],
                objective.get("dataset") or f"data {str(objective.get('data_hash'))[:8]}",
                _form_text(str(objective.get("loss")), objective.get("multiclass")),
                weights,
                _number(ref["primal"], ".10g"),
                _number(ref["gap"], ".1e"),
                "-" if ref["job_id"] is None else str(ref["job_id"]),
            ]
        )
    columns = ["objective", "dataset", "loss", "weights", "P", "gap", "job"]
    title = f"reference optima P* ({shown}); P* in [P - gap, P]"
    console = Console()
    table = fitted_table(
        title, columns, rows, console.width, ("dataset", "weights"), ("P", "gap", "job")
    )
    console.print(table)
    return 0


def _coefficients(args: argparse.Namespace) -> int:
    """The download goes to FILE.part, renamed FILE once whole: a refused or broken one
    leaves no file behind."""
    output: Path | None = args.output
    if output is None:
        if args.format == "npy" and sys.stdout.isatty():
            raise InputError("npy is binary: write it to a file with -o FILE, or pipe it")
        with client_of(args) as client:
            client.download_coefficients(args.job_id, sys.stdout.buffer, args.format)
        sys.stdout.buffer.flush()
        return 0
    partial = output.with_name(output.name + ".part")
    try:
        with client_of(args) as client, partial.open("wb") as out:
            size = client.download_coefficients(args.job_id, out, args.format)
        partial.replace(output)
    except OSError as err:
        partial.unlink(missing_ok=True)
        raise InputError(f"-o {output}: {err.strerror or err}") from None
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    print(f"job {args.job_id}: coefficients ({args.format}, {size} bytes) written to {output}")
    return 0


def _cancel(args: argparse.Namespace) -> int:
    with client_of(args) as client:
        job = client.cancel(args.job_id)
    state = "cancelled" if job["status"] == "cancelled" else "will stop at its next trace point"
    print(f"job {args.job_id}: {state}")
    return 0
