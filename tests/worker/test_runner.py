"""worker.runner.supervise on runs made here: a normal run's points and result arrive, and
a run that raises, segfaults, holds the interpreter lock past its limit or ignores a cancel
is ended as stated; worker.warmup.check_available names what a worker lacks."""

from __future__ import annotations

import ctypes
import fcntl
import math
import os
import time
from multiprocessing.reduction import ForkingPickler

import pytest

from faceoff.core.queue import CANCEL_GRACE_SECONDS, kill_after
from faceoff.worker import runner
from faceoff.worker.warmup import UNAVAILABLE, check_available

F_GETPIPE_SZ = 1032  # fcntl: a pipe's capacity in bytes (Linux)
LOADED = 3.0  # slack of the timing asserts on a loaded machine


def test_a_run_sends_its_points_and_its_result():
    def run(send, should_stop, record):
        for seq in range(5):
            send({"seq": seq})
        return "converged", 0.5

    points = []
    outcome = runner.supervise(run, points.append, lambda: False, max_seconds=10)
    assert points == [{"seq": seq} for seq in range(5)]
    assert (outcome.reason, outcome.wall_s, outcome.error, outcome.ended) == (
        "converged",
        0.5,
        None,
        None,
    )


def test_an_error_comes_back_with_its_traceback():
    def run(send, should_stop, record):
        raise ValueError("no luck")

    outcome = runner.supervise(run, print, lambda: False, max_seconds=10)
    assert outcome.error == "ValueError: no luck"
    assert "Traceback" in outcome.traceback and outcome.ended is None


def test_a_segfault_is_named_and_the_supervisor_carries_on():
    def run(send, should_stop, record):
        send("before")
        ctypes.string_at(0)
        return "converged", 0.0

    points = []
    outcome = runner.supervise(run, points.append, lambda: False, max_seconds=10)
    assert points == ["before"]
    assert outcome.ended == "crashed"
    assert outcome.error == "the solver's process was killed by signal SIGSEGV (Segmentation fault)"


def test_a_run_holding_the_lock_is_killed_past_its_limit():
    def run(send, should_stop, record):
        record[runner.CREATED] = time.perf_counter()
        send("first")
        ctypes.PyDLL(None).sleep(60)  # holds the interpreter lock
        return "converged", 0.0

    points = []
    began = time.monotonic()
    outcome = runner.supervise(run, points.append, lambda: False, max_seconds=0.5)
    took = time.monotonic() - began
    assert (outcome.ended, points) == ("time_limit", ["first"])
    assert kill_after(0.5) <= outcome.budget < kill_after(0.5) + LOADED
    assert took < kill_after(0.5) + LOADED


def test_evaluation_time_is_not_budget():
    def run(send, should_stop, record):
        record[runner.CREATED] = time.perf_counter()
        record[runner.EVALUATING] = time.perf_counter()  # evaluating a point for 2 s
        time.sleep(2.0)
        record[runner.EVALUATED], record[runner.EVALUATING] = 2.0, math.nan
        return "max_seconds", 2.0

    outcome = runner.supervise(run, print, lambda: False, max_seconds=0.5)
    assert (outcome.ended, outcome.reason) == (None, "max_seconds")


def test_a_finished_run_waiting_on_a_busy_supervisor_is_not_killed():
    """The supervisor writes points to a database that has gone silent (a write takes
    seconds): the run, done within its budget, waits with its result in a full pipe, and
    that wait is not budget."""
    reader, writer = os.pipe()
    capacity = fcntl.fcntl(writer, F_GETPIPE_SZ)
    os.close(reader)
    os.close(writer)
    overhead = len(ForkingPickler.dumps(b"x" * capacity)) - capacity
    # its 4-byte length is written alone, to a page of the pipe; the message fills the rest
    filler = b"x" * (capacity - os.sysconf("SC_PAGE_SIZE") - overhead)

    def run(send, should_stop, record):
        record[runner.CREATED] = time.perf_counter()
        for point in (b"first", filler):  # as Recorder sends them: evaluation time
            began = record[runner.EVALUATING] = time.perf_counter()
            send(point)
            record[runner.EVALUATED] += time.perf_counter() - began
            record[runner.EVALUATING] = math.nan
        return "max_seconds", 0.1  # its result waits: the pipe is full

    received = []

    def on_point(point):
        received.append(len(point))
        if len(received) == 1:
            time.sleep(kill_after(0.2) + 1.0)  # one write, past the run's limit

    outcome = runner.supervise(run, on_point, lambda: False, max_seconds=0.2)
    assert received == [5, len(filler)]
    assert (outcome.ended, outcome.reason, outcome.error) == (None, "max_seconds", None)


