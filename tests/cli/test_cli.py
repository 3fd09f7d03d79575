"""The faceoff command line, run as a subprocess: streamed JSON lines, tables, and one
clear line on stderr with exit status 2 for every kind of bad input."""

from __future__ import annotations

import io
import json
import math
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from faceoff.cli.output import (
    bar_column,
    final_fraction,
    log_spaced,
    progress_fraction,
    requirement_text,
)
from faceoff.cli.solve import parse_params
from faceoff.core.jsonsafe import json_safe
from faceoff.solvers.catalogue import catalogue
from faceoff.solvers.trace import StopRules, TracePoint
from tests.datasets import dataset_file

REPO = Path(__file__).resolve().parents[2]


def faceoff(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "faceoff.cli.main", *map(str, args)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def solve_args(data: str | Path, *extra: str) -> list[str]:
    return [
        "solve",
        "--data",
        str(data),
        "--loss",
        "logistic",
        "--l2",
        "1e-3",
        "--solver",
        "dual_cd",
        "--max-epochs",
        "2",
        *extra,
    ]


def test_jsonl_run_on_a1a():
    run = faceoff(
        *solve_args(
            dataset_file("a1a"),
            "--param",
            "sampling=importance",
            "--format",
            "jsonl",
            "--n-features",
            "123",
        )
    )
    assert run.returncode == 0, run.stderr
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    *points, last = lines
    assert len(points) >= 3
    assert set(points[0]) >= {
        "seq",
        "iteration",
        "epoch",
        "time_s",
        "primal",
        "dual",
        "gap",
        "nnz_x",
        "extras",
    }
    times = [p["time_s"] for p in points]
    assert all(t1 > t0 for t0, t1 in zip(times[:-1], times[1:], strict=True))
    assert [p["seq"] for p in points] == list(range(len(points)))
    summary = last["summary"]
    assert summary["stop_reason"] == "max_epochs"
    assert summary["gap"] == points[-1]["gap"] > 0
    assert summary["nnz_x"] == points[-1]["nnz_x"]
    assert summary["params"] == {
        "sampling": "importance",
        "step": "exact",
        "accelerate": "auto",
        "shrinking": "auto",
    }
    assert summary["problem"]["n_samples"] == 1605
    assert summary["problem"]["n_features"] == 123


def test_jsonl_is_the_default_when_piped_and_labels_1_2_work():
    run = faceoff(
        "solve",
        "--data",
        dataset_file("mushrooms"),
        "--loss",
        "smooth_hinge",
        "--l2",
        "1e-3",
        "--l1",
        "1e-4",
        "--solver",
        "primal_cd",
        "--max-epochs",
        "1",
        "--normalize",
        "rows",
    )
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout.splitlines()[-1])["summary"]
    assert summary["problem"]["normalize"] == "rows"
    assert summary["problem"]["l1"] == 1e-4


def synthetic_table_args(l2: str) -> list[str]:
    """``faceoff solve`` of a 2000 x 50 synthetic logistic problem by dual_cd, as a table."""
    return [
        "solve",
        "--synthetic",
        "classification",
        "--n-samples",
        "2000",
        "--n-features",
        "50",
        "--loss",
        "logistic",
        "--l2",
        l2,
        "--solver",
        "dual_cd",
        "--param",
        "sampling=importance",
        "--format",
        "table",
    ]


def test_table_on_synthetic_problem():
    run = faceoff(*synthetic_table_args("1e-3"))
    assert run.returncode == 0, run.stderr
    assert "primal P(x)" in run.stdout and "stop reason" in run.stdout
    assert "converged" in run.stdout
    assert not run.stdout.lstrip().startswith("{")


