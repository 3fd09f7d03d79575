"""A peer's recorded time is its real speed (issue 41): a callback trace is timed by an
untraced replay of its fit, a refit trace by its fits' own times.

A fake library shows the mechanism with fixed amounts of work (so that a loaded machine
slows both sides alike): its fit pays for every time its iterate was read (as a real library
pays for the caches an evaluation evicted), so the traced clock, which stops only while our
callback runs, is about 4 times its untraced speed (it fails on the clock the service had
before the replay). Then every real peer × loss: every callback point replayed, in order,
and every refit point timed by its own fit. The real peers' ratios to their untraced fits
are speed, so they are measured in bench/run_peer_clock.py, not here: on a shared core
their timings moved by 2-10× between runs of this file."""

from __future__ import annotations

import numpy as np
import pytest

from faceoff.solvers.catalogue import catalogue
from faceoff.solvers.peers import refit
from faceoff.solvers.peers.refit import Progress, timed_fit, traced_fit
from faceoff.solvers.problem import build_problem
from faceoff.solvers.run import solve
from faceoff.solvers.trace import CANCELLED, CONVERGED, Recorder, StopRules
from tests.solvers.problems import make_k_problem, make_problem
from tests.solvers.test_peers import PEERS, _require

STEPS = 200  # the fake library's steps; it calls back after each
STEP_WORK = 20_000  # a step's work: loop iterations
READ_WORK = 10 * STEP_WORK  # what the next step pays after the iterate was read


def _work(iterations: int) -> int:
    total = 0
    for i in range(iterations):
        total += i
    return total


class _Library:
    """A deterministic library: coef_ moves towards 1 by a seeded step; reading coef_ (a
    trace point's evaluation) makes its next step do READ_WORK more."""

    def __init__(self, callback=None, seed=0, jitter=False):
        self.callback, self.seed, self.jitter = callback, seed, jitter
        self._coef = np.zeros(3)
        self._read = False

    @property
    def coef_(self):
        self._read = True
        return self._coef

    def fit(self, A, b):
        rng = np.random.default_rng(None if self.jitter else self.seed)
        for _ in range(STEPS):
            _work(STEP_WORK + (READ_WORK if self._read else 0))
            self._read = False
            self._coef += 0.05 * (1.0 - self._coef) * rng.uniform(0.5, 1.0)
            if self.callback is not None and self.callback(self) is not None:
                break
        return self


def _fake_run(jitter=False, on_point=None, should_stop=None):
    """A traced fit of the fake library through the service's path (``refit.traced_fit``);
    an epoch is 10 steps."""
    problem = build_problem(np.eye(3), np.ones(3), "squared", l2=0.1)
    stop = StopRules(max_epochs=1e9, tol=0.0, should_stop=should_stop)
    recorder = Recorder(problem, stop, on_point)
    check = 0.0 if should_stop is not None else 0.25  # a cancel looked at every call
    progress = Progress(
        recorder, lambda e: e.coef_.copy(), lambda calls: (calls + 1) / 10, check_seconds=check
    )
    recorder.start()
    progress.start((3,))

    def build(callback):
        return _Library(callback, jitter=jitter)

    reason = traced_fit(progress, build, None, problem.b)
    return reason, recorder


