"""One-pass trace evaluation (solvers.evaluation) against the full one (Problem.evaluate),
and the evaluation-share cap of the trace grid (Recorder.due)."""

from __future__ import annotations

import time

import numpy as np
import pytest
import scipy.sparse as sp

from faceoff.data.synthetic import classification, regression
from faceoff.solvers import evaluation, trace
from faceoff.solvers.algorithms.dual_cd.method import DualCD
from faceoff.solvers.driver import run_chunked
from faceoff.solvers.evaluation import evaluate, full_pattern
from faceoff.solvers.losses import make_loss
from faceoff.solvers.penalties import ElasticNet
from faceoff.solvers.problem import Data, Problem
from faceoff.solvers.run import solve, warmup
from faceoff.solvers.trace import Recorder, StopRules

REL = 1e-12


def _problem(layout: str, loss: str, l1: float) -> Problem:
    if loss == "squared":
        A, b = regression(3000, 60, 1.0 if layout != "sparse" else 0.1, seed=3)
    else:
        A, b = classification(3000, 60, 1.0 if layout != "sparse" else 0.1, seed=3)
    if layout == "dense as csr":
        A = sp.csr_matrix(A)  # every entry stored: the dense kernel reads it
    return Problem(Data(A), b, make_loss(loss), ElasticNet(l1, 1e-3))


LAYOUTS = ["dense", "dense as csr", "sparse"]
CASES = [("logistic", 0.0), ("smooth_hinge", 1e-3), ("squared", 0.0)]


@pytest.fixture(params=[1, 3], ids=["1 thread", "3 threads"])
def threads(request, monkeypatch):
    """Run the sweep on 1 or 3 blocks of rows (3 > cores here: the split is exercised)."""
    monkeypatch.setattr(evaluation, "threads", lambda: request.param)
    monkeypatch.setattr(evaluation, "_MIN_NNZ_PER_THREAD", 1)


def _close(new, full):
    scale = max(1.0, abs(full.primal))
    assert new.primal == pytest.approx(full.primal, rel=REL, abs=REL)
    assert new.dual == pytest.approx(full.dual, rel=REL, abs=REL)
    assert abs(new.gap - full.gap) <= REL * scale
    assert new.nnz_x == full.nnz_x


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize(("loss", "l1"), CASES)
def test_matches_the_full_evaluation(layout, loss, l1, threads):
    problem = _problem(layout, loss, l1)
    assert full_pattern(problem.data) == (layout != "sparse")
    rng = np.random.default_rng(0)
    x = rng.normal(size=problem.n_features) * 0.3
    x[::4] = 0.0
    # a primal iterate: one sweep (Ax, y = φ'(Ax), Aᵀy)
    _close(evaluate(problem, x=x), problem.evaluate(x=x))
    # with the product the method has, and Aᵀφ'(Ax) (L-BFGS): no sweep
    Ax = problem.data.matvec(x)
    y = problem.dual_from_primal(x, Ax)
    _close(evaluate(problem, x=x, Ax=Ax), problem.evaluate(x=x))
    _close(evaluate(problem, x=x, Ax=Ax, ATy=problem.data.rmatvec(y)), problem.evaluate(x=x))
    # a dual iterate alone, and with the primal point kept beside it (dual_cd)
    y = 0.7 * y
    y[::5] = 0.0
    _close(evaluate(problem, y=y), problem.evaluate(y=y))
    kept = problem.primal_from_dual(y)
    _close(evaluate(problem, x=kept, y=y), problem.evaluate(y=y))
    _close(evaluate(problem, x=kept, y=y), problem.evaluate(x=kept, y=y))


def test_iterates_are_copied():
    problem = _problem("sparse", "logistic", 0.0)
    x = np.full(problem.n_features, 0.1)
    obj = evaluate(problem, x=x)
    x[:] = 5.0
    assert np.all(obj.x == 0.1)


