"""``faceoff tokens create | list | revoke``: API tokens, managed on the server itself.

These commands work directly on the database of ``FACEOFF_DATABASE_URL`` (as the API and
the workers do), so only someone with access to the server's configuration can run them.
"""

from __future__ import annotations

import argparse
import sys
from datetime import datetime

from faceoff.cli import InputError
from faceoff.core.settings import get_settings


def add_token_commands(commands: argparse._SubParsersAction) -> None:
    """Register ``faceoff tokens`` on the ``faceoff`` parser."""
    tokens = commands.add_parser(
        "tokens",
        help="create, list and revoke API tokens (on the server: uses its database)",
        description="API tokens of teams, read and written directly in the database of "
        "FACEOFF_DATABASE_URL. A team sees only its own jobs, sweeps and uploaded datasets.",
    )
    actions = tokens.add_subparsers(dest="action", required=True, metavar="ACTION")
    create = actions.add_parser(
        "create",
        help="create a token and print its secret (shown only once)",
        description="Create a token of the team (the team is created if needed) and print "
        "its secret on stdout: it is stored hashed and cannot be shown again.",
    )
    create.add_argument("--team", required=True, help="team name (created if needed)")
    create.add_argument("--name", help="a label for the token, e.g. who uses it")
    create.set_defaults(handler=_create)
    listing = actions.add_parser("list", help="list the tokens (never their secrets)")
    listing.set_defaults(handler=_list)
    revoke = actions.add_parser("revoke", help="revoke a token at once")
    revoke.add_argument("id", type=int, help="token id (see faceoff tokens list)")
    revoke.set_defaults(handler=_revoke)


def _database_url() -> str:
    return get_settings().database_url


def _check_label(value: str | None, what: str) -> None:
    if value is not None and not (0 < len(value) <= 200 and value.isprintable()):
        raise InputError(f"{what} {value!r} must be 1 to 200 printable characters")


def _create(args: argparse.Namespace) -> int:
    # SQLAlchemy only for the token commands: CLI start-up
    from faceoff.core.auth import create_token
    from faceoff.core.db import session_scope

    _check_label(args.team, "--team")
    _check_label(args.name, "--name")
    with session_scope(_database_url()) as session:
        token, secret = create_token(session, args.team, args.name)
        token_id = token.id
    print(
        f"token {token_id} of team {args.team!r} created; its secret is shown only this once:",
        file=sys.stderr,
    )
    print(secret)
    return 0


def _when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M") if value is not None else "-"


def _list(_args: argparse.Namespace) -> int:
    # as in _create
    from faceoff.core.auth import list_tokens
    from faceoff.core.db import session_scope

    with session_scope(_database_url()) as session:
        rows = [
            (
                str(t.id),
                t.team.name,
                t.name or "-",
                _when(t.created_at),
                _when(t.last_used_at),
                _when(t.revoked_at),
            )
            for t in list_tokens(session)
        ]
    header = ("id", "team", "name", "created", "last used", "revoked")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    return 0


def _revoke(args: argparse.Namespace) -> int:
    # as in _create
    from faceoff.core.auth import revoke_token
    from faceoff.core.db import session_scope

    with session_scope(_database_url()) as session:
        token = revoke_token(session, args.id)
        if token is None:
            raise InputError(f"there is no token {args.id}; see faceoff tokens list")
        when = _when(token.revoked_at)
    print(f"token {args.id} is revoked (since {when} UTC)")
    return 0
