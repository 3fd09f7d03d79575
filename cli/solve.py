"""``faceoff solve``: check the request, build the problem, run the solver, report."""

from __future__ import annotations

import argparse
import signal
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from faceoff.cli import InputError
from faceoff.core.settings import get_settings
from faceoff.data import synthetic
from faceoff.data.cache import load_dataset
from faceoff.data.labels import LabelError
from faceoff.data.registry import REGISTRY, DatasetError
from faceoff.data.svmlight import read_svmlight
from faceoff.solvers.catalogue import get_spec
from faceoff.solvers.integers import INTEGER_TEXT, int_text
from faceoff.solvers.numba_cache import configure_numba_cache
from faceoff.solvers.vocabulary import LOSS_NAMES, get_loss, penalty_name

if TYPE_CHECKING:
    from types import FrameType

    import numpy as np
    import scipy.sparse as sp

SYNTHETIC_DEFAULTS = {"n_samples": 20000, "n_features": 500, "density": 0.02, "data_seed": 0}


@dataclass
class Request:
    """A checked ``faceoff solve`` request."""

    problem: Any  # solvers.problem.Problem
    solver: str
    params: Any  # the solver's Params, parsed once here
    info: dict[str, Any]


def parse_params(pairs: list[str]) -> dict[str, str | int]:
    """``["sampling=importance", "batch_size=8"]`` → ``{"sampling": "importance",
    "batch_size": 8}``: a value written in the digits 0-9 is an integer (solvers.integers),
    any other stays text for the catalogue to parse."""
    raw: dict[str, str | int] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not name or not value:
            raise InputError(
                f"--param {pair!r} is not NAME=VALUE (e.g. --param sampling=importance)"
            )
        if name in raw:
            raise InputError(f"--param {name} is given twice")
        raw[name] = int_text(value) if INTEGER_TEXT.fullmatch(value) else value
    return raw


def check_solver(args: argparse.Namespace) -> Any:
    """Solver name, loss/penalty/γ support and parameters; returns the solver's typed
    parameters (its ``Params``: the one check they get)."""
    if args.l1 == 0 and args.l2 == 0:
        raise InputError(
            "--l1 and --l2 are both 0: the problem has no penalty; give --l2 > 0, or "
            "--l1 > 0 with --l2 0 for the Lasso or l1-logistic regression"
        )
    if args.multiclass is not None and args.positive is not None:
        raise InputError(
            "--positive makes a binary problem and --multiclass a K-class one: give one of them"
        )
    try:
        spec = get_spec(args.solver)
        spec.check(
            args.loss,
            penalty_name(args.l1, args.l2),
            args.gamma,
            args.multiclass,
            args.fit_intercept,
        )
        params = spec.parse_params(parse_params(args.param))
        missing = spec.unavailable_reason()  # a peer whose distribution is not installed
        if missing is not None:
            raise InputError(missing)
    except ValueError as err:
        raise InputError(str(err)) from None
    return params


def load_matrix(args: argparse.Namespace) -> tuple[np.ndarray | sp.csr_matrix, np.ndarray, str]:
    """(A, b, description) from --data or --synthetic."""
    synthetic_only = [
        f"--{name.replace('_', '-')}"
        for name in ("n_samples", "density", "data_seed")
        if getattr(args, name) is not None
    ]
    if args.data is not None:
        if synthetic_only:
            raise InputError(f"{synthetic_only[0]} only applies to --synthetic")
        if args.data in REGISTRY and not Path(args.data).exists():  # a named dataset
            if args.n_features is not None:
                raise InputError("--n-features does not apply to a named dataset")
            try:
                A, b, _ = load_dataset(args.data)
            except DatasetError as err:
                raise InputError(" ".join(str(err).split())) from None
            return A, b, args.data
        try:
            A, b = read_svmlight(args.data, n_features=args.n_features)
        except (ValueError, OSError) as err:
            raise InputError(str(err)) from None
        return A, b, Path(args.data).name
    if args.synthetic == "regression" and get_loss(args.loss).needs_binary_labels:
        regression = ", ".join(n for n in LOSS_NAMES if not get_loss(n).needs_binary_labels)
        raise InputError(
            f"--synthetic regression has real-valued targets; use --loss {regression}, "
            f"or --synthetic classification for --loss {args.loss}"
        )
    sizes = {
        name: default if getattr(args, name) is None else getattr(args, name)
        for name, default in SYNTHETIC_DEFAULTS.items()
    }
    A, b = getattr(synthetic, args.synthetic)(
        sizes["n_samples"], sizes["n_features"], sizes["density"], seed=sizes["data_seed"]
    )
    source = f"synthetic {args.synthetic} (density {sizes['density']:g}, seed {sizes['data_seed']})"
    return A, b, source


