"""solvers.problem.build_problem: transforms, then labels, then loss and penalty; and the
worker and the CLI, which both build through it, give the same problem for one request."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from faceoff.cli.main import attach_negative_values, build_parser
from faceoff.cli.solve import build_request
from faceoff.core.references import data_digest
from faceoff.core.specs import JobSpec
from faceoff.data.labels import LabelError
from faceoff.solvers.losses import make_loss
from faceoff.solvers.penalties import ElasticNet
from faceoff.solvers.problem import Data, Problem, build_problem
from faceoff.worker.tasks import build_problem as worker_problem
from tests.datasets import dataset_file
from tests.memory import traced_peak

A = np.array([[3.0, 4.0], [0.0, 2.0], [1.0, 0.0], [0.0, 0.0]])
X = np.array([0.3, -0.7])


@pytest.mark.parametrize("layout", [np.asarray, sp.csr_matrix])
def test_rows_normalized_and_classes_mapped(layout):
    problem = build_problem(
        layout(A), np.array([1.0, 2.0, 3.0, 2.0]), "smooth_hinge", 0.5, 1e-3, 1e-2, "rows", [2.0]
    )
    # aᵢ / ‖aᵢ‖, the empty row left at zero; class 2 → +1, the others −1
    unit = np.array([[0.6, 0.8], [0.0, 1.0], [1.0, 0.0], [0.0, 0.0]])
    np.testing.assert_allclose(problem.data.csr_matrix.toarray(), unit)
    np.testing.assert_array_equal(problem.b, [-1.0, 1.0, -1.0, 1.0])
    assert (problem.loss.name, problem.loss.gamma) == ("smooth_hinge", 0.5)
    assert (problem.penalty.l1, problem.penalty.l2) == (1e-3, 1e-2)
    labels = np.array([-1.0, 1.0, -1.0, 1.0])
    by_hand = Problem(Data(unit), labels, make_loss("smooth_hinge", 0.5), ElasticNet(1e-3, 1e-2))
    assert problem.evaluate(x=X).primal == pytest.approx(by_hand.evaluate(x=X).primal, rel=1e-15)


def test_labels_follow_the_loss():
    zero_one = np.array([0.0, 1.0, 1.0, 0.0])
    # a binary loss maps two classes to ±1 (the larger to +1); squared keeps its targets
    np.testing.assert_array_equal(build_problem(A, zero_one, "logistic").b, [-1, 1, 1, -1])
    np.testing.assert_array_equal(build_problem(A, zero_one, "squared").b, zero_one)
    targets = np.array([0.5, 2.0, -1.0, 3.0])
    np.testing.assert_array_equal(
        build_problem(A, targets, "squared", positive=[2.0, 3.0]).b, [-1, 1, -1, 1]
    )
    with pytest.raises(LabelError, match="--positive"):
        build_problem(A, targets, "logistic")
    # the mean row norm R̄ = (5 + 2 + 1 + 0)/4 = 2 divides A
    mean = build_problem(A, targets, "squared", normalize="mean")
    np.testing.assert_allclose(mean.data.csr_matrix.toarray(), A / 2.0)


def test_a_built_data_is_shared_and_bad_requests_are_refused():
    data = Data(A)
    assert build_problem(data, np.ones(4) * [1, -1, 1, -1], "logistic").data is data
    with pytest.raises(ValueError, match="normalize='rows' needs the matrix"):
        build_problem(data, np.ones(4), "squared", normalize="rows")
    with pytest.raises(ValueError, match="unknown loss 'hinge'"):
        build_problem(A, np.ones(4), "hinge")
    with pytest.raises(ValueError, match="unknown normalization 'unit'"):
        build_problem(A, np.ones(4), "squared", normalize="unit")


REQUEST = {
    "loss": "smooth_hinge",
    "gamma": 0.5,
    "l2": 1e-2,
    "l1": 1e-3,
    "normalize": "rows",
    "positive": [1.0],
}
SYNTHETIC = {"n_samples": 60, "n_features": 12, "density": 0.3, "seed": 3}


@pytest.mark.parametrize("dataset", ["synthetic", "a1a"])
def test_worker_and_cli_build_the_same_problem(dataset, tmp_path):
    if dataset == "a1a":
        dataset_file("a1a")  # in the mirror or the cache, where the worker and the CLI look
        source = {"kind": "registry", "name": "a1a"}
        where = ["--data", "a1a"]
    else:
        source = {"kind": "synthetic", "generator": "classification", **SYNTHETIC}
        where = ["--synthetic", "classification", "--n-samples", "60", "--n-features", "12"]
        where += ["--density", "0.3", "--data-seed", "3"]
    spec = JobSpec(dataset=dataset, solver="primal_cd", **REQUEST)
    worker, digest = worker_problem(spec, source, tmp_path)
    argv = [*where, "--solver", "primal_cd", "--positive", "1"]
    for name in ("loss", "gamma", "l2", "l1", "normalize"):
        argv += [f"--{name}", str(REQUEST[name])]
    cli = build_request(build_parser().parse_args(attach_negative_values(["solve", *argv])))
    cli = cli.problem

    assert (worker.data.csr_matrix != cli.data.csr_matrix).nnz == 0
    np.testing.assert_array_equal(worker.b, cli.b)
    assert len(set(worker.b)) == 2 and worker.loss == cli.loss and worker.penalty == cli.penalty
    x = np.random.default_rng(0).standard_normal(worker.n_features) / 10
    assert worker.evaluate(x=x)[:3] == cli.evaluate(x=x)[:3]  # P, D and gap, bit for bit
    # the worker's digest is of the final arrays, which the CLI's equal
    assert digest == data_digest(cli.data.csr_matrix, cli.b)


# ---------------------------------------------------------------- memory of Data


def _with_zeros() -> sp.csr_matrix:
    """Explicit zeros, a product that underflows to zero and unsorted indices."""
    m = sp.random(300, 200, density=0.1, format="csr", random_state=2)
    m.data[::7] = 0.0
    m.data[1] = 1e-200
    m.indices[:2] = m.indices[1::-1].copy()
    m.data[:2] = m.data[1::-1].copy()
    m.has_sorted_indices = False
    return m


@pytest.mark.parametrize("block", [1, 37, 1 << 18])
@pytest.mark.parametrize(
    "matrix",
    [
        lambda: sp.random(400, 300, density=0.2, format="csr", random_state=5) * 7,
        lambda: np.random.default_rng(0).standard_normal((50, 30)),
        _with_zeros,
    ],
    ids=["sparse", "dense", "zeros-unsorted"],
)
def test_norms_are_bitwise_those_of_a_multiply(monkeypatch, block, matrix):
    import faceoff.solvers.problem as problem_module

    monkeypatch.setattr(problem_module, "BLOCK_NNZ", block)
    A = matrix()
    reference = sp.csr_matrix(A, copy=True)
    reference.sort_indices()
    sq = reference.multiply(reference)  # what Data computed before its norms were blocked
    data = Data(A)
    np.testing.assert_array_equal(data.row_sq_norms, np.asarray(sq.sum(axis=1)).ravel())
    np.testing.assert_array_equal(data.col_sq_norms, np.asarray(sq.sum(axis=0)).ravel())
    np.testing.assert_array_equal(data.csc_matrix.toarray(), reference.toarray())
    assert data.nnz == reference.nnz


def test_data_shares_its_input_and_adds_only_the_column_layout():
    import faceoff.solvers.problem as problem_module

    rng = np.random.default_rng(0)
    A = sp.random(20_000, 2_000, density=0.025, format="csr", random_state=rng)  # 1M nnz
    csr_bytes = A.data.nbytes + A.indices.nbytes + A.indptr.nbytes
    data, peak = traced_peak(lambda: Data(A))
    assert np.shares_memory(data.csr.data, A.data)
    assert np.shares_memory(data.csr.indices, A.indices)
    assert np.shares_memory(data.csr_matrix.data, data.csr.data)
    assert np.shares_memory(data.csc_matrix.indices, data.csc.indices)
    # the CSC layout (12 bytes a non-zero) and a block of temporaries (A∘A was 2–3× A)
    assert peak < 1.05 * csr_bytes + 40 * problem_module.BLOCK_NNZ
    dense = rng.standard_normal((300, 40))
    assert np.shares_memory(Data(dense).csr.data, dense)


def test_the_column_layout_is_built_only_for_the_methods_that_read_it():
    """A row method's run never holds A by columns (12 bytes a non-zero); a column method
    builds it on first use, once, and its column norms agree with the rows'."""
    from faceoff.data.synthetic import classification
    from faceoff.solvers.run import solve
    from faceoff.solvers.trace import StopRules

    A, b = classification(n_samples=300, n_features=50, density=0.1, seed=3)
    for solver in ("dual_cd", "saga", "spdc", "lbfgs", "agd"):
        data = Data(A)
        problem = build_problem(data, b, "logistic", l2=1e-2)
        solve(problem, solver, None, StopRules(max_epochs=2, tol=0))
        assert "csc" not in vars(data), solver
    data = Data(A)
    problem = build_problem(data, b, "logistic", l2=1e-2)
    solve(problem, "primal_cd", None, StopRules(max_epochs=2, tol=0))
    assert "csc" in vars(data) and problem.arrays.csc is data.csc
    dense = data.csr_matrix.toarray()
    np.testing.assert_allclose(data.col_sq_norms, (dense**2).sum(axis=0), rtol=1e-12)
    np.testing.assert_array_equal(data.col_nnz, (dense != 0).sum(axis=0))


