"""Engine and sessions for PostgreSQL or SQLite (WAL, busy timeout: one writer at a time).

A PostgreSQL connection is checked before each use (``pool_pre_ping``) and gives up
connecting after ``CONNECT_TIMEOUT_SECONDS``, so an outage surfaces as an error that
:func:`is_unavailable` recognises instead of a hang.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

from sqlalchemy import Engine, create_engine, event
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker

CONNECT_TIMEOUT_SECONDS = 5


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def make_engine(url: str) -> Engine:
    """An engine for ``url``; SQLite files get their folder, WAL mode and a busy timeout."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"timeout": 30})
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    return create_engine(
        url,
        pool_pre_ping=True,
        pool_size=10,
        max_overflow=20,
        connect_args={"connect_timeout": CONNECT_TIMEOUT_SECONDS},
    )


def is_unavailable(err: BaseException) -> bool:
    """Whether ``err`` means the database cannot be reached or is busy (worth retrying), as
    opposed to a bad statement or a violated constraint."""
    if isinstance(err, (sa_exc.OperationalError, sa_exc.InterfaceError, sa_exc.TimeoutError)):
        return True
    return isinstance(err, sa_exc.DBAPIError) and err.connection_invalidated


@lru_cache
def engine_for(url: str) -> Engine:
    return make_engine(url)


@lru_cache
def session_factory(url: str) -> sessionmaker[Session]:
    return sessionmaker(engine_for(url), expire_on_commit=False)


@contextmanager
def session_scope(url: str) -> Iterator[Session]:
    """A session that commits on success and rolls back on error."""
    session = session_factory(url)()
    try:
        yield session
        session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()


def brief(err: BaseException) -> str:
    """``"Type: first line of the message"`` of a database error (without SQLAlchemy's
    statement and parameters)."""
    cause = getattr(err, "orig", None) or err
    lines = str(cause).strip().splitlines()
    return f"{type(cause).__name__}: {lines[0] if lines else 'no message'}"