def build_request(args: argparse.Namespace) -> Request:
    """Check everything that can be checked before running; InputError otherwise."""
    params = check_solver(args)
    A, b, source = load_matrix(args)

    # after configure_numba_cache() (in run): Numba fixes a kernel's cache folder when the
    # kernel is defined
    from faceoff.solvers.problem import build_problem

    try:
        problem = build_problem(
            A,
            b,
            args.loss,
            args.gamma,
            args.l1,
            args.l2,
            args.normalize,
            args.positive,
            args.multiclass,
            get_settings().MAX_CLASSES,
            args.fit_intercept,
        )
    except LabelError as err:
        raise InputError(f"{args.data or '--synthetic'}: labels: {err}") from None
    data, loss = problem.data, problem.loss
    info = {
        "data": source,
        "n_samples": data.n_samples,
        "n_features": data.n_features,
        "nnz": data.nnz,
        "normalize": args.normalize,
        "loss": loss.name,
        "gamma": loss.gamma,
        "l1": args.l1,
        "l2": args.l2,
        "multiclass": args.multiclass,
        "n_classes": problem.n_classes if args.multiclass is not None else None,
        "fit_intercept": args.fit_intercept,
    }
    return Request(problem, args.solver, params, info)


def run(args: argparse.Namespace) -> int:
    """``faceoff solve``: returns the exit status (0 done, 130 interrupted)."""
    configure_numba_cache()  # before any kernel is imported; the other commands need none
    request = build_request(args)
    # as build_request, after configure_numba_cache()
    from faceoff.cli.output import JsonlReporter, TableReporter
    from faceoff.solvers.run import solve
    from faceoff.solvers.trace import CANCELLED, StopRules

    interrupted = []

    def on_sigint(
        signum: int, frame: FrameType | None
    ) -> None:  # first Ctrl-C: stop at the next trace point
        interrupted.append(signum)
        signal.signal(signal.SIGINT, signal.default_int_handler)

    stop = StopRules(
        args.max_epochs,
        args.max_seconds,
        args.tol,
        should_stop=lambda: bool(interrupted) or reporter.closed,
    )
    fmt = args.format or ("table" if sys.stdout.isatty() else "jsonl")
    reporter = (TableReporter if fmt == "table" else JsonlReporter)(request, stop)
    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        with reporter:
            result = solve(
                request.problem,
                request.solver,
                request.params,
                stop,
                args.seed,
                on_point=reporter.point,
            )
            reporter.finish(result)
    except Exception as err:  # the solver's failure: one line, the traceback on --debug
        if getattr(args, "debug", False):
            traceback.print_exc()
        message = " ".join(f"{type(err).__name__}: {err}".split())
        hint = "" if getattr(args, "debug", False) else " (--debug: the traceback)"
        print(f"faceoff solve: solver {request.solver!r} failed: {message}{hint}", file=sys.stderr)
        return 1
    finally:
        signal.signal(signal.SIGINT, previous)
    return 130 if result.stop_reason == CANCELLED and interrupted else 0