@pytest.mark.parametrize("solver", ["dual_cd", "lbfgs", "saga"])
def test_every_trace_point_is_the_full_evaluation(solver, monkeypatch):
    """Each recorded point equals Problem.evaluate of the iterate the method handed over."""
    problem = _problem("sparse", "logistic", 0.0)
    checked = []

    def evaluate_and_check(evaluated, x=None, y=None, Ax=None, ATy=None):
        new = evaluate(evaluated, x, y, Ax, ATy)
        _close(new, evaluated.evaluate(x=x, y=y))
        checked.append(evaluated is problem)  # warm-up runs tiny problems too
        return new

    monkeypatch.setattr(trace, "evaluate", evaluate_and_check)
    stop = StopRules(max_epochs=20, tol=0)
    result = solve(problem, solver, stop=stop)
    assert len(result.trace) >= 10
    assert sum(checked) == len(result.trace)
    final = problem.evaluate(y=result.y) if solver == "dual_cd" else problem.evaluate(x=result.x)
    assert result.final.primal == pytest.approx(final.primal, rel=REL)
    assert abs(result.final.gap - final.gap) <= REL * abs(final.primal)


def _dual_cd_run(max_epochs: float, on_point=None, l2: float = 1e-3) -> tuple[Recorder, list]:
    """dual_cd on a small problem through run_chunked; returns the recorder and, for each
    call of Recorder.due, (coarse, answer, evaluation passes so far, epoch)."""
    warmup("dual_cd")  # compiled before the clock runs
    A, b = classification(400, 20, 1.0, seed=1)
    problem = Problem(Data(A), b, make_loss("logistic"), ElasticNet(0.0, l2))
    recorder = Recorder(problem, StopRules(max_epochs=max_epochs, tol=0), on_point)
    calls = []
    due = recorder.due

    def logged(epoch: float, coarse: bool = True) -> bool:
        answer = due(epoch, coarse)
        calls.append((coarse, answer, recorder.evaluation_passes, epoch))
        return answer

    recorder.due = logged
    recorder.start()
    run_chunked(DualCD(problem, "uniform", "exact", 0), recorder, problem.data.nnz)
    return recorder, calls


def test_share_cap_keeps_the_coarse_grid(monkeypatch):
    # no share at all: the coarse grid only, 10 points a decade from 0.01 to 100 epochs
    monkeypatch.setattr(trace, "EVALUATION_SHARE", 0.0)
    recorder, calls = _dual_cd_run(max_epochs=100)
    assert 30 <= len(recorder.points) <= 43
    assert not any(answer for coarse, answer, _, _ in calls if not coarse)
    # no cap: the whole grid of 30 points a decade
    monkeypatch.setattr(trace, "EVALUATION_SHARE", 1e9)
    recorder, calls = _dual_cd_run(max_epochs=100)
    assert len(recorder.points) >= 90


def test_share_cap_bounds_the_points_beyond_the_coarse_grid():
    """A fine point is taken only while the evaluation passes, with it, stay within the
    share of the epochs run; the coarse grid keeps ≥ 30 points."""
    recorder, calls = _dual_cd_run(max_epochs=1000, l2=1e-7)  # not converged by then
    fine = [c for c in calls if not c[0]]
    taken = [c for c in fine if c[1]]
    assert taken and len(taken) < len(fine)
    for _, _, passes, epoch in taken:
        assert passes + 1 <= trace.EVALUATION_SHARE * epoch
    coarse = sum(1 for c in calls if c[0])
    assert recorder.evaluation_passes <= trace.EVALUATION_SHARE * recorder.points[-1].epoch + coarse
    assert len(recorder.points) >= 30


def test_which_points_are_taken_does_not_depend_on_the_time():
    """Counted in passes, the cap picks the same points however slow the evaluation is."""
    fast, _ = _dual_cd_run(max_epochs=100)
    slow, _ = _dual_cd_run(max_epochs=100, on_point=lambda point: time.sleep(0.002))
    assert [(p.epoch, p.primal) for p in fast.points] == [(p.epoch, p.primal) for p in slow.points]
