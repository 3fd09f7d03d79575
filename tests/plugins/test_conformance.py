"""``faceoff plugin check``: examples/faceoff-plugin-example (installed with pip into a
folder on PYTHONPATH) passes every check; hand-made plug-ins that solve the wrong objective,
ignore the time limit and cancel, or never record, fail it with the reason; the checker's
verdicts on traces made here."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from faceoff.solvers import conformance
from faceoff.solvers.conformance import Case, judge_certification, judge_clock, judge_monotone

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "faceoff-plugin-example"
# gradient descent with step 1/L on the squared loss and l2 (L = ‖A‖²_F/n + l2), three ways
# to get it wrong; a pure-Python method, so the checker's runs stay short
BROKEN = """
import numpy as np
from faceoff.solvers.spec import SolverSpec

def _spec(name):
    return SolverSpec(name, "broken", "tests", "primal", losses=("squared",),
                      penalties=("l2",), module="broken_conformance", entry=name.split(".")[1],
                      seeded=False, plugin_api="1.0")

WRONG, LAZY, SILENT = _spec("broken.wrong"), _spec("broken.lazy"), _spec("broken.silent")

def _descend(problem, recorder, l2, iterations, obey):
    A, n = problem.data.csr_matrix, problem.n_samples
    step = 1.0 / (problem.data.row_sq_norms.sum() / n + l2)
    x = np.zeros(problem.n_features)
    reason = recorder.checkpoint(0, 0.0, x=x)
    for k in range(1, iterations + 1):
        x = x - step * (A.T @ (A @ x - problem.b) / n + l2 * x)
        if k % 10 == 0 or k == iterations:
            reason = recorder.checkpoint(k, float(k), x=x)
            if reason is not None and obey:
                return reason
    return recorder.end("finished")

def wrong(problem, params, recorder, seed):  # minimizes with ten times the l2 weight
    return _descend(problem, recorder, 10 * problem.penalty.l2, 10**6, True)

def lazy(problem, params, recorder, seed):  # its own iterations whatever happens: 20,000
    iterations = 20_000 if problem.n_samples > 1000 else 100  # (a short warm-up)
    return _descend(problem, recorder, problem.penalty.l2, iterations, False)

def silent(problem, params, recorder, seed):  # never records a trace point
    return "converged"
