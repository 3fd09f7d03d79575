"""``faceoff``: argument parsing and the exit-status contract.

Exit status: 0 when a run ends (whatever its stop reason), 2 for bad input with one line
on stderr saying what was wrong and what is accepted, 130 when interrupted (Ctrl-C stops
the run at the next trace point and still prints the summary).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from faceoff.cli import InputError, add_grid_arguments, positive_int
from faceoff.cli.plugin import add_plugin_commands
from faceoff.cli.retention import add_prune_command
from faceoff.cli.service import URL_HELP, add_service_commands
from faceoff.cli.tokens import add_token_commands
from faceoff.cli.up import add_arguments as add_up_arguments
from faceoff.cli.up import run as run_up
from faceoff.core.secret_key import make_secret_key
from faceoff.solvers.catalogue import catalogue
from faceoff.solvers.integers import int_text
from faceoff.solvers.vocabulary import (
    BINARY_LOSS_NAMES,
    LOSS_NAMES,
    MULTICLASS_NAMES,
    NORMALIZATION_NAMES,
    PATH_LAMBDAS,
    PATH_RATIO,
    SMOOTHED_LOSS_NAMES,
)

FORMAT_HELP = (
    "jsonl: one JSON object per trace point, streamed as points are recorded, then "
    'one {"summary": {...}} object; table: a progress bar on stderr, then a table of '
    "log-spaced trace points and the summary. Default: table when stdout is a "
    "terminal, jsonl otherwise. NaN and inf are written as null"
)
LABELS_HELP = (
    f"Labels of a classification loss ({', '.join(BINARY_LOSS_NAMES)}) must take two values: "
    "the larger becomes +1, the smaller -1 (0/1, 1/2 and -1/+1 files all work). "
    "A multiclass file keeps its labels: --multiclass ovr|multinomial solves the K-class "
    "problem, --positive makes a binary one. Other losses use the labels as they are "
    "unless --positive is given."
)
MULTICLASS_HELP = (
    "a K-class problem on the labels as read (integers, 2 to FACEOFF_MAX_CLASSES classes; "
    "X has one column a class): ovr (one-vs-rest, the K binary problems summed, any loss) or "
    "multinomial (softmax cross-entropy, logistic loss); not with --positive"
)
GAMMA_HELP = f"smoothing of {', '.join(SMOOTHED_LOSS_NAMES)} (default 1)"
ASK_SERVER_HELP = "a Faceoff API: ask it instead of the local registry"
SOLVERS_SERVER_HELP = "a Faceoff API: its solvers, and what its live workers cannot run and why"


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line (no usage block)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _number(check: Callable[[float], bool], wanted: str) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {wanted}, got {text!r}") from None
        if not check(value):
            raise argparse.ArgumentTypeError(f"expected {wanted}, got {text!r}")
        return value

    return parse


def _seed(text: str) -> int:
    try:
        value = int_text(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return value


def _classes(text: str) -> list[float]:
    try:
        values = [float(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a comma-separated list of label values such as 1,2,3, got {text!r}"
        ) from None
    return values


_positive = _number(lambda v: v > 0 and v < float("inf"), "a number > 0")
_nonnegative = _number(lambda v: 0 <= v < float("inf"), "a number >= 0")
_fraction = _number(lambda v: 0 < v <= 1, "a number in (0, 1]")


def build_parser() -> Parser:
    """The ``faceoff`` command line: one function adds each command group."""
    parser = Parser(
        prog="faceoff",
        description="Benchmark regularized ERM solvers: "
        "minimize 1/n sum_i loss(a_i^T x, b_i) + l1 |x|_1 + l2/2 |x|^2.",
    )
    parser.add_argument("--url", dest="global_url", metavar="URL", help=URL_HELP)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_solve(commands)
    _add_path(commands)
    _add_solvers(commands)
    _add_datasets(commands)
    add_service_commands(commands)  # submit, sweep, status, trace, references, coefficients, cancel
    add_token_commands(commands)
    _add_secret(commands)
    add_prune_command(commands)
    _add_up(commands)
    add_plugin_commands(commands)  # plugin check
    return parser


def _add_solve(commands: argparse._SubParsersAction) -> None:
    solve = commands.add_parser(
        "solve",
        help="run one solver and stream its convergence trace",
        description="Run one solver on one problem; every trace point certifies the iterate "
        "with the duality gap. " + LABELS_HELP,
        epilog="Exit status: 0 when the run ends (whatever its stop_reason), 2 for bad input, "
        "130 after Ctrl-C (the run stops at the next trace point and still reports). "
        "Example: faceoff solve --data a1a.bz2 --loss logistic --l2 1e-4 "
        "--solver dual_cd --param sampling=importance --format table; a K-class one: "
        "faceoff solve --data usps_zip_train --multiclass multinomial --loss logistic "
        "--l2 1e-4 --solver lbfgs",
    )
    _add_data_arguments(solve.add_argument_group("data (one of --data, --synthetic)"))
    _add_problem_arguments(solve.add_argument_group("problem"))
    _add_solver_arguments(solve.add_argument_group("solver"))
    _add_debug(solve)
    solve.set_defaults(handler=_solve)


def _add_debug(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--debug", action="store_true", help="print the traceback of a solver that fails"
    )


def _add_path(commands: argparse._SubParsersAction) -> None:
    path = commands.add_parser(
        "path",
        help="run one solver along a warm-started regularization path",
        description="Solve at each l1 weight of a grid, largest first, each from the previous "
        "solution (the Lasso's and l1-logistic's path with --l2 0); every λ to the same stop "
        "rules, each trace point certified. " + LABELS_HELP,
        epilog="Example: faceoff path --data leu_recon --loss squared --l2 0 --solver agd "
        "--tol 1e-6 (50 weights, λ_max down to λ_max/1000)",
    )
    _add_data_arguments(path.add_argument_group("data (one of --data, --synthetic)"))
    _add_problem_arguments(path.add_argument_group("problem (--l1: the grid's)"))
    add_grid_arguments(
        path.add_argument_group("grid: λ_max·geomspace(1, RATIO, N), or --lambdas"),
        n_lambdas=PATH_LAMBDAS,
        ratio_=PATH_RATIO,
    )
    _add_solver_arguments(
        path.add_argument_group("solver (tol, max epochs: each λ's; max seconds: the path's)")
    )
    _add_debug(path)
    path.set_defaults(handler=_path)


def _add_data_arguments(source: argparse._ArgumentGroup) -> None:
    """``faceoff solve``'s data: a file or a registry name, or a synthetic problem."""
    one_source = source.add_mutually_exclusive_group(required=True)
    one_source.add_argument(
        "--data",
        metavar="FILE",
        help="LIBSVM/svmlight file, plain or .bz2/.gz (1-based indices), or a name of "
        "faceoff datasets list (mirror, then cache, then download)",
    )
    one_source.add_argument(
        "--synthetic",
        choices=("classification", "regression"),
        help="a seeded synthetic problem (data.synthetic)",
    )
    source.add_argument(
        "--n-samples",
        type=positive_int,
        metavar="N",
        help="synthetic: number of samples (default 20000)",
    )
    source.add_argument(
        "--n-features",
        type=positive_int,
        metavar="D",
        help="synthetic: number of features (default 500); --data: number "
        "of columns (default: the largest index in the file)",
    )
    source.add_argument(
        "--density",
        type=_fraction,
        metavar="P",
        help="synthetic: fraction of non-zeros, 1 = dense (default 0.02)",
    )
    source.add_argument(
        "--data-seed",
        type=_seed,
        metavar="N",
        help="synthetic: seed of the generated data (default 0)",
    )
    source.add_argument(
        "--normalize",
        choices=NORMALIZATION_NAMES,
        default="none",
        help="none; rows: unit l2-norm rows (SPDC 7.2); mean: divide A by "
        "the mean row norm (Faceoff 7, SPDC 7.3). Default none",
    )
    source.add_argument(
        "--positive",
        type=_classes,
        metavar="CLASSES",
        help="comma-separated label values that become +1, the rest -1",
    )


