"""Held-out metrics end to end: a real Celery worker process runs a job with a random
hold-out, trains on the other rows and stores the test metrics in every trace point's
extras; the last point's equal numpy's on the job's stored final iterate, over the rows an
independent draw holds out."""

from __future__ import annotations

import numpy as np
import pytest
from sqlalchemy import select

from faceoff.core.datasets import load_matrix
from faceoff.core.db import session_scope
from faceoff.core.jobs import coefficient_array
from faceoff.core.models import SUCCEEDED, JobCoefficients
from faceoff.core.references import data_digest
from tests.service.test_worker import (  # noqa: F401
    SMALL,
    add_dataset,
    check_trace,
    get_job,
    service,
    submit,
    wait_until_done,
    worker_log,
)

HOLD_OUT = {"split": "random", "fraction": 0.25, "seed": 11}
STOP = {"max_epochs": 20, "tol": 1e-9, "max_seconds": 60}
RUNS = [
    {"loss": "logistic", "l2": 1e-3, "solver": "lbfgs", "fit_intercept": True},
    {"loss": "squared", "l2": 1e-3, "solver": "saga", "seed": 2},
]


def held_out_rows(n: int, fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(training rows, test rows) of the documented draw, computed here on its own."""
    chosen = np.random.default_rng(seed).permutation(n)[: round(fraction * n)]
    test = np.zeros(n, dtype=bool)
    test[chosen] = True
    return np.flatnonzero(~test), np.flatnonzero(test)


def expected_metrics(A, b: np.ndarray, loss: str, x: np.ndarray, intercept: bool) -> dict:
    d = A.shape[1]
    z = A @ x[:d] + (x[d] if intercept else 0.0)
    if loss == "squared":
        r2 = 1 - np.sum((b - z) ** 2) / np.sum((b - b.mean()) ** 2)
        return {"loss": np.mean(0.5 * (z - b) ** 2), "r2": r2}
    return {"loss": np.mean(np.logaddexp(0.0, -b * z)), "accuracy": np.mean(b * z > 0)}


def test_a_random_hold_out_job_records_test_metrics_at_every_point(service, tmp_path):  # noqa: F811
    small = add_dataset(service, SMALL)
    A, b = load_matrix(SMALL, tmp_path)
    train, test = held_out_rows(A.shape[0], HOLD_OUT["fraction"], HOLD_OUT["seed"])
    jobs = [submit(service, small, **fields, test=HOLD_OUT, stop=STOP) for fields in RUNS]
    plain = submit(service, small, **RUNS[0], stop=STOP)
    for fields, job_id in zip(RUNS, jobs, strict=True):
        job = wait_until_done(service, job_id)
        assert (job.status, job.error) == (SUCCEEDED, None)
        points = check_trace(service, job)
        assert len(points) >= 3
        metric = "r2" if fields["loss"] == "squared" else "accuracy"
        for point in points:
            assert set(point.extras["test"]) == {"loss", metric}, point.extras
        # the solver trained on the other rows: the digest of the training rows' data
        labels = b[train] if fields["loss"] == "squared" else np.where(b[train] > 0, 1.0, -1.0)
        assert job.data_hash == data_digest(A[train], labels)
        with session_scope(service.url) as session:
            row = session.scalars(
                select(JobCoefficients).where(JobCoefficients.job_id == job_id)
            ).one()
            x = coefficient_array(row).copy()
        expected = expected_metrics(
            A[test], b[test], fields["loss"], x, fields.get("fit_intercept", False)
        )
        got = points[-1].extras["test"]
        for name, value in expected.items():
            assert got[name] == pytest.approx(value, rel=1e-9, abs=1e-12), name
        if fields["loss"] == "logistic":
            assert got["accuracy"] > 0.6 and got["loss"] < np.log(2)
    whole = wait_until_done(service, plain)
    assert whole.status == SUCCEEDED
    assert "test" not in check_trace(service, whole)[0].extras
    assert whole.objective_hash != get_job(service, jobs[0]).objective_hash
