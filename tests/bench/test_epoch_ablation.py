"""bench.run_epoch_ablation: its edits still apply to dual_cd's kernel, and its control is it."""

import numpy as np
import pytest
import scipy.sparse as sp

from bench import run_epoch_ablation as ablation
from faceoff.solvers.algorithms.dual_cd import method as dual_cd
from faceoff.solvers.problem import build_problem


def _problem(loss):
    rng = np.random.default_rng(3)
    A = sp.random(60, 25, density=0.3, random_state=rng, format="csr")
    b = np.where(rng.standard_normal(60) > 0, 1.0, -1.0)
    return build_problem(A, b, loss, l2=1e-2)


def _run(problem, kernel, steps):
    method = dual_cd.DualCD(problem, "permutation", "exact", seed=5)
    args = (problem.rows, problem.loss.params, method.subproblem.params)
    kernel(*args, method.sampler.state, method.state, steps)
    return method.state.y.copy(), method.state.x.copy()


def test_every_variant_edit_applies_to_the_kernel_once():
    for edits in ablation.VARIANTS.values():
        ablation.compile_variant(edits)  # raises SystemExit when an edit does not apply


def test_an_edit_that_no_longer_applies_stops_the_run():
    with pytest.raises(SystemExit, match="the kernel changed"):
        ablation.compile_variant((("no such line\n", ""),))


@pytest.mark.parametrize("loss", ["logistic", "smooth_hinge"])
def test_the_control_runs_the_kernel_bitwise_and_split_sums_only_round_differently(loss):
    problem = _problem(loss)
    y, x = _run(problem, dual_cd._dual_cd, 500)
    y_control, x_control = _run(problem, ablation.compile_variant(()), 500)
    assert np.array_equal(y, y_control) and np.array_equal(x, x_control)
    y_split, x_split = _run(
        problem, ablation.compile_variant(ablation.VARIANTS["4 accumulators"]), 500
    )
    np.testing.assert_allclose(y_split, y, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(x_split, x, rtol=1e-9, atol=1e-12)
