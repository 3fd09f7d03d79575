"""A path job's λs read from its trace (core.paths): each λ's row is its last point, its
time is the path's at its end less the λ before's, and the path reaches ε only when every
λ of its grid does."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from faceoff.core.paths import grid_size, lambda_max_of, path_time_to_eps, steps_of


def point(seq, index, l1, time_s, gap, nnz=1, primal=4.0, epoch=None):
    extras = {"path": {"index": index, "l1": l1, "lambda_max": 2.0}} if index is not None else {}
    return SimpleNamespace(
        seq=seq,
        time_s=time_s,
        epoch=float(seq) if epoch is None else epoch,
        primal=primal,
        gap=gap,
        nnz_x=nnz,
        extras=extras,
    )


TRACE = [
    point(0, 0, 2.0, 0.0, 0.0, nnz=0, epoch=0.0),
    point(1, 1, 1.0, 0.1, 0.5, epoch=1.0),
    point(2, 1, 1.0, 0.3, 4e-9, nnz=3, epoch=4.0),
    point(3, 2, 0.5, 0.35, 0.2, epoch=1.0),
    point(4, 2, 0.5, 0.6, 2e-9, nnz=5, epoch=6.0),
]


def test_each_lambdas_row_is_its_last_point_and_its_own_time():
    steps = steps_of(TRACE)
    assert [(s["index"], s["l1"], s["nnz"], s["points"]) for s in steps] == [
        (0, 2.0, 0, 1),
        (1, 1.0, 3, 2),
        (2, 0.5, 5, 2),
    ]
    assert [s["seconds"] for s in steps] == pytest.approx([0.0, 0.3, 0.3])
    assert [s["time_s"] for s in steps] == [0.0, 0.3, 0.6]
    assert [s["epochs"] for s in steps] == [0.0, 4.0, 6.0]
    assert [s["ratio"] for s in steps] == [1.0, 0.5, 0.25]
    assert steps[1]["gap_rel"] == pytest.approx(1e-9)  # gap / max(1, |P|)
    assert lambda_max_of(TRACE) == 2.0


def test_the_path_reaches_eps_when_every_lambda_of_its_grid_does():
    steps = steps_of(TRACE)
    assert path_time_to_eps(steps, 3, 1e-8) == 0.6
    assert path_time_to_eps(steps, 3, 1e-10) is None  # λ 1 and 2 stop above it
    assert path_time_to_eps(steps, 4, 1e-8) is None  # a λ of the grid not reached yet
    assert path_time_to_eps([], 0, 1.0) is None
    nan = steps_of([point(0, 0, 1.0, 0.1, math.nan)])
    assert path_time_to_eps(nan, 1, 1.0) is None  # NaN never reaches


def test_points_of_no_path_are_no_lambdas():
    assert steps_of([point(0, None, 0, 0.1, 1.0)]) == []
    assert lambda_max_of([point(0, None, 0, 0.1, 1.0)]) is None
    assert grid_size(None) is None
    assert grid_size({"n_lambdas": 50, "ratio": 1e-3, "lambdas": None}) == 50
    assert grid_size({"n_lambdas": None, "ratio": None, "lambdas": [1, 2]}) == 2