def _add_problem_arguments(model: argparse._ArgumentGroup) -> None:
    """``faceoff solve``'s objective: the loss and the penalty weights."""
    model.add_argument("--loss", required=True, choices=LOSS_NAMES)
    model.add_argument(
        "--l2",
        required=True,
        type=_nonnegative,
        help="l2 weight, >= 0 (0 with --l1 > 0: the Lasso, l1-logistic regression)",
    )
    model.add_argument(
        "--l1",
        type=_nonnegative,
        default=0.0,
        help="l1 weight, >= 0 (default 0: plain l2; > 0: elastic net, or l1 with --l2 0)",
    )
    model.add_argument("--gamma", type=_positive, default=1.0, help=GAMMA_HELP)
    model.add_argument("--multiclass", choices=MULTICLASS_NAMES, help=MULTICLASS_HELP)
    model.add_argument(
        "--fit-intercept",
        action="store_true",
        help="fit an unpenalized intercept c: 1/n Σ φ(aᵢᵀx + c, bᵢ) + g(x) (binary and "
        "regression problems; primal solvers)",
    )


def _add_solver_arguments(run: argparse._ArgumentGroup) -> None:
    """``faceoff solve``'s solver, its parameters, the stop rules and the output format."""
    run.add_argument(
        "--solver",
        required=True,
        metavar="NAME",
        help=f"one of {', '.join(catalogue())} (see faceoff solvers)",
    )
    run.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="solver parameter, repeatable (see faceoff solvers)",
    )
    run.add_argument(
        "--max-epochs",
        type=_positive,
        default=100.0,
        metavar="E",
        help="stop after E passes over the data (default 100)",
    )
    run.add_argument(
        "--max-seconds",
        type=_positive,
        default=60.0,
        metavar="S",
        help="stop after S seconds of solver time (default 60)",
    )
    run.add_argument(
        "--tol",
        type=_nonnegative,
        default=1e-10,
        help="stop when gap <= tol * max(1, |P|) (default 1e-10)",
    )
    run.add_argument("--seed", type=_seed, default=0, help="seed of the solver (default 0)")
    run.add_argument("--format", choices=("jsonl", "table"), help=FORMAT_HELP)