def test_a_callback_trace_is_timed_by_its_untraced_replay(monkeypatch):
    """The fake library's traced clock is ≥ 2× its untraced fit (each point read its
    iterate); the recorded times are the replay's: within 1.3× of the untraced fit, and
    each point's time is where the replay passed that call. The old clock is kept as
    ``traced_s``. Best of 3 on each side (the replay repeated as a short one is)."""
    monkeypatch.setattr(refit, "REPEAT_BELOW_S", 60.0)
    seen = []
    reason, recorder = _fake_run(on_point=seen.append)
    points = recorder.points
    untraced = min(timed_fit(_Library(), None, None) for _ in range(3))
    assert reason == "finished" and len(points) > 30
    assert seen == points  # each point handed on once, in order, after the replay
    final = points[-1]
    assert final.extras["traced_s"] >= 2.0 * untraced  # what the old clock recorded
    assert 0.5 * untraced <= final.time_s <= 1.3 * untraced
    assert all("traced_s" in p.extras and "replayed" not in p.extras for p in points[1:])
    times = [p.time_s for p in points]
    assert times == sorted(times)
    # the time of a point after s steps is s steps of work, not s steps and the reads before
    middle = points[len(points) // 2]
    steps = round(middle.epoch * 10)
    assert middle.time_s <= 1.3 * untraced * steps / STEPS + 0.005
    assert recorder.solver_time == final.time_s


def test_a_replay_that_does_not_reach_the_traced_iterate_keeps_the_traced_clock():
    """An unseeded library is not replayed on trust: its points keep the clock they were
    recorded on, marked ``replayed: False``."""
    reason, recorder = _fake_run(jitter=True)
    assert reason == "finished"
    assert all(p.extras.get("replayed") is False for p in recorder.points[1:])
    assert all(p.time_s == p.extras["traced_s"] for p in recorder.points[1:])


def test_a_cancelled_callback_run_is_not_replayed():
    """A cancel ends the run at once: its points keep their traced clock, no replay."""
    asked = []

    def after_the_first_look():
        asked.append(True)
        return len(asked) > 1

    reason, recorder = _fake_run(should_stop=after_the_first_look)
    assert reason == CANCELLED and len(recorder.points) == 2
    assert all(p.extras.get("replayed") is False for p in recorder.points[1:])


def _cases(trace_mode: str) -> list:
    """Each peer traced by ``trace_mode`` × each loss it takes."""
    return [
        pytest.param(name, loss, id=f"{name}-{loss}")
        for name, spec in PEERS.items()
        if spec.trace_mode == trace_mode
        for loss in spec.losses
    ]


@pytest.mark.parametrize("solver,loss", _cases("callback"))
def test_every_callback_point_of_a_real_peer_is_replayed(solver, loss):
    """Each callback peer × loss, binary and one-vs-rest: the replay reached the traced
    iterate (no point left on the traced clock), times never decrease, and the final time
    is the replay's."""
    _require(catalogue()[solver])
    for dataset in ("sparse", "dense_k"):
        if dataset == "dense_k":
            problem = make_k_problem(dataset, loss, "l2", "ovr")
        else:
            problem = make_problem(dataset, loss, "l2")
        result = solve(problem, solver, None, StopRules(max_epochs=30, tol=1e-9), seed=3)
        points = result.trace
        assert len(points) > 5, (dataset, result.stop_reason)
        assert all(p.extras.get("replayed", True) for p in points), dataset
        assert all("traced_s" in p.extras for p in points[1:]), dataset
        times = [p.time_s for p in points]
        assert times == sorted(times), dataset


@pytest.mark.parametrize("solver,loss", _cases("refit"))
def test_a_refit_point_is_timed_by_its_own_fit(solver, loss):
    """Each refit peer × loss: a point's time is its fit's own (the fastest of the repeats
    of a short fit), or the previous point's when a larger budget's fit measured faster;
    never the run's cumulative time, never the evaluations'."""
    spec = catalogue()[solver]
    _require(spec)
    problem = make_problem("sparse", loss, spec.penalties[0])  # l2, or l1 for an l1-only peer
    result = solve(problem, solver, None, StopRules(max_epochs=64, tol=1e-9), seed=3)
    shown = 0.0
    for point in result.trace[1:]:
        shown = max(shown, point.extras["fit_s"])
        assert point.time_s == shown
    assert result.final.time_s < result.wall_s
    assert result.stop_reason in (CONVERGED, "finished", "max_epochs")


def test_a_library_error_still_hands_on_the_points_it_recorded():
    """A fit that raises half-way: the points recorded before reach on_point (on the traced
    clock), then the error goes on."""

    class Failing(_Library):
        def fit(self, A, b):
            for _ in range(50):
                _work(STEP_WORK)
                self.callback(self)
            raise RuntimeError("the library gave up")

    problem = build_problem(np.eye(3), np.ones(3), "squared", l2=0.1)
    seen = []
    recorder = Recorder(problem, StopRules(max_epochs=1e9, tol=0.0), seen.append)
    progress = Progress(recorder, lambda e: e.coef_.copy(), lambda calls: (calls + 1) / 10)
    progress.start((3,))
    with pytest.raises(RuntimeError, match="gave up"):
        traced_fit(progress, Failing, None, problem.b)
    assert len(seen) > 5 and seen == recorder.points
    assert all(p.extras.get("replayed") is False for p in seen[1:])
