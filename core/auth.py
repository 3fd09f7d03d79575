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
from collections.abc import Sequence
from datetime import UTC, timedelta

from sqlalchemy import ColumnElement, or_, select
from sqlalchemy.orm import InstrumentedAttribute, Session

from faceoff.core.models import ApiToken, Dataset, Team, utcnow

TOKEN_PREFIX = "fo_"
LAST_USED_RESOLUTION = timedelta(minutes=1)  # last_used_at is written at most this often
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


def _ip(host: str | None) -> IPAddress | None:
    """``host`` as an IP address (an IPv4-mapped IPv6 one as IPv4); None if it is not one."""
    try:
        address = ipaddress.ip_address(host) if host is not None else None
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def is_loopback(host: str | None) -> bool:
    """Whether ``host`` is a loopback IP address (a host name is not)."""
    address = _ip(host)
    return address is not None and address.is_loopback


def parse_networks(text: str, setting: str = "FACEOFF_TRUSTED_PROXIES") -> tuple[IPNetwork, ...]:
    """``"10.0.0.2, 10.1.0.0/16"`` → its networks; ValueError naming a bad entry."""
    networks = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        try:
            networks.append(ipaddress.ip_network(part, strict=False))
        except ValueError:
            raise ValueError(
                f"{setting}: {part[:100]!r} is not an IP address or network; use a "
                "comma-separated list such as 127.0.0.1,::1,10.0.0.0/24"
            ) from None
    return tuple(networks)


def client_address(
    peer: str | None, forwarded_for: str | None, trusted_proxies: Sequence[IPNetwork]
) -> str | None:
    """The address of the client of a request, the one rule for proxy headers.

    ``peer`` made the connection. Its ``X-Forwarded-For`` header (``forwarded_for``, the
    addresses the request passed through, each proxy appending the one it was called from)
    counts only when ``peer`` is in ``trusted_proxies`` (FACEOFF_TRUSTED_PROXIES): then the
    client is the nearest address of the header that is not a trusted proxy itself, since
    anything left of it may be forged. An entry that is not an IP address comes back as is
    (so it is no loopback address).
    """
    client = peer
    if forwarded_for and _trusted(peer, trusted_proxies):
        for hop in reversed(forwarded_for.split(",")):
            client = hop.strip()
            if not _trusted(client, trusted_proxies):
                break
    return client


def _trusted(host: str | None, trusted_proxies: Sequence[IPNetwork]) -> bool:
    address = _ip(host)
    return address is not None and any(address in network for network in trusted_proxies)


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


def token_team(session: Session, token_id: int) -> int | None:
    """The team of the unrevoked token ``token_id`` (a dashboard login), None once it is
    revoked or gone."""
    token = session.get(ApiToken, token_id)
    return token.team_id if token is not None and token.revoked_at is None else None


def record_use(session: Session, token: ApiToken) -> None:
    """Update ``last_used_at`` (and commit) if it is older than LAST_USED_RESOLUTION."""
    now, last = utcnow(), token.last_used_at
    if last is not None and last.tzinfo is None:  # SQLite returns naive UTC datetimes
        last = last.replace(tzinfo=UTC)
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