def _add_solvers(commands: argparse._SubParsersAction) -> None:
    listing = commands.add_parser(
        "solvers",
        help="list the solvers and their parameters",
        description="List the solver catalogue: this installation's, or with --url the "
        "server's (the peers its API host has installed, and the solvers its live workers "
        "cannot run, and why).",
    )
    listing.add_argument("--url", help=SOLVERS_SERVER_HELP)
    _add_table_format(listing)
    listing.set_defaults(handler=_solvers)


def _add_datasets(commands: argparse._SubParsersAction) -> None:
    datasets = commands.add_parser(
        "datasets",
        help="list, describe, fetch and upload datasets",
        description="The registry of named datasets: the mirror folder (FACEOFF_DATA_MIRROR) "
        "first, then the cache (FACEOFF_DATA_CACHE, default ~/.cache/faceoff/datasets), "
        "then the LIBSVM site. info also reads a local svmlight file; with --url, list and "
        "info ask a Faceoff server, upload sends a file to it, synthetic and features "
        "register a synthetic problem or random features of a dataset on it.",
    )
    datasets.set_defaults(handler=_datasets)
    actions = datasets.add_subparsers(dest="action", required=True, metavar="ACTION")
    for add in (
        _add_datasets_list,
        _add_datasets_info,
        _add_datasets_fetch,
        _add_datasets_upload,
        _add_datasets_synthetic,
        _add_datasets_features,
    ):
        _add_table_format(add(actions))


def _add_datasets_list(actions: argparse._SubParsersAction) -> argparse.ArgumentParser:
    text = "every dataset: task, shape and where its file is (--url: the server's)"
    listing = actions.add_parser("list", help=text, description=text)
    listing.add_argument("--url", help=ASK_SERVER_HELP)
    return listing


