"""Teams and API tokens, and who sees what.

A token is ``fo_`` followed by a random secret; only its sha256 is stored, so the secret is
shown once, when the token is created (``faceoff tokens create``). Each token belongs to a
team. A team sees its own jobs and sweeps, and the shared datasets (``team_id`` NULL:
public registry names, synthetic and scikit-learn datasets) plus its own uploads. With
authentication off the caller is ``team_id`` None: it owns the rows whose ``team_id`` is
NULL. Reference optima P* are properties of an objective and are shared by everyone.
"""

from __future__ import annotations

import hashlib
import ipaddress
import secrets
from datetime import timedelta, timezone

from sqlalchemy import ColumnElement, or_, select
from sqlalchemy.orm import InstrumentedAttribute, Session

from core.models import ApiToken, Dataset, Team, utcnow

TOKEN_PREFIX = "fo_"
LAST_USED_RESOLUTION = timedelta(minutes=1)  # last_used_at is written at most this often


def is_loopback(host: str | None) -> bool:
    """Whether ``host`` is a loopback IP address (a host name is not)."""
    try:
        return host is not None and ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def hash_token(secret: str) -> str:
    """The stored form of a token: sha256 of its secret, hex."""
    return hashlib.sha256(secret.encode()).hexdigest()


def get_or_create_team(session: Session, name: str) -> Team:
    team = session.scalars(select(Team).where(Team.name == name)).one_or_none()
    if team is None:
        team = Team(name=name)
        session.add(team)
        session.flush()
    return team


def create_token(session: Session, team_name: str, name: str | None = None) -> tuple[ApiToken, str]:
    """(token, secret): a new token of the team ``team_name`` (created if needed). The caller
    commits; the secret is not stored and cannot be shown again."""
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken(
        team=get_or_create_team(session, team_name), name=name, token_hash=hash_token(secret)
    )
    session.add(token)
    session.flush()
    return token, secret


def verify_token(session: Session, secret: str) -> ApiToken | None:
    """The unrevoked token whose secret is ``secret``, or None."""
    if not secret.startswith(TOKEN_PREFIX):
        return None
    return session.scalars(
        select(ApiToken).where(
            ApiToken.token_hash == hash_token(secret), ApiToken.revoked_at.is_(None)
        )
    ).one_or_none()


def record_use(session: Session, token: ApiToken) -> None:
    """Update ``last_used_at`` (and commit) if it is older than LAST_USED_RESOLUTION."""
    now, last = utcnow(), token.last_used_at
    if last is not None and last.tzinfo is None:  # SQLite returns naive UTC datetimes
        last = last.replace(tzinfo=timezone.utc)
    if last is None or now - last > LAST_USED_RESOLUTION:
        token.last_used_at = now
        session.commit()


def list_tokens(session: Session) -> list[ApiToken]:
    """Every token, revoked ones included, oldest first (with its team loaded)."""
    return list(session.scalars(select(ApiToken).join(ApiToken.team).order_by(ApiToken.id)))


def revoke_token(session: Session, token_id: int) -> ApiToken | None:
    """Revoke a token (at once: the next request with it gets 401); None if there is no
    such token. Revoking twice keeps the first time. The caller commits."""
    token = session.get(ApiToken, token_id)
    if token is not None and token.revoked_at is None:
        token.revoked_at = utcnow()
    return token


def owned_by(column: InstrumentedAttribute, team_id: int | None) -> ColumnElement[bool]:
    """Rows of the team ``team_id`` (of nobody when None: authentication off)."""
    return column.is_(None) if team_id is None else column == team_id


def visible_datasets(team_id: int | None) -> ColumnElement[bool]:
    """The datasets a team may use: the shared ones and its own uploads."""
    return or_(Dataset.team_id.is_(None), Dataset.team_id == team_id)
