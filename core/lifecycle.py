"""A job's life: the events that move it between its states, the allowed transitions as a
table, and :func:`apply`, the one way to change a job's status.

The states are the values of ``jobs.status`` (core.models). A job is submitted ``queued``
(:data:`INITIAL`); a worker's claim makes it ``running``; its run ends it ``succeeded``,
``failed`` or ``cancelled`` (halted at a cancellation request), the terminal states that no
transition leaves. A user's cancel ends a queued job at once and flags a running one; the
reaper requeues a running job whose worker was lost (and unqueues it if its message cannot
be sent). :data:`TRANSITIONS` is the whole table.

Every change is one conditional ``UPDATE ... WHERE id = :job AND status = :source`` (with
the transition's own requirement, e.g. a claim needs no cancellation requested), so of
two processes racing to move a job one wins and the other changes nothing: a job is
claimed by one delivery of its message, requeued by one reaper. A run's writes
(``progress``: heartbeats, trace summaries; its end) also give the run's ``attempt``
(``AND attempts = :attempt``), so a run the reaper has superseded changes nothing. Callers
add their own conditions (the reaper: a stale heartbeat) and their own column values (a
run's error, its machine); the status and the columns a transition sets itself
(:attr:`Transition.sets`) come from the table only.

Commit convention: functions that change a job's state take the caller's Session and never
commit; whoever opens the session owns the transaction and commits it. An API route commits
after calling :mod:`faceoff.core.jobs`; each function of :mod:`faceoff.worker.store` is
one transaction (``core.db.session_scope``), retried whole, and the task and the reaper
call those.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, cast

from sqlalchemy import ColumnElement, CursorResult, and_, case, literal, null, or_, update
from sqlalchemy.orm import Session

from faceoff.core.models import CANCELLED, FAILED, QUEUED, RUNNING, SUCCEEDED, Job, utcnow


class Event(enum.StrEnum):
    """What happens to a job."""

    CLAIM = "claim"  # a worker takes the queued job for a new attempt
    CANCEL = "cancel"  # a user cancels: a queued job at once, a running one is flagged
    PROGRESS = "progress"  # the run writes its heartbeat, trace summary or identity
    SUCCEED = "succeed"  # the run ended normally (converged, or a budget ran out)
    FAIL = "fail"  # the run failed, diverged or was lost too often
    HALT = "halt"  # the run stopped at its cancellation request
    REQUEUE = "requeue"  # the reaper takes back a job whose worker was lost
    UNQUEUE = "unqueue"  # the reaper undoes a requeue whose message could not be sent


class _Now:
    """The time of the transition, in :attr:`Transition.sets`."""

    def __repr__(self) -> str:
        return "NOW"


NOW = _Now()
# a claimed run starts from nothing: what an earlier attempt recorded is cleared
_FRESH_RUN = {
    "attempts": Job.attempts + 1,
    "started_at": NOW,
    "heartbeat_at": NOW,
    "finished_at": None,
    "stop_reason": None,
    "error": None,
    "n_points": 0,
    "epoch": None,
    "time_s": None,
    "primal": None,
    "gap": None,
    "trace_mode": None,
    "wall_s": None,
    "auto": None,
    "load_end": None,
    "concurrency": None,
    "concurrency_max": None,
    "waiting_for_host": None,  # a worker of its host took it
}


@dataclass(frozen=True)
class Transition:
    """``event`` moves a job from ``source`` to ``target`` when the job's columns hold the
    values in ``requires``, and sets the columns in ``sets`` (:data:`NOW`: the time of the
    transition)."""

    source: str
    event: Event
    target: str
    sets: Mapping[str, Any] = field(default_factory=dict)
    requires: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sets", MappingProxyType(dict(self.sets)))
        object.__setattr__(self, "requires", MappingProxyType(dict(self.requires)))


INITIAL = QUEUED
TRANSITIONS: tuple[Transition, ...] = (
    Transition(QUEUED, Event.CLAIM, RUNNING, _FRESH_RUN, requires={"cancel_requested": False}),
    Transition(
        QUEUED,
        Event.CANCEL,
        CANCELLED,
        {"cancel_requested": True, "stop_reason": "cancelled", "finished_at": NOW},
    ),
    Transition(RUNNING, Event.CANCEL, RUNNING, {"cancel_requested": True}),
    Transition(RUNNING, Event.PROGRESS, RUNNING),
    Transition(RUNNING, Event.SUCCEED, SUCCEEDED, {"finished_at": NOW}),
    Transition(RUNNING, Event.FAIL, FAILED, {"finished_at": NOW}),
    Transition(RUNNING, Event.HALT, CANCELLED, {"finished_at": NOW}),
    Transition(RUNNING, Event.REQUEUE, QUEUED, {"dispatched_at": NOW}),
    Transition(QUEUED, Event.UNQUEUE, RUNNING),
)
_BY_EVENT: dict[Event, tuple[Transition, ...]] = {
    event: tuple(t for t in TRANSITIONS if t.event is event) for event in Event
}


def transition(source: str, event: Event) -> Transition:
    """The transition ``event`` makes from state ``source``; ValueError if not allowed."""
    found = [t for t in _BY_EVENT[event] if t.source == source]
    if not found:
        sources = ", ".join(t.source for t in _BY_EVENT[event])
        raise ValueError(f"{event.value} does not leave {source!r}, only {sources}")
    return found[0]


def _value(column: str, value: Any, now: Any) -> Any:
    """``value`` as an SQL expression for ``column`` (NOW: ``now``)."""
    if value is NOW:
        value = now
    if isinstance(value, ColumnElement):
        return value
    if value is None:
        return null()
    return literal(value, type_=getattr(Job, column).type)


def _by_source(column: str, values: Mapping[str, Any], sources: int, now: Any) -> Any:
    """What ``column`` becomes, from {source state: its value}: the value if the event
    leaves one state (``sources``), else a CASE on the status in which the states without
    a value keep the column as it is."""
    if sources == 1:
        return _value(column, next(iter(values.values())), now)
    whens = [(Job.status == source, _value(column, v, now)) for source, v in values.items()]
    return case(*whens, else_=getattr(Job, column))


def _holds(column: str, value: Any) -> ColumnElement[bool]:
    """The condition that ``column`` is ``value``."""
    attribute = getattr(Job, column)
    return attribute.is_(value) if value is None or isinstance(value, bool) else attribute == value


def apply(
    session: Session,
    job_id: int,
    event: Event,
    *,
    attempt: int | None = None,
    where: Iterable[ColumnElement[bool]] = (),
    values: Mapping[str, Any] | None = None,
) -> bool:
    """Apply ``event`` to job ``job_id`` in one conditional UPDATE; whether it changed the
    job (False: the job is missing, in a state the event does not leave, or does not meet
    a condition). Does not commit (module doc).

    ``attempt``: only if the job is in that attempt (a run's writes); ``where``: further
    conditions; ``values``: further columns to set, which may not be the status or a
    column the transition sets.
    """
    transitions = _BY_EVENT[event]
    values = dict(values or {})
    owned = {"status"}.union(*(t.sets for t in transitions)) & set(values)
    if owned:
        raise ValueError(f"{event.value} sets {sorted(owned)} itself; do not pass them")
    now = utcnow()
    allowed = or_(
        *(
            and_(
                Job.status == t.source,
                *(_holds(column, value) for column, value in t.requires.items()),
            )
            for t in transitions
        )
    )
    conditions = [Job.id == job_id, allowed, *where]
    if attempt is not None:
        conditions.append(Job.attempts == attempt)
    targets = {t.source: t.target for t in transitions}
    sets = {"status": _by_source("status", targets, len(transitions), now)}
    for column in sorted(set().union(*(t.sets for t in transitions))):
        given = {t.source: t.sets[column] for t in transitions if column in t.sets}
        sets[column] = _by_source(column, given, len(transitions), now)
    statement = (
        update(Job)
        .where(*conditions)
        .values(**sets, **values)
        .execution_options(synchronize_session=False)
    )
    return bool(cast(CursorResult[Any], session.execute(statement)).rowcount)