def _add_datasets_info(actions: argparse._SubParsersAction) -> argparse.ArgumentParser:
    text = (
        "one dataset (a registry name, a local svmlight file, or with --url a dataset of "
        "the server): shape, statistics, labels, provenance, primal-vs-dual advice"
    )
    info = actions.add_parser("info", help=text, description=text)
    info.add_argument(
        "name",
        metavar="NAME|FILE",
        help="a name of faceoff datasets list, or a local svmlight file; with --url a name or id",
    )
    info.add_argument("--url", help=ASK_SERVER_HELP)
    info.add_argument(
        "--loss",
        choices=LOSS_NAMES,
        default="logistic",
        help="loss of the primal-vs-dual advice (default logistic)",
    )
    info.add_argument("--gamma", type=float, default=1.0, help=GAMMA_HELP)
    info.add_argument(
        "--l2", type=float, default=None, help="l2 weight of the advice (default 1/n)"
    )
    info.add_argument(
        "--normalize",
        choices=NORMALIZATION_NAMES,
        default="none",
        help="transform before the statistics (as faceoff solve --normalize)",
    )
    return info


def _add_datasets_fetch(actions: argparse._SubParsersAction) -> argparse.ArgumentParser:
    text = "download (or copy from the mirror) into the cache"
    fetch = actions.add_parser("fetch", help=text, description=text)
    fetch.add_argument("name", metavar="NAME", help="a name of faceoff datasets list")
    return fetch


def _add_datasets_upload(actions: argparse._SubParsersAction) -> argparse.ArgumentParser:
    text = "upload an svmlight file (plain, .bz2 or .gz) to the server"
    upload = actions.add_parser("upload", help=text, description=text)
    upload.add_argument("--url", help=URL_HELP)
    upload.add_argument("file", metavar="FILE", help="LIBSVM/svmlight file")
    upload.add_argument("--name", help="the dataset's name (default: from the file name)")
    upload.add_argument(
        "--n-features",
        type=positive_int,
        metavar="D",
        help="number of columns (default: the largest index in the file)",
    )
    return upload


def _add_datasets_synthetic(actions: argparse._SubParsersAction) -> argparse.ArgumentParser:
    text = "register a seeded synthetic problem on the server (POST /datasets)"
    made = actions.add_parser("synthetic", help=text, description=text)
    made.add_argument("--url", help=URL_HELP)
    made.add_argument("name", metavar="NAME", help="the dataset's name")
    made.add_argument(
        "--generator",
        required=True,
        choices=("classification", "regression", "multiclass"),
        help="classification: labels ±1; regression: real targets; multiclass: labels 0..K−1",
    )
    made.add_argument("--n-samples", type=positive_int, required=True, metavar="N")
    made.add_argument("--n-features", type=positive_int, required=True, metavar="D")
    made.add_argument(
        "--density",
        type=_fraction,
        default=1.0,
        help="fraction of non-zeros (default 1: dense)",
    )
    made.add_argument("--seed", type=_seed, default=0, help="seed of the generator (default 0)")
    made.add_argument("--n-classes", type=positive_int, metavar="K", help="multiclass: K")
    made.add_argument(
        "--layout",
        choices=("planted", "clusters"),
        help="multiclass: planted (default) or clusters (K Gaussian classes)",
    )
    return made


