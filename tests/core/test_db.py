"""core.db: the read-only session and the paging of list queries."""

from __future__ import annotations

import signal

import pytest
from sqlalchemy import select, text

from faceoff.core.db import connection, page, read_session, session_scope
from faceoff.core.models import Dataset, TracePoint
from tests.dashboard import factories


def test_a_read_session_refuses_to_write(sqlite_url):
    factories.add_dataset(sqlite_url)
    with read_session(sqlite_url) as session:
        session.add(Dataset(name="sneaky", source={}))
        with pytest.raises(RuntimeError, match="read-only"):
            session.flush()
    with read_session(sqlite_url) as session:
        assert session.query(Dataset).count() == 1
        assert session.query(TracePoint).count() == 0


def test_a_read_session_never_commits_what_it_changed(sqlite_url):
    dataset_id = factories.add_dataset(sqlite_url)
    with read_session(sqlite_url) as session:
        session.get(Dataset, dataset_id).name = "renamed"
        with pytest.raises(RuntimeError, match="read-only"):
            session.commit()
    with session_scope(sqlite_url) as session:
        assert session.get(Dataset, dataset_id).name == "synthetic-300x40"


def test_page_counts_every_row_whatever_the_page(database_url):
    for i in range(5):
        factories.add_dataset(database_url, f"d{i}")
    query = select(Dataset).order_by(Dataset.id)

    def names(found: list[Dataset]) -> list[str]:
        return [d.name for d in found]

    with session_scope(database_url) as session:
        found, count = page(session, query, 2)
        assert names(found) == ["d0", "d1"] and count == 5
        found, count = page(session, query, 2, offset=4)
        assert names(found) == ["d4"] and count == 5  # a partial page needs no count
        found, count = page(session, query, 10, offset=7)
        assert found == [] and count == 5  # past the end: counted
        found, count = page(session, query, None, offset=1)
        assert names(found) == ["d1", "d2", "d3", "d4"] and count == 5
        assert page(session, query.where(Dataset.name == "none"), 3) == ([], 0)


class Interrupted(Exception):
    """What a signal handler raises, as Celery's soft time limit does."""


@pytest.mark.parametrize("scope", ["session", "connection"])
def test_a_statement_interrupted_by_a_signal_keeps_its_error_and_drops_its_connection(
    postgres_url, scope
):
    """A soft time limit's signal arrives while PostgreSQL is answering: the rollback of
    the interrupted connection fails (it is mid-answer), yet the caller sees the signal's
    error, not the rollback's, and the next session gets a working connection. The same
    for a bare connection (the worker's cancel checks: before, their ``with connect()``
    answered "another command is already in progress" instead of the soft time limit)."""

    def interrupt(_signum, _frame):
        raise Interrupted

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        with pytest.raises(Interrupted):
            if scope == "session":
                with session_scope(postgres_url) as session:
                    session.execute(text("SELECT pg_sleep(3)"))
            else:
                with connection(postgres_url) as conn:
                    conn.execute(text("SELECT pg_sleep(3)"))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    for _ in range(3):  # whichever pooled connection it gets
        with session_scope(postgres_url) as session:
            assert session.execute(text("SELECT 1")).scalar() == 1
        with connection(postgres_url) as conn:
            assert conn.execute(text("SELECT 1")).scalar() == 1
