"""``faceoff plugin check NAME``: the conformance checker (``solvers.conformance``) on one
solver, its progress on stderr, the verdict last; exit status 0 when it conforms, 1 when a
check fails (each reason on stderr), 2 for a solver it cannot check."""

from __future__ import annotations

import argparse
import json
import sys

from faceoff.cli import InputError
from faceoff.solvers.conformance import CHECKS


def add_plugin_commands(commands: argparse._SubParsersAction) -> None:
    plugin = commands.add_parser(
        "plugin",
        help="check a plug-in solver before publishing it",
        description="Tools for plug-in authors (docs/plugins.md).",
    )
    actions = plugin.add_subparsers(dest="action", required=True, metavar="ACTION")
    text = (
        "run solver NAME on small generated problems (dense and sparse, each declared loss, "
        "penalty and K-class form) in a child process and check: certification (final P "
        "against scipy's L-BFGS-B, the duality gap), monotone time, an honest clock (time "
        "with and without trace points), cancel and time-limit response, memory against "
        "the spec's estimate. A few seconds to a minute; exit status 1 if a check fails"
    )
    check = actions.add_parser("check", help=text, description=text)
    check.add_argument("name", metavar="NAME", help="a solver name, e.g. lab.fista")
    check.add_argument(
        "--only",
        action="append",
        choices=CHECKS,
        metavar="CHECK",
        help=f"run this check only (repeatable): {', '.join(CHECKS)}",
    )
    check.add_argument(
        "--tol",
        type=float,
        default=1e-8,
        help="relative distance to the reference P* and final relative gap a run must reach "
        "(default 1e-8)",
    )
    check.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="text: the verdict; json: the whole report on stdout (progress on stderr either way)",
    )
    check.set_defaults(handler=_check)


def _check(args: argparse.Namespace) -> int:
    from faceoff.solvers.conformance import CheckError, check_solver

    if not args.tol > 0:
        raise InputError(f"--tol must be a number > 0, got {args.tol!r}")

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    try:
        report = check_solver(args.name, args.only or CHECKS, args.tol, progress)
    except CheckError as err:
        raise InputError(str(err)) from None
    if args.format == "json":
        print(json.dumps(report.to_dict(), indent=2))
    failures = report.failures()
    for finding in failures:
        print(f"FAILED {finding.check}: {finding.summary}", file=sys.stderr)
    verdict = "FAILED" if failures else "PASSED"
    line = f"{verdict}: {report.name} ({report.origin}), {len(report.findings)} checks"
    line += f" in {report.seconds:.1f} s"
    if failures:
        line += f"; failed: {', '.join(f.check for f in failures)}"
    print(line, file=sys.stderr if args.format == "json" else sys.stdout)
    return 1 if failures else 0
