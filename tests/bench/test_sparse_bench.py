"""bench/run_sparse.py: who races, what the table says, and the correlated design."""

from __future__ import annotations

import numpy as np

from bench import run_sparse
from faceoff.data.synthetic import correlated
from faceoff.solvers.catalogue import catalogue


def test_only_solvers_that_take_l2_zero_race():
    names = run_sparse.contenders("squared", None)
    assert {"primal_cd", "agd", "lbfgs"} <= set(names)
    assert not {"dual_cd", "spdc", "dgpd", "saga"} & set(names)
    assert all("l1" in catalogue()[name].penalties for name in names)


def cell(best, reason="converged"):
    run = {"seconds": best, "reason": reason, "final_subopt": 1e-7, "nnz": 5}
    return {"best": best, "spread": None if best is None else 1.0, "runs": [run]}


def test_the_ratio_is_our_fastest_over_the_fastest_peer_and_unreached_is_never_ranked():
    row = {
        "dataset": "leu",
        "loss": "squared",
        "fraction": 10.0,
        "nnz": 5,
        "load": 1.0,
        "cells": {
            "primal_cd": cell(0.4),
            "agd": cell(0.2),
            "lbfgs": cell(None, "max_seconds"),
            "sklearn.elastic_net": cell(0.5),
            "skglm.lasso": cell(None, "max_seconds"),
        },
    }
    lines = run_sparse.report([row], {"commit": "abc"}, "python -m bench.run_sparse")
    (line,) = [line for line in lines if line.startswith("| leu | squared")]
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[4].startswith("agd 0.2000") and cells[5].startswith("sklearn.elastic_net 0.5")
    assert cells[6] == "0.40"
    assert any("not reached (max_seconds" in each for each in lines)


def test_the_correlated_design_has_its_correlation_support_and_noise():
    A, b = correlated(2000, 50, rho=0.6, support=0.1, snr=3.0, seed=1)
    corr = np.corrcoef(A, rowvar=False)
    assert abs(np.mean(np.diag(corr, 1)) - 0.6) < 0.03
    assert abs(np.mean(np.diag(corr, 2)) - 0.36) < 0.03
    A2, b2 = correlated(2000, 50, rho=0.6, support=0.1, snr=3.0, seed=1)
    assert np.array_equal(A, A2) and np.array_equal(b, b2)
    x, *_ = np.linalg.lstsq(A, b, rcond=None)
    assert np.count_nonzero(np.abs(x) > 0.2) >= 3
