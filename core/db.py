"""Engine and sessions for PostgreSQL or SQLite (WAL, busy timeout: one writer at a time).

A PostgreSQL connection never waits for the network without a bound, so an outage or a
silent partition surfaces within seconds as an error that :func:`is_unavailable`
recognises (the API answers 503, a worker buffers and retries) instead of a hang:

- connecting gives up after ``DB_CONNECT_TIMEOUT_SECONDS``;
- a pooled connection is pinged before each use and dropped when the ping is not
  answered within ``DB_NETWORK_TIMEOUT_SECONDS``;
- the kernel drops a connection whose sent data stays unacknowledged, or that stops
  answering TCP keepalives, for ``DB_NETWORK_TIMEOUT_SECONDS`` (``tcp_user_timeout``,
  keepalives): packets lost in a partition;
- the server cancels a statement after ``DB_STATEMENT_TIMEOUT_SECONDS``, and the client
  gives up on a statement that has had no answer for that long plus
  ``DB_NETWORK_TIMEOUT_SECONDS`` (a peer that accepts bytes but never answers: a frozen
  server or proxy), closing its connection.

Migrations (``make_engine(url, long_statements=True)``) keep the network bounds but no
statement bound: rewriting a large table may take as long as it takes.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

import psycopg
from psycopg.abc import PQGen
from sqlalchemy import Connection, Engine, Select, create_engine, event, func, select
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker

from faceoff.core.errors import NotFoundError
from faceoff.core.settings import Settings, get_settings

log = logging.getLogger(__name__)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


class NoAnswer(psycopg.OperationalError):
    """The database did not answer within the connection's bound; the connection is closed."""


RV = TypeVar("RV")


def _bounded(gen: PQGen[RV], seconds: float) -> PQGen[RV]:
    """``gen`` (a psycopg wait generator), raising :class:`NoAnswer` once it has run for
    ``seconds``. psycopg's wait loop resumes it at least every 0.1 s, data or not."""
    deadline = time.monotonic() + seconds
    try:
        state = next(gen)
        while True:
            ready = yield state
            if time.monotonic() > deadline:
                raise NoAnswer(f"the database did not answer within {seconds:g} s")
            state = gen.send(ready)
    except StopIteration as stop:
        return stop.value


class BoundedConnection(psycopg.Connection):
    """A psycopg connection whose every wait for the server (a statement, COPY, commit,
    the pool's ping) gives up after ``answer_timeout`` seconds (None: no bound) and then
    closes the connection, so the pool discards it."""

    answer_timeout: float | None = None

    def wait(self, gen: PQGen[RV], *args: Any, **kwargs: Any) -> RV:
        if self.answer_timeout is None:
            return super().wait(gen, *args, **kwargs)
        try:
            return super().wait(_bounded(gen, self.answer_timeout), *args, **kwargs)
        except NoAnswer:
            self.close()
            raise


def postgres_connect_args(settings: Settings, long_statements: bool = False) -> dict[str, Any]:
    """libpq parameters bounding every network wait (see the module doc)."""
    network = settings.DB_NETWORK_TIMEOUT_SECONDS
    idle = max(1, math.ceil(network / 2))
    args: dict[str, Any] = {
        "connect_timeout": max(2, math.ceil(settings.DB_CONNECT_TIMEOUT_SECONDS)),
        "keepalives": 1,
        "keepalives_idle": idle,
        "keepalives_interval": 1,
        "keepalives_count": max(1, math.ceil(network - idle)),
        "tcp_user_timeout": math.ceil(network * 1000),
    }
    if not long_statements and settings.DB_STATEMENT_TIMEOUT_SECONDS > 0:
        milliseconds = math.ceil(settings.DB_STATEMENT_TIMEOUT_SECONDS * 1000)
        args["options"] = f"-c statement_timeout={milliseconds}"
    return args


def _bound_connections(engine: Engine, settings: Settings, long_statements: bool) -> None:
    """Make ``engine``'s connections :class:`BoundedConnection` s: while checked out a wait
    is bounded by the statement bound plus ``DB_NETWORK_TIMEOUT_SECONDS``; from its return to
    the pool (its rollback) to its next use (the pool's ping) by the latter alone."""
    network = settings.DB_NETWORK_TIMEOUT_SECONDS
    statement = settings.DB_STATEMENT_TIMEOUT_SECONDS
    in_use = None if long_statements or statement <= 0 else statement + network

    @event.listens_for(engine, "do_connect")
    def _connect(dialect: Any, record: Any, cargs: Any, cparams: Any) -> BoundedConnection:
        connection = BoundedConnection.connect(*cargs, **cparams)
        connection.answer_timeout = network
        return connection

    @event.listens_for(engine, "checkout")
    def _checkout(dbapi_connection: BoundedConnection, record: Any, proxy: Any) -> None:
        dbapi_connection.answer_timeout = in_use

    @event.listens_for(engine, "reset")
    def _returned(dbapi_connection: BoundedConnection, record: Any, reset_state: Any) -> None:
        dbapi_connection.answer_timeout = network  # the rollback on return, then the ping


