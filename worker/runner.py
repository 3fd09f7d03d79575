"""A solver run in a child process that its supervisor can always end.

:func:`supervise` forks the calling process (the pool process, with the job's problem
built and the solver warmed up) and runs the solver in the child; the parent supervises it
from a loop that never waits on the child's interpreter lock: it receives the trace points
over a pipe and hands them to ``on_point`` (the trace writer), reads the cancel check, and
reads the run's clock from shared memory. The child dies with its parent
(``PR_SET_PDEATHSIG``), so a pool process that is killed leaves no run behind.

- **Cancel**: once ``should_stop()`` says so, the child's own stop rule says so too (a
  shared flag its ``should_stop`` reads) and it has ``CANCEL_GRACE_SECONDS`` to stop and
  return; then it is killed. Either way the points it recorded are kept.
- **Time limit**: the run's budget counts the wall time since its recorder was made, less
  the time spent evaluating trace points (the recorder publishes both), which is never
  less than the solver clock; a child still running at :func:`core.queue.kill_after` of it
  is killed (half the documented allowance, ``core.queue.overshoot``, past its
  ``max_seconds``).
- **Crash**: a child that ends by a signal (a segfault) or without a word is described by
  its exit status (the child's Python stack at the crash goes to the worker's log); the
  parent carries on.
"""

from __future__ import annotations

import ctypes
import faulthandler
import gc
import math
import mmap
import os
import signal
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection, Pipe
from typing import Any

import numpy as np

from faceoff.core.queue import CANCEL_GRACE_SECONDS, kill_after

POLL_SECONDS = 0.05  # how often the supervisor looks at the cancel flag and the clock
EXIT_POLL_SECONDS = 0.002  # how often it looks whether a child that closed its pipe has ended
EXIT_SECONDS = 5.0  # a child that has sent its result is killed if still there this long after
PR_SET_PDEATHSIG = 1
# the run's shared record (float64 slots)
CANCEL, CREATED, EVALUATED, EVALUATING = range(4)
SHARED_SLOTS = 4


def shared_record() -> np.ndarray:
    """A float64 array in memory shared with the children forked later: cancel flag,
    recorder creation time (perf_counter), seconds spent evaluating, start of the
    evaluation under way (NaN: none)."""
    buffer = mmap.mmap(-1, SHARED_SLOTS * 8)
    record = np.frombuffer(buffer, dtype=np.float64)
    record[:] = (0.0, math.nan, 0.0, math.nan)
    return record


def budget_used(record: np.ndarray, since: float) -> float:
    """Seconds of the run's budget spent: wall time since the recorder was made (or
    ``since``, before it is) less the time spent evaluating trace points."""
    now = time.perf_counter()
    created = record[CREATED]
    start = since if math.isnan(created) else float(created)
    evaluating = record[EVALUATING]
    current = 0.0 if math.isnan(evaluating) else max(0.0, now - float(evaluating))
    return max(0.0, now - start - float(record[EVALUATED]) - current)


def signal_name(number: int) -> str:
    """``SIGSEGV (Segmentation fault)``: a signal's name and description."""
    try:
        name = signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
    described = signal.strsignal(number)
    return f"{name} ({described})" if described else name


@dataclass
class Outcome:
    """How a supervised run ended: ``reason`` and ``wall_s`` (and ``x``, the final
    iterate, if the run returns one) as the run returned them, or ``error`` (and the
    child's ``traceback``) when it raised; ``ended`` says why the supervisor ended it
    ("cancelled", "time_limit") or how it died ("crashed"), with ``budget`` the seconds of
    budget it had used then. A run killed after it returned keeps its ``x``."""

    reason: str | None = None
    wall_s: float | None = None
    x: np.ndarray | None = None  # the final iterate, when the run returned one with its end
    error: str | None = None
    traceback: str | None = None
    ended: str | None = None
    budget: float = 0.0


# returns (stop reason, wall seconds) or (stop reason, wall seconds, final iterate x)
Run = Callable[[Callable[[Any], None], Callable[[], bool], np.ndarray], tuple[Any, ...]]


def _die_with_parent(parent: int) -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux: the pool process ends its child itself
        pass
    if os.getppid() != parent:
        os._exit(1)


def _stop_budget(record: np.ndarray) -> None:
    """The run has returned: the time its last word waits in a full pipe (a supervisor busy
    writing points to a slow database) is not budget, so it is never killed for it."""
    record[EVALUATING] = time.perf_counter()


def _child(run: Run, sender: Connection, record: np.ndarray, parent: int) -> None:
    """The child's whole life: run, send the outcome, exit without cleaning up what it
    shares with its parent (database connections, the broker's)."""
    code = 0
    gc.freeze()  # a collection would touch, and so copy, every page of the parent's objects
    try:
        _die_with_parent(parent)
        for number in (signal.SIGTERM, signal.SIGINT, signal.SIGQUIT, signal.SIGUSR1):
            signal.signal(number, signal.SIG_DFL)
        try:  # a crash's Python stack in the worker's log (fd 2: sys.stderr may be a proxy)
            faulthandler.enable(file=2, all_threads=False)
        except (OSError, ValueError, RuntimeError):
            pass
        try:
            ended = run(sender.send, lambda: bool(record[CANCEL]), record)
            last: tuple = ("end", *ended)
        except BaseException as err:
            last = ("error", f"{type(err).__name__}: {err}", traceback.format_exc())
        _stop_budget(record)
        sender.send(last)
        sender.close()
    except BaseException:
        code = 1
        try:
            os.write(2, f"faceoff run process failed: {traceback.format_exc()}".encode())
        except OSError:
            pass
    finally:
        os._exit(code)


