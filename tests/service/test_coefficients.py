"""A job's final coefficients end to end: a real Celery worker process runs the job, stores
its final iterate with its end, and the API returns exactly the x that
``solvers.run.solve`` returns for the same problem and seed (deterministic per seed)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
from fastapi.testclient import TestClient

from faceoff.api.main import create_app
from faceoff.core.models import SUCCEEDED
from faceoff.core.specs import JobSpec
from faceoff.solvers.catalogue import get_spec
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
