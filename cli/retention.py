"""``faceoff prune --older-than 90d [--keep-summaries]``: thin or drop the traces of old
finished jobs (core.retention), on the server's own database (``FACEOFF_DATABASE_URL``,
as ``faceoff tokens`` does)."""

from __future__ import annotations

import argparse
import json

from faceoff.cli import InputError


def add_prune_command(commands: argparse._SubParsersAction) -> None:
    """Register ``faceoff prune`` on the ``faceoff`` parser."""
    text = (
        "thin the traces of jobs that finished longer ago than --older-than to the points "
        "the dashboard draws (or drop them with --keep-summaries), keeping the jobs, their "
        "summaries (time to ε) and the reference optima; on the server's database"
    )
    prune = commands.add_parser("prune", help=text, description=text)
    prune.add_argument("--older-than", required=True, metavar="AGE", help="e.g. 90d, 12h, 30m")
    prune.add_argument(
        "--keep-summaries",
        action="store_true",
        help="drop the old traces entirely, keeping only the jobs' summaries",
    )
    prune.set_defaults(handler=_prune)


def _prune(args: argparse.Namespace) -> int:
    from faceoff.core.db import session_scope
    from faceoff.core.models import utcnow
    from faceoff.core.retention import parse_age, prune
    from faceoff.core.settings import get_settings

    try:
        age = parse_age(args.older_than)
    except ValueError as err:
        raise InputError(f"--older-than: {err}") from None
    with session_scope(get_settings().database_url) as session:
        done = prune(session, utcnow() - age, keep_summaries_only=args.keep_summaries)
    print(json.dumps(done.as_dict()))
    return 0