def _add_datasets_features(actions: argparse._SubParsersAction) -> argparse.ArgumentParser:
    text = (
        "register random features of a dataset on the server (Rahimi & Recht 2007): fourier "
        "(dense, n × n_components) or binning (sparse, n_grids non-zeros a row)"
    )
    made = actions.add_parser("features", help=text, description=text)
    made.add_argument("--url", help=URL_HELP)
    made.add_argument("name", metavar="NAME", help="the new dataset's name")
    made.add_argument(
        "--of", dest="base", required=True, metavar="BASE", help="the dataset they are made of"
    )
    made.add_argument(
        "--kind", dest="map", required=True, choices=("fourier", "binning"), help="the map"
    )
    made.add_argument("--n-components", type=positive_int, metavar="D", help="fourier: D (1000)")
    made.add_argument("--gamma", type=_positive, help="fourier: γ of the kernel (0.02)")
    made.add_argument("--n-grids", type=positive_int, metavar="P", help="binning: P (100)")
    made.add_argument("--sigma", type=_positive, help="binning: σ of the kernel (20)")
    made.add_argument("--seed", type=_seed, default=0, help="seed of the map (default 0)")
    return made


def _add_table_format(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format",
        choices=("table", "json"),
        help="default: table when stdout is a terminal, json otherwise",
    )


def _add_secret(commands: argparse._SubParsersAction) -> None:
    text = (
        "print a new random FACEOFF_SECRET_KEY (48 random bytes, URL-safe base64), one the "
        "dashboard accepts"
    )
    secret = commands.add_parser("secret", help=text, description=text)
    secret.set_defaults(handler=_secret)


def _secret(args: argparse.Namespace) -> int:
    print(make_secret_key())
    return 0


def _add_up(commands: argparse._SubParsersAction) -> None:
    up = commands.add_parser(
        "up",
        help="run the whole service on this machine (SQLite, local broker, worker, API, "
        "dashboard) with a demo sweep",
        description="Start a local Redis broker, one worker, the API and the dashboard on an "
        "SQLite database in $FACEOFF_HOME, submit a demo sweep; Ctrl-C stops everything. "
        "No authentication: bound to 127.0.0.1 only.",
    )
    add_up_arguments(up)
    up.set_defaults(handler=_up)


def _up(args: argparse.Namespace) -> int:
    return run_up(args)


def _path(args: argparse.Namespace) -> int:
    from faceoff.cli.path import run

    return run(args)


def _solve(args: argparse.Namespace) -> int:
    # Numba and the solvers only for this command (the CLI starts fast)
    from faceoff.cli.solve import run

    return run(args)


def _solvers(args: argparse.Namespace) -> int:
    # cli.output imports Numba (solvers.trace): CLI start-up
    from faceoff.cli.output import print_catalogue

    fmt = args.format or ("table" if sys.stdout.isatty() else "json")
    if args.url is None:
        print_catalogue(fmt)
        return 0
    from faceoff.cli.service import client_of
    from faceoff.client import ClientError

    try:
        with client_of(args) as client:
            solvers = client.solvers()
    except (ClientError, InputError) as err:
        print(f"faceoff solvers: error: {err}", file=sys.stderr)
        return 2 if isinstance(err, InputError) else 1
    print_catalogue(fmt, solvers, f" of {client.base_url}")
    return 0


def _datasets(args: argparse.Namespace) -> int:
    # scipy and the data package only for this command: CLI start-up
    from faceoff.cli.datasets import run

    return run(args)


def attach_negative_values(argv: Sequence[str]) -> list[str]:
    """``--l2 -1e-3`` → ``--l2=-1e-3``: argparse takes "-1e-3" or "-1,1" for an option, so a
    negative value would be reported as a missing one instead of being checked."""
    out: list[str] = []
    for token in argv:
        if (
            out
            and out[-1].startswith("--")
            and "=" not in out[-1]
            and re.fullmatch(r"-\.?\d[\w.,+-]*", token)
        ):
            out[-1] = f"{out[-1]}={token}"
        else:
            out.append(token)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``faceoff`` command; returns the exit status."""
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser()
    args = parser.parse_args(attach_negative_values(argv))
    if args.global_url is not None:  # faceoff --url URL COMMAND: as COMMAND --url URL
        if not hasattr(args, "url"):
            parser.error(f"--url does not apply to faceoff {args.command}")
        if args.url is None:
            args.url = args.global_url
    try:
        return args.handler(args)
    except InputError as err:
        message = " ".join(str(err).split())
        print(f"faceoff {args.command}: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
