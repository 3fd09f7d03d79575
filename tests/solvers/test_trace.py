"""Traces: solver-only time, epoch counting, stop rules, determinism."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import numpy as np
import pytest
import scipy.sparse as sp

from faceoff.core import analysis
from faceoff.data.synthetic import classification
from faceoff.solvers import trace
from faceoff.solvers.algorithms.dual_cd.method import DualCD
from faceoff.solvers.algorithms.primal_cd.method import PrimalCD
from faceoff.solvers.losses import make_loss
from faceoff.solvers.penalties import ElasticNet
from faceoff.solvers.problem import Data, Problem
from faceoff.solvers.run import solve
from faceoff.solvers.trace import (
    CANCELLED,
    CONVERGED,
    DIVERGED,
    MAX_EPOCHS,
    MAX_SECONDS,
    Recorder,
    StopRules,
)
from tests.conftest import REPO
from tests.solvers.problems import make_problem


@pytest.fixture(scope="module")
def sparse_problem() -> Problem:
    A, b = classification(n_samples=3000, n_features=800, density=0.01, seed=5)
    return Problem(Data(A), b, make_loss("logistic"), ElasticNet(1e-4, 1e-4))


@pytest.fixture(scope="module")
def dense_problem() -> Problem:
    A, b = classification(n_samples=400, n_features=30, density=1.0, seed=6)
    return Problem(Data(A), b, make_loss("smooth_hinge"), ElasticNet(0.0, 1e-3))


@pytest.mark.parametrize("solver", ["primal_cd", "dual_cd"])
def test_time_is_monotone_and_excludes_evaluation(sparse_problem, solver):
    stop = StopRules(max_epochs=30, tol=0)
    fast = solve(sparse_problem, solver, stop=stop)
    slow = solve(sparse_problem, solver, stop=stop, on_point=lambda point: time.sleep(0.01))
    times = [p.time_s for p in slow.trace]
    assert 0.0 <= times[0] < 0.05  # the set-up: step sizes, sampling tables
    assert all(b >= a for a, b in zip(times, times[1:], strict=False))
    sleeping = 0.01 * len(slow.trace)
    assert sleeping > 0.3  # points: the coarse grid at least (Recorder.due)
    # a slow evaluation (0.01 s a point) must not show up in the solver time
    assert slow.final.time_s < fast.final.time_s + 0.25 * sleeping


def test_compilation_is_not_timed(tmp_path):
    """A process with an empty Numba cache compiles at its first solve; none of that time
    is in the trace, so the first run's solver time matches the second's."""
    script = """
import json, sys, time
from faceoff.core import analysis
from faceoff.solvers.numba_cache import configure_numba_cache
configure_numba_cache()
from faceoff.data.synthetic import classification
from faceoff.solvers.losses import make_loss
from faceoff.solvers.penalties import ElasticNet
from faceoff.solvers.problem import Data, Problem
from faceoff.solvers import trace
from faceoff.solvers.run import solve
from faceoff.solvers.trace import StopRules
A, b = classification(n_samples=2000, n_features=300, density=0.02, seed=1)
problem = Problem(Data(A), b, make_loss("logistic"), ElasticNet(0.0, 1e-3))
out = []
for _ in range(2):
    started = time.perf_counter()
    result = solve(problem, "dual_cd", stop=StopRules(max_epochs=20, tol=0))
    out.append([time.perf_counter() - started, result.final.time_s])