"""
ENTRY_POINTS = """[faceoff.solvers]
broken.wrong = broken_conformance:WRONG
broken.lazy = broken_conformance:LAZY
broken.silent = broken_conformance:SILENT
broken.gone = no_such_module_here:SPEC
"""


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> dict[str, str]:
    """The environment of a process that sees the example and the broken plug-ins."""
    import os

    target = tmp_path_factory.mktemp("plugins")
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps"]
    pip += ["--no-build-isolation", "--no-index", "--target", str(target), str(EXAMPLE)]
    installed = subprocess.run(pip, capture_output=True, text=True, timeout=300)
    assert installed.returncode == 0, installed.stderr
    (target / "broken_conformance.py").write_text(BROKEN)
    info = target / "broken_conformance-0.1.dist-info"
    info.mkdir()
    metadata = "Metadata-Version: 2.1\nName: broken-conformance\nVersion: 0.1\n"
    (info / "METADATA").write_text(metadata)
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    return {**os.environ, "PYTHONPATH": str(target)}


def check(env: dict[str, str], name: str, *options: str) -> subprocess.Popen:
    command = [sys.executable, "-m", "faceoff.cli.main", "plugin", "check", name, *options]
    return subprocess.Popen(
        command, env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_the_broken_plugins_fail_with_the_reason(env):
    """Three checker processes at once (each bounded by its own deadlines)."""
    runs = {
        "wrong": check(env, "broken.wrong", "--only", "certification"),
        "lazy": check(env, "broken.lazy", "--only", "time_limit", "--only", "cancel"),
        "silent": check(env, "broken.silent", "--only", "certification"),
    }
    out = {key: (run.communicate(timeout=120), run.returncode) for key, run in runs.items()}
    (_, wrong), code = out["wrong"]
    assert code == 1, wrong
    assert "FAILED certification: 2 of 2 problems: squared, l2, dense 200×30" in wrong, wrong
    assert "not within 1e-08 of the reference optimum and certified" in wrong
    (_, lazy), code = out["lazy"]
    assert code == 1, lazy
    assert "FAILED cancel: squared, l2, sparse 20000×2000, regression: cancel requested" in lazy
    assert "FAILED time_limit: squared, l2, sparse 20000×2000, regression: max_seconds = 1" in lazy
    failed = [line for line in lazy.splitlines() if line.startswith("FAILED ")]
    assert len(failed) == 2 and all("but the run went on: killed" in x for x in failed), lazy
    (_, silent), code = out["silent"]
    assert code == 1, silent
    assert "returned without recording a trace point" in silent, silent


def test_a_broken_or_unknown_plugin_cannot_be_checked(env):
    for name, message in (
        ("broken.gone", "error: broken plug-in 'broken.gone' of broken-conformance 0.1: "
         "ModuleNotFoundError: No module named 'no_such_module_here'"),
        ("lab.none", "error: unknown solver 'lab.none'; plug-ins: "),
    ):  # fmt: skip
        run = check(env, name)
        _, err = run.communicate(timeout=60)
        assert run.returncode == 2 and message in err, err


def test_the_example_plugin_passes_every_check(env):
    run = check(env, "example.sparsa", "--format", "json")
    out, err = run.communicate(timeout=240)
    assert run.returncode == 0, err
    report = json.loads(out)
    assert report["passed"] and report["origin"] == "plug-in of faceoff-plugin-example 0.1.0"
    found = {f["check"]: f for f in report["findings"]}
    assert set(found) == set(conformance.CHECKS), err
    assert all(f["ok"] for f in found.values()), err
    assert len(found["certification"]["details"]) == 12  # 3 losses × 2 penalties × 2 layouts
    assert "PASSED: example.sparsa" in err and "warm-up:" in err


# --- verdicts on results made here ---------------------------------------------------------

CASE = Case("squared", "l2")


def result(points, **more):
    return {"reason": "converged", "points": points, "reference": 1.0, **more}


def test_certification_wants_the_reference_optimum_and_a_small_gap():
    ok, line, _ = judge_certification(CASE, result([(0.1, 5.0, 5, 1.0 + 1e-12, 1e-12)]), 1e-8)
    assert ok and "P − P* = 1.0e-12" in line
    ok, line, _ = judge_certification(CASE, result([(0.1, 5.0, 5, 1.1, 1e-12)]), 1e-8)
    assert not ok and "not within 1e-08" in line
    ok, line, _ = judge_certification(CASE, result([(0.1, 5.0, 5, 1.0, 1e-3)]), 1e-8)
    assert not ok and "gap 1.0e-03" in line
    ok, line, _ = judge_certification(CASE, result([], reason="converged"), 1e-8)
    assert not ok and "returned without recording a trace point" in line
    ok, line, _ = judge_certification(CASE, result([(0, 0, 0, 1.0, 0)], reason="done"), 1e-8)
    assert not ok and "returned 'done', not a stop reason" in line
    assert "killed" in judge_certification(CASE, {"killed": 25.0}, 1e-8)[1]
    assert "exit code -11" in judge_certification(CASE, {"died": -11}, 1e-8)[1]


def test_time_that_goes_back_is_named_with_the_point():
    good = [(0.0, 0.0, 0, 1, 1), (0.1, 1.0, 10, 1, 1)]
    assert judge_monotone([("a", good)]).ok
    back = [(0.0, 0.0, 0, 1, 1), (0.2, 1.0, 10, 1, 1), (0.1, 2.0, 20, 1, 1)]
    finding = judge_monotone([("a", good), ("b", back)])
    assert not finding.ok and finding.summary == "b: time went from 0.2 to 0.1 at trace point 2"
    assert not judge_monotone([("c", [(0.0, 0.0, 0, 1, 1), (math.nan, 1.0, 1, 1, 1)])]).ok


def test_the_clock_compares_seconds_an_epoch_with_and_without_points():
    def run(seconds, epochs, wall=None, evaluation=0.0):
        wall = seconds + evaluation if wall is None else wall
        return result([(0.0, 0.0, 0, 1, 1), (seconds, epochs, 9, 1, 1)], wall_s=wall,
                      solver_s=seconds, evaluation_s=evaluation)  # fmt: skip

    assert judge_clock([run(1.1, 10, evaluation=0.5)], [run(1.0, 10)], "c").ok
    slow = judge_clock([run(3.0, 10, evaluation=0.5)], [run(1.0, 10)], "c")
    assert not slow.ok and "(×3.00)" in slow.summary
    hidden = judge_clock([run(1.0, 10, wall=2.0)], [run(1.0, 10)], "c")
    assert not hidden.ok and "not counted" in hidden.summary


@pytest.mark.parametrize(
    "case",
    [
        Case("logistic", "l2", "dense"),
        Case("squared", "elastic_net", "sparse"),
        Case("smooth_hinge", "elastic_net", "sparse", "ovr"),
        Case("logistic", "l2", "dense", "multinomial"),
    ],
    ids=lambda case: case.label(),
)
def test_the_reference_is_certified_by_faceoffs_own_gap(case):
    """The reference optimum's x, evaluated as every trace point is: a gap of rounding."""
    problem = conformance.build(case)
    optimum, x = conformance.reference_optimum(problem)
    assert x.shape == problem.coef_shape
    evaluated = problem.evaluate(x)
    assert evaluated.primal == pytest.approx(optimum, rel=1e-12)
    assert abs(evaluated.gap) <= 1e-9 * max(1.0, abs(optimum)), evaluated.gap


def test_the_cases_follow_the_declared_losses_penalties_and_forms():
    from faceoff.solvers.spec import SolverSpec

    spec = SolverSpec(
        "lab.k", "t", "r", "primal", losses=("logistic", "smooth_hinge"),
        penalties=("l2",), multiclass=("ovr", "multinomial"), module="m",
    )  # fmt: skip
    labels = [case.label() for case in conformance.certification_cases(spec)]
    # binary: 2 losses × 2 layouts; ovr: both losses; multinomial: the logistic only
    assert len(labels) == 4 + 4 + 2, labels
    assert "smooth_hinge, l2, sparse 200×30, K = 3 multinomial" not in labels
    assert "logistic, l2, dense 200×30, K = 3 multinomial" in labels