def test_ctrl_c_stops_the_run_and_still_reports():
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "faceoff.cli.main",
            "solve",
            "--synthetic",
            "classification",
            "--loss",
            "smooth_hinge",
            "--l2",
            "1e-9",
            "--tol",
            "0",
            "--solver",
            "dual_cd",
            "--max-epochs",
            "1e6",
            "--max-seconds",
            "60",
            # the plain uniform passes never reach gap 0 here (auto's Catalyst does in
            # 0.1 s: the run would end before the signal)
            *("--param", "sampling=uniform", "--param", "accelerate=none"),
            *("--param", "shrinking=off"),
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    first = proc.stdout.readline()  # the run has started
    assert json.loads(first)["seq"] == 0
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert json.loads(out.splitlines()[-1])["summary"]["stop_reason"] == "cancelled"


def test_solvers_json():
    run = faceoff("solvers", "--format", "json")
    assert run.returncode == 0, run.stderr
    listed = json.loads(run.stdout)
    assert [s["name"] for s in listed] == list(catalogue())
    dual = next(s for s in listed if s["name"] == "dual_cd")
    assert {p["name"]: p["default"] for p in dual["params"]} == {
        "sampling": "auto",
        "step": "exact",
        "accelerate": "auto",
        "shrinking": "auto",
    }


def test_solvers_table():
    run = faceoff("solvers", "--format", "table")
    assert run.returncode == 0, run.stderr
    assert all(name in run.stdout for name in catalogue())


def test_solvers_table_says_an_installed_peer_is_installed():
    """Issue 31 item 8: a peer whose distribution is installed (``available: true``) is
    not shown as needing it; a missing one says what to install."""
    listed = json.loads(faceoff("solvers", "--format", "json").stdout)
    peers = {s["requires"] for s in listed if s["requires"] and s["available"]}
    assert "scikit-learn" in peers  # a dev install has the peers extra
    table = faceoff("solvers", "--format", "table").stdout
    assert "needs scikit-learn" not in table and "not installed" not in table
    assert "peer of scikit-learn (installed)" in table
    missing = {"requires": "cyanure", "available": False, "unavailable_reason": "pip [x]"}
    assert requirement_text(missing) == "[red]not installed[/]: pip \\[x]"


BAD_ARGS = [
    # (arguments after `solve --data tiny.svm --loss logistic --l2 1e-3 --solver dual_cd`,
    #  words the error line must contain)
    (["--solver", "nope"], ["unknown solver 'nope'", "dual_cd", "primal_cd"]),
    (["--loss", "hinge"], ["--loss", "'hinge'", "logistic"]),
    (["--param", "color=red"], ["unknown parameter 'color'", "sampling, step"]),
    (["--param", "sampling=often"], ["'often'", "uniform, importance"]),
    (["--param", "sampling"], ["--param 'sampling' is not NAME=VALUE"]),
    (["--param", "=3"], ["is not NAME=VALUE"]),
    (["--l2", "0"], ["--l1 and --l2 are both 0", "--l2 > 0"]),
    (["--l2", "0", "--l1", "0.1"], ["solver 'dual_cd' needs l2 > 0", "primal_cd"]),
    (["--fit-intercept"], ["solver 'dual_cd' does not fit an intercept", "primal_cd"]),
    (["--l2", "-1e-3"], ["--l2", ">= 0"]),
    (["--l1", "-1"], ["--l1", ">= 0"]),
    (["--max-epochs", "0"], ["--max-epochs", "> 0"]),
    (["--n-samples", "10"], ["--n-samples only applies to --synthetic"]),
    (["--positive", "one"], ["--positive", "comma-separated"]),
    (
        ["--loss", "smooth_hinge", "--gamma", "0.5", "--solver", "lightning.cd"],
        ["'lightning.cd'", "gamma = 1 only", "got gamma=0.5", "use gamma = 1"],
    ),
    (["--l1", "1e-3", "--solver", "lightning.cd"], ["'elastic_net'", "l1 > 0", "supports l2"]),
]