@pytest.mark.parametrize("obeys", [True, False])
def test_a_cancel_stops_the_run_or_kills_it(obeys):
    def run(send, should_stop, record):
        send("first")
        while not (obeys and should_stop()):
            pass
        return "cancelled", 0.0

    asked = []

    def should_stop():
        if not asked:
            asked.append(time.monotonic())
        return True

    outcome = runner.supervise(run, print, should_stop, max_seconds=60)
    latency = time.monotonic() - asked[0]
    if obeys:
        assert (outcome.ended, outcome.reason) == (None, "cancelled")
    else:
        assert outcome.ended == "cancelled"
        assert latency >= CANCEL_GRACE_SECONDS
    assert latency < CANCEL_GRACE_SECONDS + LOADED


def test_check_available_names_the_missing_plugin_and_the_failed_warm_up(monkeypatch):
    with pytest.raises(RuntimeError, match=r"plug-in lab\.nan is not installed on worker h1 \("):
        check_available("lab.nan", "h1")
    monkeypatch.setitem(UNAVAILABLE, "agd", "its warm-up crashed: ... SIGSEGV")
    with pytest.raises(RuntimeError, match=r"'agd' is not available on worker h1: its warm-up"):
        check_available("agd", "h1")
    check_available("lbfgs", "h1")


def test_a_callback_peers_replay_is_not_budget():
    """A callback peer's run that stops at max_seconds is then replayed untraced for about
    as long (solvers.peers.refit.replay): the replay is published as time outside the
    budget, so the supervisor does not kill the run, and every point arrives once, timed by
    the replay."""
    import numpy as np

    from faceoff.solvers.catalogue import get_spec
    from faceoff.solvers.problem import build_problem
    from faceoff.solvers.run import solve, warmup
    from faceoff.solvers.trace import MAX_SECONDS, StopRules

    reason = get_spec("lightning.sdca").unavailable_reason()
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    rng = np.random.default_rng(0)
    A = rng.standard_normal((4000, 200))
    problem = build_problem(A, np.sign(A[:, 0] + 0.5 * rng.standard_normal(4000)), "squared",
                            l2=1e-9)  # fmt: skip
    max_seconds = 3.0
    warmup("lightning.sdca")  # as a worker's main process does before it forks a run

    def run(send, should_stop, record):
        stop = StopRules(max_epochs=1e6, max_seconds=max_seconds, tol=0.0, should_stop=should_stop)
        result = solve(problem, "lightning.sdca", None, stop, on_point=send, shared=record)
        return result.stop_reason, result.wall_s

    points = []
    outcome = runner.supervise(run, points.append, lambda: False, max_seconds=max_seconds)
    assert (outcome.ended, outcome.error, outcome.reason) == (None, None, MAX_SECONDS)
    assert outcome.wall_s > kill_after(max_seconds)  # the replay ran past the kill budget
    assert [p.seq for p in points] == list(range(len(points))) and len(points) > 10
    assert all(p.extras.get("replayed", True) for p in points)


def test_warmup_skip_leaves_out_the_named_solvers_and_ignores_unknown_names(caplog):
    from faceoff.solvers.catalogue import catalogue
    from faceoff.worker.warmup import wanted

    assert wanted("") == list(catalogue())
    names = wanted(" agd, no_such_solver ,")
    assert names == [name for name in catalogue() if name != "agd"]
    assert "no_such_solver" in caplog.text