print(json.dumps(out))
"""
    env = {"FACEOFF_NUMBA_CACHE": str(tmp_path), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    (wall1, solver1), (wall2, solver2) = json.loads(done.stdout.strip().splitlines()[-1])
    assert wall1 - wall2 > 1.0, "expected the first solve to compile"
    assert solver1 < 3 * solver2 + 0.05


def test_epochs_count_passes_over_the_data(dense_problem):
    """On dense data every row has d and every column n non-zeros: a dual step is 1/n of
    an epoch and a primal step 1/d."""
    n, d = dense_problem.n_samples, dense_problem.n_features
    for solver, coords in (("dual_cd", n), ("primal_cd", d)):
        result = solve(
            dense_problem, solver, {"sampling": "importance"}, StopRules(max_epochs=5, tol=0)
        )
        for point in result.trace:
            assert point.epoch == pytest.approx(point.iteration / coords, rel=1e-12)
            assert point.extras["coord_epochs"] == pytest.approx(point.iteration / coords)
        assert 5 <= result.final.epoch < 5 + 1.0 / coords + 1e-9
        assert result.stop_reason == MAX_EPOCHS


def test_sparse_epochs_are_nonzeros_visited(sparse_problem):
    """Uniform sampling visits nnz(A) per n steps on average; importance sampling favours
    heavy rows, so it visits more non-zeros per step."""
    uniform = solve(sparse_problem, "dual_cd", stop=StopRules(max_epochs=40, tol=0)).final
    assert uniform.epoch == pytest.approx(uniform.extras["coord_epochs"], rel=0.02)
    weighted = solve(
        sparse_problem, "dual_cd", {"sampling": "importance"}, StopRules(max_epochs=40, tol=0)
    ).final
    data = sparse_problem.data
    q = data.row_sq_norms * 0.25 + 1e-4 * data.n_samples
    expected = (q / q.sum()) @ data.row_nnz / (data.nnz / data.n_samples)
    assert weighted.epoch / weighted.extras["coord_epochs"] == pytest.approx(expected, rel=0.02)


@pytest.mark.parametrize("share", [1e9, None], ids=["whole grid", "default share"])
def test_log_spaced_points(share, monkeypatch):
    """30 points a decade when evaluation may take any share of the work; with the default
    share, at least the coarse grid (10 a decade: 30 points over 3 decades)."""
    if share is not None:
        monkeypatch.setattr(trace, "EVALUATION_SHARE", share)
    A, b = classification(n_samples=3000, n_features=800, density=0.01, seed=5)
    problem = Problem(Data(A), b, make_loss("logistic"), ElasticNet(0.0, 1e-7))
    result = solve(problem, "dual_cd", stop=StopRules(max_epochs=100, tol=0))
    assert result.stop_reason == MAX_EPOCHS
    epochs = np.array([p.epoch for p in result.trace[1:]])
    ratios = epochs[1:] / epochs[:-1]
    assert np.all(ratios > 1.0)
    if share is not None:
        assert 100 <= len(result.trace) <= 1000
        assert np.median(ratios) == pytest.approx(10 ** (1 / 30), rel=0.02)
    else:
        assert 40 <= len(result.trace) <= 100
        # the coarse grid's 10^(1/10) (a chunk of at least one step rounds the first ones up)
        assert np.max(ratios) <= 1.4
        assert 10 ** (1 / 30) * 0.98 <= np.median(ratios) <= 10 ** (1 / 10) * 1.03


@pytest.mark.parametrize("solver", ["primal_cd", "dual_cd"])
def test_points_stay_log_spaced_when_steps_visit_no_non_zero(solver):
    """Columns without a non-zero advance no epoch: the grid still advances from its goal,
    so a wide, nearly empty matrix records about 30 points per decade, not one per step."""
    A = sp.csr_matrix((np.ones(2), ([0, 1], [0, 1])), shape=(2, 100_000))
    problem = Problem(Data(A), np.array([1.0, -1.0]), make_loss("logistic"), ElasticNet(0, 1e-2))
    result = solve(problem, solver, stop=StopRules(max_epochs=100, max_seconds=5, tol=0))
    assert result.stop_reason in (MAX_EPOCHS, "converged")  # gap 0 is reachable here
    assert len(result.trace) <= 30 * 5 + 10  # 0.01 to 100 epochs: four decades and a bit


def test_max_seconds_is_respected_within_one_chunk():
    problem = make_problem("a9a", "logistic", "l2")
    result = solve(problem, "primal_cd", stop=StopRules(max_epochs=1e9, max_seconds=0.6, tol=0))
    assert result.stop_reason == MAX_SECONDS
    assert 0.6 <= result.final.time_s <= 0.6 + 0.35


def test_should_stop_cancels(sparse_problem):
    calls = []

    def should_stop() -> bool:
        calls.append(1)
        return len(calls) > 5

    result = solve(
        sparse_problem, "dual_cd", stop=StopRules(max_epochs=1e6, tol=0, should_stop=should_stop)
    )
    assert result.stop_reason == CANCELLED
    assert len(result.trace) <= 7


@pytest.mark.parametrize(
    "solver,params",
    [("dual_cd", {"sampling": "importance"}), ("primal_cd", {"sampling": "uniform"})],
)
def test_same_seed_same_trace(sparse_problem, solver, params):
    def run(seed):
        result = solve(sparse_problem, solver, params, StopRules(max_epochs=10, tol=0), seed)
        return [(p.iteration, p.epoch, p.primal, p.dual, p.nnz_x) for p in result.trace]

    assert run(7) == run(7)
    assert run(7) != run(8)


@pytest.mark.parametrize(
    "method",
    [
        lambda p: DualCD(p, "importance", "exact", seed=4),
        lambda p: DualCD(p, "permutation", "exact", seed=4),
        lambda p: PrimalCD(p, "importance", seed=4),
    ],
)
def test_iterates_do_not_depend_on_chunking(sparse_problem, method):
    one, many = method(sparse_problem), method(sparse_problem)
    one.run(7000)
    for chunk in (1, 2, 997, 3000, 3000):
        many.run(chunk)
    for key, value in one.iterate().items():
        np.testing.assert_array_equal(value, many.iterate()[key])


def test_converged_stops_at_tolerance(dense_problem):
    """The stop rule compares the relative gap the dashboard's gap criterion reads
    (core.analysis): a run converged at tol meets gap_rel ≤ tol at its last point only."""
    result = solve(dense_problem, "dual_cd", stop=StopRules(max_epochs=1000, tol=1e-6))
    assert result.stop_reason == CONVERGED
    gaps = [p.gap for p in result.trace]
    assert gaps[-1] <= 1e-6 * max(1, abs(result.final.primal)) < gaps[-2]
    points = {k: [getattr(p, k) for p in result.trace] for k in ("epoch", "primal", "gap")}
    assert analysis.time_to_eps(points, "gap_rel", 1e-6, None, "epoch") == result.final.epoch


def test_non_finite_iterate_is_diverged(dense_problem):
    recorder = Recorder(dense_problem, StopRules())
    recorder.start()
    x = np.full(dense_problem.n_features, np.nan)
    assert recorder.checkpoint(1, 1.0, x=x) == DIVERGED


def test_bad_stop_rules():
    with pytest.raises(ValueError, match="max_epochs"):
        StopRules(max_epochs=0)
    with pytest.raises(ValueError, match="tol"):
        StopRules(tol=-1)


@pytest.mark.parametrize(
    "solver,params",
    [
        ("dual_cd", {"sampling": "permutation"}),
        ("dual_cd", {"sampling": "permutation", "accelerate": "catalyst"}),
        ("primal_cd", {}),
        ("saga", {}),
        ("lbfgs", {}),
    ],
)
def test_a_quiet_run_ends_on_the_traced_runs_iterate(sparse_problem, solver, params):
    """quiet_until: no point before that epoch but the first, and the run still ends on the
    iterate the traced run had there (runs are deterministic however they are chunked)."""
    traced = solve(sparse_problem, solver, params, StopRules(max_epochs=12, tol=0), seed=4)
    point = traced.trace[len(traced.trace) // 2]
    stop = StopRules(max_epochs=point.epoch, tol=0, quiet_until=point.epoch)
    quiet = solve(sparse_problem, solver, params, stop, seed=4)
    assert [p.epoch for p in quiet.trace] == [0.0, pytest.approx(point.epoch, rel=0.02)]
    if quiet.final.iteration == point.iteration:  # no step past it: the very same iterate
        assert quiet.final.primal == point.primal and quiet.final.dual == point.dual
    else:  # the last chunk went a few steps further
        assert 0 < quiet.final.iteration - point.iteration <= 0.02 * point.iteration


def test_quiet_until_is_checked():
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="quiet_until must be a number >= 0"):
            StopRules(quiet_until=bad)