@pytest.mark.parametrize(("extra", "words"), BAD_ARGS, ids=lambda v: " ".join(v)[:30])
def test_bad_arguments(extra, words, tmp_path):
    tiny = tmp_path / "tiny.svm"  # a valid file: every error is about the arguments
    tiny.write_text("1 1:0.5 2:1\n-1 2:-1 3:2\n1 1:1 3:0.5\n-1 1:-0.5\n")
    run = faceoff(*solve_args(tiny), *extra)
    _assert_one_line_error(run, words)


def test_missing_data_source():
    run = faceoff("solve", "--loss", "logistic", "--l2", "1", "--solver", "dual_cd")
    _assert_one_line_error(run, ["--data", "--synthetic", "required"])


def test_synthetic_regression_with_classification_loss():
    run = faceoff(
        "solve",
        "--synthetic",
        "regression",
        "--loss",
        "logistic",
        "--l2",
        "1",
        "--solver",
        "dual_cd",
    )
    _assert_one_line_error(run, ["--synthetic regression", "--loss squared"])


def test_file_that_does_not_exist(tmp_path):
    run = faceoff(*solve_args(tmp_path / "missing.svm"))
    _assert_one_line_error(run, [f"{tmp_path / 'missing.svm'}: no such file"])


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"1,2,3\n4,5,6\n", ["line 1", "label '1,2,3' is not a number"]),
        (b"1 1:1\n-1 0:1\n", ["line 2", "feature index 0", "start at 1"]),
        (b"", ["empty"]),
    ],
    ids=["csv", "index-0", "empty"],
)
def test_file_that_is_not_svmlight(tmp_path, content, words):
    path = tmp_path / "bad.txt"
    path.write_bytes(content)
    run = faceoff(*solve_args(path))
    _assert_one_line_error(run, [str(path), *words])


def test_multiclass_labels_need_positive_or_multiclass(tmp_path):
    path = tmp_path / "three.txt"
    path.write_text("1 1:1\n2 2:1\n3 1:1 2:1\n1 2:2\n")
    run = faceoff(*solve_args(path))
    _assert_one_line_error(run, [str(path), "3 values: 1, 2, 3", "--positive", "--multiclass"])
    run = faceoff(*solve_args(path, "--positive", "1,3", "--max-epochs", "1"))
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout.splitlines()[-1])["summary"]["stop_reason"] == "max_epochs"


THREE = "1 1:1 2:0.5\n2 2:1\n3 1:1 2:1\n1 1:0.3 2:2\n2 1:0.2\n3 1:1 2:0.1\n"


def k_class_args(path: Path, form: str, *extra: str) -> list[str]:
    args = ["solve", "--data", str(path), "--multiclass", form, "--loss", "logistic"]
    return [*args, "--l2", "1e-2", "--solver", "lbfgs", *extra]


@pytest.mark.parametrize("form", ["ovr", "multinomial"])
def test_solve_a_k_class_problem(tmp_path, form):
    """The labels are kept as read (K = 3), the run is certified, the output names the
    K-class objective and counts d × K coefficients."""
    path = tmp_path / "three.txt"
    path.write_text(THREE)
    run = faceoff(*k_class_args(path, form))
    assert run.returncode == 0, run.stderr
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    summary = lines[-1]["summary"]
    assert summary["problem"]["multiclass"] == form and summary["problem"]["n_classes"] == 3
    assert summary["stop_reason"] == "converged" and summary["gap"] <= 1e-10 * summary["primal"]
    assert all(point["gap"] >= -1e-12 for point in lines[:-1])
    table = faceoff(*k_class_args(path, form, "--format", "table"))
    assert table.returncode == 0, table.stderr
    title = {"ovr": "one-vs-rest", "multinomial": "multinomial"}[form]
    assert f"logistic, K = 3, {title}, l2 = 0.01" in " ".join(table.stdout.split())
    assert "of 2 × 3 = 6" in table.stdout


