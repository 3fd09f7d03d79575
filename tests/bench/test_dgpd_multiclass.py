"""bench/run_dgpd_multiclass.py: its pure helpers, and the script itself on a tiny grid
through a real stack (migrate, a worker, the API) on the tests' PostgreSQL and Redis."""

from __future__ import annotations

import json

import pytest

from bench import run_dgpd_multiclass as bench


def test_job_label_picks_the_sweep_choice_a_job_ran():
    solvers = bench.SOLVERS
    full = {"sampling": "uniform", "step": "exact", "accelerate": "catalyst", "shrinking": "off"}
    assert bench.job_label("dual_cd", full, solvers) == "dual_cd[accelerate=catalyst]"
    assert bench.job_label("dual_cd", {**full, "accelerate": "none"}, solvers) == "dual_cd"
    dgpd = {"variant": "active_set", "inner_passes": 5, "step": "adaptive", "eta": None}
    assert bench.job_label("dgpd", dgpd, solvers) == "dgpd"


def test_speedup_verdicts():
    assert bench.speedup(1.0, 3.0, 10.0) == ("3×", "dgpd faster")
    assert bench.speedup(1.0, 1.1, 10.0) == ("1.1×", "tie")
    assert bench.speedup(2.0, 1.0, 10.0) == ("0.5×", "dgpd slower")
    assert bench.speedup(1.0, None, 5.0) == ("> 5×", "dgpd faster")
    assert bench.speedup(None, 1.0, 5.0) == ("—", "dgpd slower")


def test_bracket_and_time_to_target():
    points = [
        {"time_s": 0.0, "primal": 2.0, "dual": 0.0, "epoch": 0, "extras": {}},
        {"time_s": 1.0, "primal": 1.0005, "dual": 0.99, "epoch": 1, "extras": {}},
        {"time_s": 2.0, "primal": 1.0, "dual": 0.9999999999, "epoch": 2, "extras": {}},
    ]
    cell = bench.Cell("d", 0.1, 0.01, [bench.Run("dual_cd", {"solver": "dual_cd"}, points)])
    cell.bracket()
    assert cell.pstar == 1.0 and cell.certificate == pytest.approx(1e-10)
    run = cell.run("dual_cd")
    assert run.time_to(cell.pstar, 1e-3) == 1.0
    assert run.time_to(cell.pstar, 1e-6) == 2.0
    assert run.curve(cell.pstar, "iteration")[0] == [0, 1, 2]


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_script_runs_a_tiny_grid_through_the_service(postgres_url, redis_url, tmp_path):
    raw = tmp_path / "raw.json"
    argv = ["--tiny", "--settings", "0.1:0.01", "--solvers", "dgpd,dual_cd"]
    argv += ["--seconds", "0.5", "--pstar-seconds", "2", "--workers", "1", "--no-figures"]
    argv += ["--out", str(tmp_path), "--raw", str(raw)]
    argv += ["--database-url", postgres_url, "--broker-url", redis_url]
    assert bench.main(argv) == 0
    (cell,) = json.loads(raw.read_text())["cells"]
    assert sorted(r["label"] for r in cell["runs"]) == ["dgpd", "dual_cd"]
    assert all(r["job"]["status"] == "succeeded" and r["points"] for r in cell["runs"])
    assert cell["reference"] is not None
    text = (tmp_path / "dgpd_multiclass_tiny.md").read_text()
    assert "| tiny-rb | 0.1 | 0.01 |" in text
    assert "## Speedup of dgpd" in text and "ms / outer it." in text
    # the replot path rebuilds the same report from the raw results, with no stack
    again = tmp_path / "again"
    replot = ["--tiny", "--solvers", "dgpd,dual_cd", "--no-figures", "--replot"]
    assert bench.main([*replot, "--out", str(again), "--raw", str(raw)]) == 0
    assert (again / "dgpd_multiclass_tiny.md").read_text().count("| tiny-rb |") == text.count(
        "| tiny-rb |"
    )


def test_a_regenerated_report_keeps_the_written_verdict():
    text = "# t\n\nintro\n<!-- verdict -->\nnot reproduced\n<!-- /verdict -->\n| table |\n"
    assert bench.verdict_block(text) == "<!-- verdict -->\nnot reproduced\n<!-- /verdict -->"
    assert bench.verdict_block("# t\n| table |\n") == ""
