"""bench.run_ovr_epoch_stoch on a tiny K-class problem: its cells time both kernels, its
DGPD strategies (shared and per-class active sets) certify the same optimum, its report
renders."""

import numpy as np
import pytest

from bench import run_ovr_epoch_stoch as bench
from faceoff.data.synthetic import multiclass
from faceoff.solvers.problem import Data, build_problem


@pytest.fixture(scope="module")
def tiny():
    """12 classes: the bench's binary cut takes classes 1–10 against the rest."""
    A, labels = multiclass(n_samples=200, n_features=60, density=0.2, n_classes=12, seed=3)
    return Data(A), labels


@pytest.mark.parametrize("solver", bench.SOLVERS)
def test_a_cell_times_the_binary_and_the_ovr_kernel(tiny, solver):
    data, labels = tiny
    cell = bench.epoch_cell(solver, data, labels, "smooth_hinge", "elastic_net", 1, 2)
    for name in ("binary", "ovr"):
        assert 0 < cell["cpu"][name] and 0 < cell["wall"][name]
        assert cell["spread"][name] >= 1


def test_both_dgpd_strategies_certify_the_same_optimum(tiny):
    data, labels = tiny
    problem = build_problem(data, labels, "smooth_hinge", l1=1e-3, l2=1e-2, multiclass="ovr")
    runs = [bench.dgpd_run(s, problem, 20.0, bench.Log()) for s in ("shared", "per class")]
    for run in runs:
        assert set(run["reached"]) == set(bench.TARGETS), run["reached"]
        assert run["gap"] <= 1e-6 * abs(run["primal"])
        assert all(row["read"] > 0 for row in run["rows"])
    assert runs[0]["primal"] == pytest.approx(runs[1]["primal"], rel=1e-5)
    floors = bench.read_floors(data, 12, 2)
    lines = bench.report(
        {"cpu": "cpu", "cores": 2, "commit": "c", "numba": "n", "date": "d"},
        [bench.epoch_cell("saga", data, labels, "logistic", "l2", 1, 2)],
        floors,
        [((0.1, 0.01), run) for run in runs],
        data,
        12,
        type("Args", (), {"warm": 1, "repeats": 2})(),
    )
    assert any(line.startswith("| saga | logistic | l2 |") for line in lines)
    assert sum(line.startswith("| 0.1, 0.01 |") for line in lines) == 2
    assert np.isfinite(list(floors.values())).all()