@pytest.mark.parametrize(
    ("content", "extra", "words"),
    [
        (THREE, ["--positive", "1"], ["--positive makes a binary problem", "--multiclass"]),
        (
            THREE,
            ["--solver", "dgpd", "--multiclass", "multinomial"],
            ["solver 'dgpd' does not solve multiclass 'multinomial'"],
        ),
        (THREE, ["--loss", "smooth_hinge"], []),  # ovr takes the smoothed hinge: runs
        ("0.5 1:1\n1.5 2:1\n", [], ["integer class labels, found 0.5"]),
        ("1 1:1\n1 2:1\n", [], ["at least 2 classes, the labels take 1 value: 1"]),
    ],
    ids=["positive", "solver", "smooth_hinge", "not integers", "one class"],
)
def test_k_class_refusals_are_one_line(tmp_path, content, extra, words):
    path = tmp_path / "data.txt"
    path.write_text(content)
    run = faceoff(*k_class_args(path, "ovr", *extra))
    if not words:
        assert run.returncode == 0, run.stderr
        return
    _assert_one_line_error(run, words)


def _assert_one_line_error(run: subprocess.CompletedProcess, words: list[str]) -> None:
    assert run.returncode == 2, (run.stdout, run.stderr)
    assert run.stdout == ""
    lines = run.stderr.splitlines()
    assert len(lines) == 1, run.stderr
    assert "Traceback" not in run.stderr
    assert lines[0].startswith("faceoff solve: error: ")
    for word in words:
        assert word in lines[0]


# helpers, in process


def test_parse_params():
    assert parse_params(["sampling=importance", " step = fixed "]) == {
        "sampling": "importance",
        "step": "fixed",
    }


def _point(seq: int, epoch: float, time_s: float = 0.0, gap: float = 1.0, primal: float = 0.5):
    return TracePoint(seq, seq, epoch, time_s, primal, primal - gap, gap, 0)


def test_progress_fraction_takes_the_closest_stop_rule():
    stop = StopRules(max_epochs=100, max_seconds=10, tol=1e-10)
    assert progress_fraction(_point(0, 0.0), stop, 1.0) == 0.0
    assert progress_fraction(_point(1, 50.0), stop, 1.0) == pytest.approx(0.5)
    assert progress_fraction(_point(1, 1.0, time_s=8.0), stop, 1.0) == pytest.approx(0.8)
    # gap 1 -> 1e-5 is half-way to 1e-10 on a log scale
    assert progress_fraction(_point(1, 1.0, gap=1e-5), stop, 1.0) == pytest.approx(0.5)
    assert progress_fraction(_point(1, 1.0, gap=1e-12), stop, 1.0) == 1.0
    assert progress_fraction(_point(1, 1.0, gap=math.nan), stop, 1.0) == pytest.approx(0.01)


def test_the_bar_ends_full_when_a_stop_rule_ends_the_run():
    for reason in ("converged", "max_epochs", "max_seconds", "finished"):
        assert final_fraction(reason, 0.61) == 1.0
    for reason in ("cancelled", "diverged"):
        assert final_fraction(reason, 0.61) == 0.61


def _bar_colours(column, completed: float) -> set[str]:
    """The SGR colour codes a 16-colour terminal gets for a bar at ``completed`` of 1."""
    from rich.console import Console
    from rich.progress import Progress

    out = io.StringIO()
    console = Console(file=out, force_terminal=True, color_system="standard", width=60)
    progress = Progress(column, console=console, auto_refresh=False)
    progress.add_task("", total=1.0, completed=completed)
    console.print(progress.make_tasks_table(progress.tasks))
    return set(re.findall(r"\x1b\[(\d+)m━", out.getvalue()))


def test_a_finished_bar_does_not_look_empty_in_16_colours():
    from rich.progress import BarColumn

    # rich's default: finished (green) and empty (grey) both become bright black (90)
    assert _bar_colours(BarColumn(), 1.0) == _bar_colours(BarColumn(), 0.0) == {"90"}
    assert _bar_colours(bar_column(), 1.0) == {"32"}
    assert _bar_colours(bar_column(), 0.0) == {"90"}
    assert _bar_colours(bar_column(), 0.5) == {"35", "90"}


