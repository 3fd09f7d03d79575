"""core.lifecycle: the transition table, and every (state, event) pair applied to a real
job on each database: an allowed one changes the row as the table says, the others change
nothing, and a run's write in another attempt changes nothing either."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.sql.elements import ColumnElement

from faceoff.core import lifecycle
from faceoff.core.db import session_scope
from faceoff.core.lifecycle import INITIAL, NOW, TRANSITIONS, Event, apply
from faceoff.core.models import STATUSES, TERMINAL, Dataset, Job

PAIRS = list(itertools.product(STATUSES, Event))
ALLOWED = {(t.source, t.event): t for t in TRANSITIONS}
BEFORE = datetime(2001, 2, 3, 4, 5, 6, tzinfo=UTC)
# every column a transition may set holds a value of its own before, so a reset shows
FULL = {
    "cancel_requested": False,
    "attempts": 1,
    "worker_host": "before:1",
    "started_at": BEFORE,
    "finished_at": BEFORE,
    "heartbeat_at": BEFORE,
    "dispatched_at": BEFORE,
    "stop_reason": "before",
    "error": "before",
    "n_points": 3,
    "epoch": 1.5,
    "time_s": 2.5,
    "primal": 0.5,
    "gap": 0.25,
    "trace_mode": "native",
    "wall_s": 3.5,
    "machine": {"host": "before"},
    "concurrency": 2,
    "concurrency_max": 2,
    "load_start": 0.5,
    "load_end": 0.75,
    "waiting_for_host": "before",
}
CALLER = {"pinned_host": "after"}  # a column no transition sets, given by the caller


def add_jobs(url: str, states: list[str], **values: Any) -> list[int]:
    """A job in each of ``states`` (in order), every column filled (FULL, ``values``)."""
    with session_scope(url) as session:
        dataset = Dataset(name="lifecycle", source={"kind": "sklearn"})
        jobs = [
            Job(
                dataset=dataset,
                spec={},
                spec_hash="0" * 64,
                objective_hash="0" * 64,
                solver="dual_cd",
                loss="logistic",
                status=state,
                **{**FULL, **values},
            )
            for state in states
        ]
        session.add_all(jobs)
        session.flush()
        return [job.id for job in jobs]


def rows(url: str) -> dict[int, dict[str, Any]]:
    """Every job's columns, by id; times in UTC (SQLite returns them naive)."""
    with session_scope(url) as session:
        out = {}
        for row in session.execute(select(Job.__table__)).mappings():
            out[row["id"]] = {key: _utc(value) for key, value in row.items()}
        return out


def _utc(value: Any) -> Any:
    if isinstance(value, datetime) and value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value


def expected(before: dict[str, Any], t: lifecycle.Transition) -> dict[str, Any]:
    """``before`` after transition ``t`` (NOW where it sets the time of the transition)."""
    after = {**before, **CALLER, "status": t.target}
    for column, value in t.sets.items():
        if isinstance(value, ColumnElement):  # attempts + 1
            after[column] = before[column] + 1
        else:
            after[column] = value
    return after


def test_the_table():
    """One transition per (state, event); every event leaves some state; the terminal
    states are the ones nothing leaves; every state is reachable from the initial one."""
    assert len(ALLOWED) == len(TRANSITIONS)
    assert {t.event for t in TRANSITIONS} == set(Event)
    assert {t.source for t in TRANSITIONS} | {t.target for t in TRANSITIONS} <= set(STATUSES)
    assert set(STATUSES) - {t.source for t in TRANSITIONS} == set(TERMINAL)
    reached, frontier = {INITIAL}, [INITIAL]
    while frontier:
        state = frontier.pop()
        for t in TRANSITIONS:
            if t.source == state and t.target not in reached:
                reached.add(t.target)
                frontier.append(t.target)
    assert reached == set(STATUSES)
    for state, event in PAIRS:
        if (state, event) in ALLOWED:
            assert lifecycle.transition(state, event) is ALLOWED[state, event]
        else:
            with pytest.raises(ValueError, match=f"{event.value} does not leave '{state}'"):
                lifecycle.transition(state, event)


def test_every_state_and_event(database_url):
    """Each (state, event) pair on a job of its own: the allowed ones change their job as
    the table says (and the caller's columns), the others change nothing; no job is
    changed by another's event."""
    ids = dict(zip(PAIRS, add_jobs(database_url, [state for state, _ in PAIRS]), strict=True))
    before = rows(database_url)
    since = datetime.now(UTC)
    for (state, event), job_id in ids.items():
        with session_scope(database_url) as session:
            applied = apply(session, job_id, event, attempt=1, values=CALLER)
        assert applied == ((state, event) in ALLOWED), (state, event)
    after = rows(database_url)
    for (state, event), job_id in ids.items():
        t = ALLOWED.get((state, event))
        if t is None:
            assert after[job_id] == before[job_id], (state, event)
            continue
        want = expected(before[job_id], t)
        for column, value in want.items():
            if value is NOW:
                assert since <= after[job_id][column] <= datetime.now(UTC), column
                want[column] = after[job_id][column]
        assert after[job_id] == want, (state, event)


def test_another_attempt_changes_nothing(database_url):
    """A run's write (any event, with its attempt) to a job in another attempt is
    refused in every state."""
    ids = add_jobs(database_url, list(STATUSES))
    before = rows(database_url)
    for job_id, event in itertools.product(ids, Event):
        with session_scope(database_url) as session:
            assert not apply(session, job_id, event, attempt=2, values=CALLER)
    assert rows(database_url) == before


def test_requirements_and_the_callers_conditions(database_url):
    """A queued job whose cancellation was requested is not claimed; a caller's condition
    that does not hold stops an allowed transition; a missing job is not an error."""
    requested, running = add_jobs(database_url, [INITIAL, "running"], cancel_requested=True)
    before = rows(database_url)
    with session_scope(database_url) as session:
        assert not apply(session, requested, Event.CLAIM)
        assert not apply(session, running, Event.REQUEUE, where=[Job.heartbeat_at.is_(None)])
        assert not apply(session, 12345, Event.CANCEL)
    assert rows(database_url) == before
    with session_scope(database_url) as session:  # what a claim does instead
        assert apply(session, requested, Event.CANCEL, where=[Job.cancel_requested.is_(True)])
    assert rows(database_url)[requested]["status"] == "cancelled"


def test_apply_does_not_commit(sqlite_url):
    """The caller owns the transaction: rolled back, the transition never happened."""
    (job_id,) = add_jobs(sqlite_url, [INITIAL])
    before = rows(sqlite_url)
    with session_scope(sqlite_url) as session:
        assert apply(session, job_id, Event.CLAIM)
        session.rollback()
    assert rows(sqlite_url) == before


@pytest.mark.parametrize(
    ("event", "values"),
    [(Event.FAIL, {"status": "succeeded"}), (Event.CLAIM, {"error": "x", "attempts": 9})],
)
def test_the_table_owns_the_status_and_what_a_transition_sets(sqlite_url, event, values):
    (job_id,) = add_jobs(sqlite_url, ["running"])
    with session_scope(sqlite_url) as session, pytest.raises(ValueError, match="itself"):
        apply(session, job_id, event, values=values)