def test_products_of_a_full_pattern_run_on_a_view_of_its_values():
    """Every entry stored (dense input, or sparse input with no zero): A·X and Aᵀ·R are
    BLAS products on a view of the CSR values, equal to the CSR products; a matrix with a
    zero (or a duplicate entry) keeps the CSR products."""
    rng = np.random.default_rng(0)
    dense = rng.standard_normal((30, 7))
    X, R = rng.standard_normal((7, 4)), rng.standard_normal((30, 4))
    for data in (Data(dense), Data(sp.csr_matrix(dense))):
        assert data.dense is not None and np.shares_memory(data.dense, data.csr.data)
        np.testing.assert_array_equal(data.dense, dense)
        for x in (X, X[:, 0]):
            np.testing.assert_allclose(data.matvec(x), dense @ x, rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(data.rmatvec(R), dense.T @ R, rtol=1e-13, atol=1e-13)
    holed = dense.copy()
    holed[3, 2] = 0.0
    assert Data(sp.csr_matrix(holed)).dense is None  # 209 stored entries of 210
    dup = sp.csr_matrix((np.ones(2), np.array([1, 1]), np.array([0, 2])), shape=(1, 2))
    assert Data(dup).dense is None
    np.testing.assert_allclose(Data(dup).matvec(np.array([1.0, 1.0])), [2.0])