def test_log_spaced_keeps_ends_and_spreads_in_log_epoch():
    points = [_point(0, 0.0)] + [_point(i, 0.05 * 1.08**i) for i in range(1, 200)]
    chosen = log_spaced(points, count=20)
    assert chosen[0] is points[0] and chosen[-1] is points[-1]
    assert 15 <= len(chosen) <= 21
    epochs = [p.epoch for p in chosen[1:]]
    steps = [b / a for a, b in zip(epochs[:-1], epochs[1:], strict=True)]
    assert max(steps) < 3 * min(steps)
    assert log_spaced(points[:5]) == points[:5]


def test_json_safe():
    import numpy as np

    value = {"a": np.float64(1.5), "b": [math.inf, -math.inf, math.nan], "c": np.int64(3)}
    assert json.dumps(json_safe(value), allow_nan=False) == (
        '{"a": 1.5, "b": [null, null, null], "c": 3}'
    )


def test_a_peer_runs_like_any_solver():
    """faceoff solve --solver sklearn.liblinear: one point per refit (budgets 1, 2, 4, 8),
    certified, and the summary says how the trace was made and what the run cost."""
    args = solve_args(dataset_file("a1a"), "--format", "jsonl", "--n-features", "123")
    args[args.index("dual_cd")] = "sklearn.liblinear"
    args[args.index("--max-epochs") + 1] = "8"
    run = faceoff(*args)
    assert run.returncode == 0, run.stderr
    *points, last = [json.loads(line) for line in run.stdout.splitlines()]
    assert [p["extras"]["max_iter"] for p in points] == [0, 1, 2, 4, 8]
    assert all(p["gap"] >= -1e-12 and p["dual"] <= p["primal"] for p in points)
    summary = last["summary"]
    assert summary["trace_mode"] == "refit" and summary["stop_reason"] == "max_epochs"
    assert summary["wall_s"] >= sum(p["time_s"] for p in points)
    table = faceoff(*args[:-4], "--n-features", "123", "--format", "table")
    assert table.returncode == 0 and "refit (one fit from scratch" in table.stdout, table.stderr


def test_status_names_seedless_jobs_and_their_timing_repeats():
    from rich.console import Console

    from faceoff.cli.service import _jobs_table

    def job(job_id, solver, seed, repeat=0):
        spec = {"dataset": "a9a", "l2": 1e-4, "params": {}, "seed": seed, "repeat": repeat}
        return {
            "id": job_id,
            "status": "succeeded",
            "solver": solver,
            "spec": spec,
            "loss": "logistic",
            "gap": 1e-9,
            "stop_reason": "converged",
            "epoch": 3.0,
        }

    jobs = [job(1, "dual_cd", 2), job(2, "lbfgs", None), job(3, "lbfgs", None, repeat=1)]
    console = Console(file=io.StringIO(), width=100)
    console.print(_jobs_table(jobs, "jobs", 100, wide=False))
    out = console.file.getvalue()
    rows = {
        ln.split()[0]: ln.split()
        for ln in out.splitlines()
        if ln.split()[:1] in (["1"], ["2"], ["3"])
    }
    assert rows["1"][4] == "2" and "None" not in out
    assert rows["2"][4] == "none" and rows["3"][4:6] == ["none", "r1"]


def test_a_huge_sweep_file_is_refused_before_it_is_read(tmp_path, capsys):
    from faceoff.cli.main import main
    from faceoff.cli.service import MAX_SWEEP_FILE_BYTES

    huge = tmp_path / "sweep.yaml"
    with huge.open("wb") as f:  # sparse: costs no disk
        f.truncate(MAX_SWEEP_FILE_BYTES + 1)
    # a closed port: the file is refused before anything is sent
    assert main(["sweep", str(huge), "--url", "http://127.0.0.1:1"]) == 2
    err = capsys.readouterr().err
    assert f"is {MAX_SWEEP_FILE_BYTES + 1} bytes; a sweep file is at most" in err