def make_engine(
    url: str, settings: Settings | None = None, *, long_statements: bool = False
) -> Engine:
    """An engine for ``url``; SQLite files get their folder, WAL mode and a busy timeout,
    PostgreSQL connections the bounds of the module doc (``settings``: the process's)."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, connect_args={"timeout": 30})
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    settings = settings or get_settings()
    engine = create_engine(
        url,
        pool_pre_ping=True,
        pool_size=10,
        max_overflow=20,
        pool_timeout=settings.DB_CONNECT_TIMEOUT_SECONDS,
        connect_args=postgres_connect_args(settings, long_statements),
    )
    _bound_connections(engine, settings, long_statements)
    return engine


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
        _roll_back(session)
        raise
    finally:
        session.close()


@contextmanager
def connection(url: str) -> Iterator[Connection]:
    """``engine_for(url).connect()`` whose connection is dropped, not rolled back, when an
    exception leaves it: a signal's (a soft time limit) may have cut an answer short, and
    rolling back on that connection fails ("another command is already in progress") and
    would replace the interrupting error with its own."""
    conn = engine_for(url).connect()
    try:
        yield conn
    except BaseException:
        conn.invalidate()
        raise
    finally:
        conn.close()


def _roll_back(session: Session) -> None:
    """Roll ``session`` back; when its connection cannot (a signal's exception, such as a
    soft time limit, interrupted it in the middle of an answer), drop the connection so
    that the pool never hands it out again, and let the interrupting error stand."""
    try:
        session.rollback()
    except Exception as err:
        log.warning("a connection that could not roll back was dropped: %s", err)
        session.invalidate()


def _refuse_flush(*_args: Any) -> None:
    raise RuntimeError("this session is read-only: it never writes to the database")


@contextmanager
def read_session(url: str) -> Iterator[Session]:
    """A session that refuses to flush and is rolled back at the end: a reader (the
    dashboard) can call the service functions but never write through them."""
    session = session_factory(url)()
    event.listen(session, "before_flush", _refuse_flush)
    try:
        yield session
    finally:
        _roll_back(session)
        session.close()


Row = TypeVar("Row")


def one_or_not_found(session: Session, query: Select[Row], missing: str) -> Row:
    """The one row of ``query``; NotFoundError(``missing``) when there is none."""
    row = session.scalars(query).one_or_none()
    if row is None:
        raise NotFoundError(missing)
    return row


def page(
    session: Session,
    query: Select[Any],
    limit: int | None,
    offset: int = 0,
    *,
    columns: bool = False,
    key: Any = None,
) -> tuple[list[Any], int]:
    """The rows of an ordered ``query`` from ``offset``, at most ``limit`` of them (None:
    all), and the number of rows of the whole query (counted only when the page is full).
    A row is the query's first entity, or with ``columns`` a Row of all its columns.

    With ``key`` (a unique column of the rows, such as the primary key), a page past the
    first is found by its keys alone and only its own rows are read whole: the rows skipped
    are never sorted or read with their wide columns."""
    window = query.limit(limit).offset(offset)
    if key is not None and offset and limit is not None:
        keys = query.with_only_columns(key).limit(limit).offset(offset)
        window = query.where(key.in_(keys.scalar_subquery()))
    rows = list(session.execute(window).all() if columns else session.scalars(window))
    if limit is None or (len(rows) < limit and (rows or offset == 0)):
        return rows, offset + len(rows)
    count = session.scalar(select(func.count()).select_from(query.order_by(None).subquery()))
    return rows, int(count or 0)


def brief(err: BaseException) -> str:
    """``"Type: first line of the message"`` of a database error (without SQLAlchemy's
    statement and parameters)."""
    cause = getattr(err, "orig", None) or err
    lines = str(cause).strip().splitlines()
    return f"{type(cause).__name__}: {lines[0] if lines else 'no message'}"
