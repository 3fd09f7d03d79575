"""Regularization paths (solvers.path): λ_max, the grid, warm starts, one trace end to end,
checked against scikit-learn's lasso_path and against cold starts."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from faceoff.cli.main import main
from faceoff.data.synthetic import correlated
from faceoff.solvers.path import check_grid, default_grid, lambda_max, solve_path
from faceoff.solvers.problem import build_problem
from faceoff.solvers.run import solve
from faceoff.solvers.trace import StopRules

STOP = StopRules(tol=1e-10, max_seconds=30, max_epochs=1e5)


@pytest.fixture(scope="module")
def lasso():
    A, b = correlated(60, 120, rho=0.6, seed=2)
    return A, b, build_problem(A, b, "squared", l1=1.0, l2=0.0)


def test_lambda_max_is_where_zero_stops_being_optimal(lasso):
    A, b, problem = lasso
    top = lambda_max(problem)
    assert top == pytest.approx(np.abs(A.T @ b).max() / len(b), rel=1e-14)
    at = build_problem(A, b, "squared", l1=top, l2=0.0)
    assert at.evaluate(x=np.zeros(at.n_features)).gap == pytest.approx(0.0, abs=1e-14)
    below = build_problem(A, b, "squared", l1=0.99 * top, l2=0.0)
    assert below.evaluate(x=np.zeros(below.n_features)).gap > 0


def test_lambda_max_with_an_intercept_is_taken_at_the_intercept_alone():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((50, 8))
    b = np.where(rng.random(50) < 0.8, 1.0, -1.0)  # unbalanced: c* = log(p/(1 − p)) ≠ 0
    problem = build_problem(A, b, "logistic", l1=1.0, l2=0.0, fit_intercept=True)
    top = lambda_max(problem)
    p = np.mean(b > 0)
    x0 = np.append(np.zeros(8), np.log(p / (1 - p)))
    at = build_problem(A, b, "logistic", l1=top, l2=0.0, fit_intercept=True)
    assert at.evaluate(x=x0).gap == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("solver", ["primal_cd", "ws_cd", "agd", "lbfgs"])
def test_the_path_is_scikit_learns_lasso_path(lasso, solver):
    from sklearn.linear_model import lasso_path

    A, b, problem = lasso
    grid = default_grid(problem, 12, 1e-2)
    result = solve_path(problem, solver, grid, stop=STOP)
    _, coefs, _ = lasso_path(A, b, alphas=grid, tol=1e-14, max_iter=1_000_000)
    for step, coef in zip(result.steps, coefs.T, strict=True):
        reference = build_problem(A, b, "squared", l1=step.l1, l2=0.0).evaluate(x=coef)
        assert step.primal == pytest.approx(reference.primal, rel=1e-8)
        assert step.stop_reason in ("converged", "finished")  # lbfgs: its own end, 1e-9 here
    assert [step.nnz for step in result.steps][0] == 0
    assert result.steps[-1].nnz > result.steps[1].nnz


@pytest.mark.parametrize("solver", ["primal_cd", "ws_cd"])
def test_a_path_with_an_intercept_is_scikit_learns_lasso(lasso, solver):
    """Warm starts of length d + 1 down the path: each λ's P is that of scikit-learn's
    Lasso(fit_intercept=True), its intercept unpenalized, through our objective."""
    from sklearn.linear_model import Lasso

    A, b, _ = lasso
    problem = build_problem(A, b + 3.0, "squared", l1=1.0, l2=0.0, fit_intercept=True)
    result = solve_path(problem, solver, default_grid(problem, 6, 1e-2), stop=STOP)
    for step in result.steps:
        fitted = Lasso(alpha=step.l1, tol=1e-14, max_iter=1_000_000).fit(A, b + 3.0)
        at = build_problem(A, b + 3.0, "squared", l1=step.l1, l2=0.0, fit_intercept=True)
        reference = at.evaluate(x=np.append(fitted.coef_, fitted.intercept_))
        assert step.primal == pytest.approx(reference.primal, rel=1e-8)
        assert step.stop_reason == "converged"
    assert result.steps[-1].nnz > 0


def test_one_trace_end_to_end_and_warm_starts_save_work(lasso):
    A, b, problem = lasso
    grid = default_grid(problem, 8, 1e-2)
    points = []
    result = solve_path(problem, "agd", grid, stop=STOP, on_point=points.append)
    assert [p.seq for p in result.trace] == list(range(len(result.trace)))
    assert points == result.trace
    times = [p.time_s for p in result.trace]
    assert times == sorted(times) and times[-1] == pytest.approx(result.seconds)
    indices = [p.extras["path"]["index"] for p in result.trace]
    assert indices == sorted(indices) and set(indices) == set(range(8))
    # λ 2 starts where λ 1 ended (agd is deterministic: λ 1 run alone ends there too)
    at = [build_problem(A, b, "squared", l1=w, l2=0.0) for w in grid]
    ended = solve(at[0], "agd", stop=STOP).x
    ended = solve(at[1], "agd", stop=STOP, warm_start=ended).x
    second = next(p for p in result.trace if p.extras["path"]["index"] == 2)
    assert second.primal == pytest.approx(at[2].evaluate(x=ended).primal, rel=1e-12)
    warm = sum(step.epochs for step in result.steps)
    cold = sum(solve(each, "agd", stop=STOP).final.epoch for each in at)
    assert warm < cold  # 0.93 of it here; more on finer grids and looser tolerances


def test_max_seconds_is_the_whole_paths_and_a_budget_spent_ends_it(lasso):
    _, _, problem = lasso
    grid = default_grid(problem, 6, 1e-2)[1:]  # x = 0 is not optimal at any of these
    # tol 0 is never met: the first λ runs out the whole budget and the path ends there
    stop = StopRules(tol=0.0, max_seconds=0.05, max_epochs=1e9)
    result = solve_path(problem, "agd", grid, stop=stop)
    assert [step.stop_reason for step in result.steps] == ["max_seconds"]
    assert (result.stop_reason, result.n_lambdas) == ("max_seconds", 5)
    assert 0.05 <= result.seconds < 0.5
    # epochs bound each λ, not the path: every λ runs its own 3
    result = solve_path(problem, "agd", grid, stop=StopRules(tol=0.0, max_epochs=3))
    assert [step.epochs for step in result.steps] == [3.0] * 5
    assert result.stop_reason == "max_epochs"


def test_a_cancel_ends_the_path_at_the_lambda_it_reaches(lasso):
    _, _, problem = lasso
    grid = default_grid(problem, 6, 1e-2)
    points = []
    stop = StopRules(tol=1e-10, max_epochs=1e5, should_stop=lambda: len(points) >= 25)
    result = solve_path(problem, "agd", grid, stop=stop, on_point=points.append)
    assert result.stop_reason == "cancelled"
    assert 1 <= len(result.steps) < 6 and result.steps[-1].stop_reason == "cancelled"


def test_the_paths_lambdas_share_one_budget_with_the_supervisor(lasso):
    from faceoff.worker.runner import CREATED, EVALUATED, budget_used, shared_record

    _, _, problem = lasso
    record = shared_record()
    began = time.perf_counter()
    result = solve_path(problem, "agd", default_grid(problem, 5, 1e-2), stop=STOP, shared=record)
    ended = time.perf_counter()
    # the first λ's recorder set the clock's start; the later ones kept it and added their
    # evaluation time to the first one's
    assert began <= record[CREATED] <= began + (ended - began) / 5
    assert record[EVALUATED] > 0
    used = budget_used(record, began)
    assert result.seconds <= used <= ended - began


def _data(problem):
    return problem.data, problem.b, "squared"


def test_bad_grids_and_solvers_are_refused(lasso):
    _, _, problem = lasso
    for grid in ([0.1, 0.0], [-1.0], [float("nan")], []):
        with pytest.raises(ValueError):
            check_grid(grid)
    with pytest.raises(ValueError, match="n_lambdas"):
        default_grid(problem, 1)
    with pytest.raises(ValueError, match="does not start from a given point"):
        solve_path(build_problem(*_data(problem), l1=1.0, l2=1e-3), "dual_cd", [0.1])
    with pytest.raises(ValueError, match="warm_start must be finite, of shape"):
        solve(problem, "agd", warm_start=np.zeros(3))


def test_cli_path_prints_one_line_per_lambda_and_a_summary(capsys, tmp_path):
    data = tmp_path / "tiny.svm"
    rng = np.random.default_rng(0)
    lines = [
        f"{rng.standard_normal():.3f} " + " ".join(f"{j + 1}:{v:.3f}" for j, v in enumerate(row))
        for row in rng.standard_normal((30, 6))
    ]
    data.write_text("\n".join(lines) + "\n")
    args = ["path", "--data", str(data), "--loss", "squared", "--l2", "0", "--solver", "agd"]
    assert main([*args, "--n-lambdas", "5", "--format", "jsonl", "--tol", "1e-8"]) == 0
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [o["kind"] for o in out] == ["step"] * 5 + ["path"]
    assert out[0]["nnz"] == 0 and out[-1]["n_lambdas"] == 5
    assert main([*args, "--l1", "0.1"]) == 2
    assert "--l1 is what the path varies" in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:  # the parser's: before anything is read
        main([*args, "--lambdas", "0.1,-1"])
    assert refused.value.code == 2 and "each a number > 0" in capsys.readouterr().err
    assert main([*args[:-1], "dual_cd", "--l2", "1e-3"]) == 2
    assert "cannot follow a warm-started path" in capsys.readouterr().err