def _reap_later(pid: int) -> None:
    """Reap a child that has sent its result and is exiting, from a thread; one that has
    not ended within EXIT_SECONDS is killed."""

    def reap() -> None:
        deadline = time.monotonic() + EXIT_SECONDS
        while _status(pid, block=False) is None:
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                _status(pid, block=True)
                return
            time.sleep(EXIT_POLL_SECONDS)

    threading.Thread(target=reap, name=f"reap-{pid}", daemon=True).start()


def _ended(outcome: Outcome, message: tuple) -> None:
    """Take the run's ``("end", reason, wall_s[, x])`` into ``outcome``."""
    outcome.reason, outcome.wall_s = message[1], message[2]
    if len(message) > 3:
        outcome.x = message[3]


def _drain(receiver: Connection, on_point: Callable[[Any], None], outcome: Outcome) -> None:
    """Hand the points still in the pipe of a killed child to ``on_point`` (and its end,
    had it sent one, to ``outcome``)."""
    try:
        while receiver.poll(0):
            message = receiver.recv()
            kind = message[0] if isinstance(message, tuple) and message else None
            if kind == "end":
                _ended(outcome, message)
            elif kind != "error":
                on_point(message)
    except (EOFError, OSError, ValueError, TypeError, AttributeError):
        pass  # the end of the pipe, or a message cut short by the kill


def _status(pid: int, block: bool) -> int | None:
    """The child's wait status once it has ended (reaped), else None."""
    done, status = os.waitpid(pid, 0 if block else os.WNOHANG)
    return status if done == pid else None


def supervise(
    run: Run,
    on_point: Callable[[Any], None],
    should_stop: Callable[[], bool],
    max_seconds: float,
) -> Outcome:
    """Run ``run(send_point, should_stop, record)`` in a forked child, which returns
    (stop reason, wall seconds[, final iterate]) or raises; supervise it until it ends
    (module doc)."""
    record = shared_record()
    receiver, sender = Pipe(duplex=False)
    started = time.perf_counter()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child never returns
        receiver.close()
        _child(run, sender, record, parent)
    sender.close()
    outcome = Outcome()
    status: int | None = None
    cancel_by: float | None = None
    limit = kill_after(max_seconds)
    next_look = started
    try:
        open_pipe = True
        while status is None or open_pipe:
            if open_pipe and receiver.poll(POLL_SECONDS):
                try:
                    message = receiver.recv()
                except (EOFError, OSError, ValueError, TypeError, AttributeError):
                    open_pipe = False  # ended, or killed in the middle of a message
                    continue
                kind = message[0] if isinstance(message, tuple) and message else None
                if kind == "end":
                    _ended(outcome, message)
                elif kind == "error":
                    outcome.error, outcome.traceback = message[1], message[2]
                else:
                    on_point(message)
                if kind in ("end", "error") and outcome.ended is None:
                    break  # its last word, after every point: it is exiting
                if time.perf_counter() < next_look:
                    continue  # drain the points waiting before the next look
            elif not open_pipe:  # the child is exiting: look again soon
                time.sleep(EXIT_POLL_SECONDS)
            next_look = time.perf_counter() + POLL_SECONDS
            if status is None:
                status = _status(pid, block=False)
            if status is not None or outcome.ended is not None:
                continue
            now = time.perf_counter()
            if cancel_by is None and should_stop():
                record[CANCEL] = 1.0
                cancel_by = now + CANCEL_GRACE_SECONDS
            used = budget_used(record, started)
            if cancel_by is not None and now >= cancel_by:
                outcome.ended, outcome.budget = "cancelled", used
                os.kill(pid, signal.SIGKILL)
            elif used >= limit:
                outcome.ended, outcome.budget = "time_limit", used
                os.kill(pid, signal.SIGKILL)
    finally:
        if status is None and (outcome.reason is not None or outcome.error is not None):
            _reap_later(pid)  # not waiting for its memory to be released
        elif status is None:  # the supervisor was interrupted (a soft time limit)
            os.kill(pid, signal.SIGKILL)
            _status(pid, block=True)
            _drain(receiver, on_point, outcome)  # the points sent before it was killed are kept
        receiver.close()
    said = outcome.reason is not None or outcome.error is not None
    if outcome.ended is None and not said and status is not None:  # it died without a word
        outcome.ended, outcome.budget = "crashed", budget_used(record, started)
        if os.WIFSIGNALED(status):
            outcome.error = (
                f"the solver's process was killed by signal {signal_name(os.WTERMSIG(status))}"
            )
        else:
            outcome.error = (
                f"the solver's process exited with code {os.waitstatus_to_exitcode(status)} "
                "without a result"
            )
    return outcome
