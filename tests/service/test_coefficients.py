"""A job's final coefficients end to end: a real Celery worker process runs the job, stores
its final iterate with its end, and the API returns exactly the x that
``solvers.run.solve`` returns for the same problem and seed (deterministic per seed)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient

from faceoff.api.main import create_app
from faceoff.core.models import SUCCEEDED
from faceoff.core.specs import JobSpec
from faceoff.solvers.catalogue import get_spec
from faceoff.solvers.path import solve_path
from faceoff.solvers.run import solve
from faceoff.solvers.trace import StopRules
from faceoff.worker.tasks import build_problem
from tests.backends import LOCAL
from tests.service.test_worker import (  # noqa: F401
    SMALL,
    add_dataset,
    service,
    submit,
    wait_until_done,
    worker_log,
)

PLANTED = {
    "kind": "synthetic",
    "generator": "multiclass",
    "n_samples": 300,
    "n_features": 20,
    "density": 0.5,
    "seed": 0,
    "n_classes": 3,
}


def direct_x(spec: JobSpec, source: dict, upload_dir: Path) -> np.ndarray:
    """The x of solvers.run.solve on the job's own problem, parameters, stop rules and seed."""
    problem, _ = build_problem(spec, source, upload_dir)
    params = get_spec(spec.solver).load_params(spec.params)
    limits = spec.stop
    stop = StopRules(max_epochs=limits.max_epochs, max_seconds=limits.max_seconds, tol=limits.tol)
    return solve(problem, spec.solver, params, stop, spec.solver_seed).x


def test_the_downloaded_x_is_the_solvers_x(service):  # noqa: F811
    small = add_dataset(service, SMALL)
    # epoch-bounded runs of a stochastic and a deterministic method, binary and K-class
    runs = [
        {"loss": "logistic", "l2": 1e-3, "solver": "saga", "seed": 3},
        {"loss": "smooth_hinge", "l2": 1e-3, "l1": 1e-3, "solver": "dual_cd", "seed": 1},
    ]
    multi = add_dataset(service, PLANTED)
    stop = {"max_epochs": 10, "tol": 0.0, "max_seconds": 60}
    jobs = [(small, fields, submit(service, small, **fields, stop=stop)) for fields in runs]
    k_class = {"loss": "logistic", "l2": 1e-3, "solver": "lbfgs", "multiclass": "multinomial"}
    jobs.append((multi, k_class, submit(service, multi, **k_class, stop=stop)))
    settings = service.settings
    with TestClient(create_app(settings), client=LOCAL) as client:
        for dataset, fields, job_id in jobs:
            job = wait_until_done(service, job_id)
            assert (job.status, job.error) == (SUCCEEDED, None)
            response = client.get(f"/api/v1/jobs/{job_id}/coefficients")
            assert response.status_code == 200, response.text
            got = np.load(io.BytesIO(response.content), allow_pickle=False)
            spec = JobSpec.model_validate(job.spec)
            source = SMALL if dataset == small else PLANTED
            expected = direct_x(spec, source, settings.upload_dir)
            assert got.dtype == np.float64 and got.shape == expected.shape
            np.testing.assert_array_equal(got, expected)
            if "multiclass" in fields:
                assert got.ndim == 2 and got.shape[1] == 3
                header = client.get(
                    f"/api/v1/jobs/{job_id}/coefficients", params={"format": "csv"}
                ).text.split("\n", 1)[0]
                assert header.count(",") == 3


def test_a_path_job_runs_every_lambda_and_reads_back_as_solve_path(service):  # noqa: F811
    """A path job in a real worker: one trace end to end whose λs (GET /jobs/{id}/path)
    are solve_path's on the job's own problem, each certified to tol; its coefficients are
    the last λ's solution; it records no reference P* (its last point is one λ's)."""
    small = add_dataset(service, SMALL)
    stop = {"tol": 1e-8, "max_epochs": 1e4, "max_seconds": 60}
    lasso = {"loss": "squared", "l2": 0.0, "solver": "ws_cd", "path": {"n_lambdas": 6}}
    logistic = {
        "loss": "logistic",
        "l2": 0.0,
        "solver": "primal_cd",
        "fit_intercept": True,
        "path": {"lambdas": [0.05, 0.02, 0.01, 0.005]},
    }
    jobs = [(fields, submit(service, small, **fields, stop=stop)) for fields in (lasso, logistic)]
    settings = service.settings
    with TestClient(create_app(settings), client=LOCAL) as client:
        for fields, job_id in jobs:
            job = wait_until_done(service, job_id)
            assert (job.status, job.error) == (SUCCEEDED, None)
            body = client.get(f"/api/v1/jobs/{job_id}/path").json()
            spec = JobSpec.model_validate(job.spec)
            problem, _ = build_problem(spec, SMALL, settings.upload_dir)
            params = get_spec(spec.solver).load_params(spec.params)
            rules = StopRules(max_epochs=1e4, max_seconds=60, tol=1e-8)
            path = spec.path
            assert path is not None
            direct = solve_path(
                problem, spec.solver, path.lambdas, params, rules, 0,
                n_lambdas=path.n_lambdas, ratio=path.ratio,
            )  # fmt: skip
            assert body["lambda_max"] == pytest.approx(direct.lambda_max, rel=1e-12)
            assert body["n_lambdas"] == len(direct.steps) == (6 if fields is lasso else 4)
            assert body["reached"] is True and body["tol"] == 1e-8
            got = [(s["index"], s["l1"], s["nnz"]) for s in body["steps"]]
            assert got == [(s.index, s.l1, s.nnz) for s in direct.steps]
            assert all(s["gap_rel"] <= 1e-8 for s in body["steps"])
            assert body["steps"][0]["ratio"] == pytest.approx(
                1.0 if fields is lasso else 0.05 / direct.lambda_max
            )
            assert body["seconds"] == pytest.approx(job.time_s)
            times = [s["time_s"] for s in body["steps"]]
            assert times == sorted(times)
            response = client.get(f"/api/v1/jobs/{job_id}/coefficients")
            got_x = np.load(io.BytesIO(response.content), allow_pickle=False)
            np.testing.assert_array_equal(got_x, direct.x)
            assert client.get(f"/api/v1/references/{job.objective_hash}").status_code == 404
