"""worker.tasks.build_problem and build_heldout in process: the registry's test split of a1a
is a1a.t, read with the training columns, transform and label mapping, and leaves the
training data (its digest) as it is without it; a random hold-out trains on the other
rows, and a test set wider than the training data fails naming both counts."""

from __future__ import annotations

import numpy as np
import pytest

from faceoff.core.datasets import load_matrix
from faceoff.core.specs import JobSpec
from faceoff.data.registry import get_spec
from faceoff.worker import tasks
from faceoff.worker.tasks import build_heldout, build_problem
from tests.datasets import dataset_files

SYNTHETIC = {
    "kind": "synthetic",
    "generator": "regression",
    "n_samples": 200,
    "n_features": 10,
    "density": 0.5,
    "seed": 1,
}


def job(**fields) -> JobSpec:
    return JobSpec(**{"dataset": "d", "loss": "logistic", "l2": 1e-3, "solver": "lbfgs", **fields})


def test_the_registry_test_split_is_read_with_the_training_columns(tmp_path):
    dataset_files("a1a", "a1a.t")
    source = {"kind": "registry", "name": "a1a"}
    spec = JobSpec(
        dataset="a1a",
        loss="logistic",
        l2=1e-3,
        solver="lbfgs",
        normalize="mean",
        fit_intercept=True,
        test={"split": "registry"},
    )
    problem, digest = build_problem(spec, source, tmp_path)
    heldout = build_heldout(spec, source, tmp_path, problem)
    assert heldout is not None and heldout.intercept
    A_test, b_test = load_matrix({"kind": "registry", "name": "a1a.t"}, tmp_path)
    assert heldout.data.n_samples == get_spec("a1a.t").n_samples == A_test.shape[0]
    assert heldout.data.n_features == problem.n_features == 123
    # scaled by the training rows' mean norm, labels ±1 as the training's
    A_train = load_matrix(source, tmp_path)[0]
    mean_norm = np.sqrt(np.asarray(A_train.multiply(A_train).sum(axis=1))).mean()
    dense = heldout.data.csr_matrix.toarray()
    np.testing.assert_allclose(dense, A_test.toarray() / mean_norm, rtol=1e-14)
    np.testing.assert_array_equal(heldout.b, np.where(b_test > 0, 1.0, -1.0))
    # the training data is the whole of a1a: its digest is that of the job without test
    plain = spec.model_copy(update={"test": None})
    assert build_problem(plain, source, tmp_path)[1] == digest
    assert build_heldout(plain, source, tmp_path, problem) is None


def test_a_random_hold_out_trains_on_the_other_rows(tmp_path):
    held = job(loss="squared", test={"split": "random", "fraction": 0.3, "seed": 5})
    problem, digest = build_problem(held, SYNTHETIC, tmp_path)
    heldout = build_heldout(held, SYNTHETIC, tmp_path, problem)
    assert heldout is not None
    assert (problem.n_samples, heldout.data.n_samples) == (140, 60)
    A, b = load_matrix(SYNTHETIC, tmp_path)
    rows = np.sort(np.random.default_rng(5).permutation(200)[:60])
    np.testing.assert_array_equal(heldout.data.csr_matrix.toarray(), A[rows].toarray())
    np.testing.assert_array_equal(heldout.b, b[rows])
    whole, whole_digest = build_problem(job(loss="squared"), SYNTHETIC, tmp_path)
    assert whole.n_samples == 200 and whole_digest != digest


def test_a_test_set_with_more_features_fails_naming_both_counts(tmp_path, monkeypatch):
    dataset_files("a1a", "a1a.t")
    source = {"kind": "registry", "name": "a1a"}
    spec = job(dataset="a1a", test={"split": "registry"})
    problem, _ = build_problem(spec, source, tmp_path)
    A, b = load_matrix(source, tmp_path)
    wider = A[:, :100], b  # the training data seen with fewer columns than its test split
    monkeypatch.setattr(tasks, "_data", lambda *args: (tasks.Data(wider[0]), wider[1]))
    tasks._registry_test.cache_clear()
    with pytest.raises(ValueError, match="test split 'a1a.t' has 123 features, more than the 100"):
        build_heldout(spec, source, tmp_path, problem)
    tasks._registry_test.cache_clear()


def test_another_dataset_as_the_test_set_is_read_like_the_training_data(tmp_path):
    """{"split": "dataset"}: a synthetic regression of 10 features trained on, another with
    8 (its missing columns read as 0) and one with 12 (refused naming both counts)."""
    narrow = {**SYNTHETIC, "n_features": 8, "seed": 2}
    spec = job(loss="squared", normalize="rows", test={"split": "dataset", "dataset": "other"})
    problem, digest = build_problem(spec, SYNTHETIC, tmp_path)
    heldout = build_heldout(spec, SYNTHETIC, tmp_path, problem, narrow)
    assert heldout is not None
    A_test, b_test = load_matrix(narrow, tmp_path)
    dense = A_test.toarray()
    norms = np.linalg.norm(dense, axis=1, keepdims=True)
    expected = np.divide(dense, norms, out=np.zeros_like(dense), where=norms > 0)
    got = heldout.data.csr_matrix.toarray()
    assert got.shape == (200, 10) and not got[:, 8:].any()
    np.testing.assert_allclose(got[:, :8], expected, rtol=1e-14)
    np.testing.assert_array_equal(heldout.b, b_test)
    # the training data is the whole dataset: the digest of the job without test
    assert build_problem(job(loss="squared", normalize="rows"), SYNTHETIC, tmp_path)[1] == digest
    wide = {**SYNTHETIC, "n_features": 12, "seed": 3}
    with pytest.raises(ValueError, match="the test dataset has 12 features, more than the 10"):
        build_heldout(spec, SYNTHETIC, tmp_path, problem, wide)
    with pytest.raises(ValueError, match="test dataset 'other' is no longer registered"):
        build_heldout(spec, SYNTHETIC, tmp_path, problem, None)
