"""Extreme but finite numbers (subnormal, tiny, huge) and integers that are not quite integers,
on a real uvicorn API, PostgreSQL, Redis and a worker: a range the math needs is validated
with a 422 naming the field and the range, never a 500 or a ZeroDivisionError in a worker;
an integer is a JSON integer in a body and ASCII digits in a query, path or form field.

Round 3 found ``GET /datasets/{id}/stats?loss=smooth_hinge&gamma=1e-310`` answering 500 and
an spdc job with that γ failing with ZeroDivisionError (SPDC divided by λ·γ, with γ = 1/β
and β = 1/γ overflowed to inf)."""

from __future__ import annotations

import time

import httpx
import pytest

from faceoff.core.specs import GAMMA_MAX, GAMMA_MIN
from tests.reliability.servers import TINY, api_env, running_api
from tests.service.workers import running_worker

SUBNORMAL = 1e-310
JOB = {
    "dataset": "tiny",
    "loss": "smooth_hinge",
    "l2": 1e-2,
    "solver": "spdc",
    "stop": {"max_epochs": 5, "max_seconds": 10},
}


@pytest.fixture(scope="module")
def service(module_postgres_url, redis_url, module_settings_for):
    """One API and worker for the module's tests (each counts only the jobs it adds)."""
    settings = module_settings_for(module_postgres_url, redis_url)
    with (
        running_worker(settings) as worker,
        running_api(api_env(settings), settings.HOME / "faceoff.api.log") as api,
        httpx.Client(base_url=api.url, timeout=30) as client,
    ):
        made = client.post("/datasets", json={"name": "tiny", "source": TINY})
        assert made.status_code == 201, made.text
        yield client, made.json()["id"], worker


def assert_gamma_refused(response: httpx.Response, where: str) -> None:
    assert response.status_code == 422, response.text
    (error,) = response.json()["detail"]
    assert error["loc"] == [where, "gamma"], error
    assert f"gamma must be in [{GAMMA_MIN:g}, {GAMMA_MAX:g}]" in error["msg"], error


def test_a_subnormal_gamma_is_a_422_naming_gamma_and_its_range(service):
    client, dataset_id, worker = service
    jobs = client.get("/jobs").json()["count"]
    stats = client.get(
        f"/datasets/{dataset_id}/stats", params={"loss": "smooth_hinge", "gamma": SUBNORMAL}
    )
    assert_gamma_refused(stats, "query")
    for gamma in (SUBNORMAL, 5e-324, 9.9e-7):
        assert_gamma_refused(client.post("/jobs", json={**JOB, "gamma": gamma}), "body")
    sweep = {
        "datasets": ["tiny"],
        "losses": ["smooth_hinge"],
        "gamma": SUBNORMAL,
        "l2": [1e-2],
        "solvers": ["spdc"],
    }
    assert_gamma_refused(client.post("/sweeps", json=sweep), "body")
    reference = {k: v for k, v in JOB.items() if k != "stop"} | {"gamma": SUBNORMAL}
    assert_gamma_refused(client.post("/references", json=reference), "body")
    assert client.get("/jobs").json()["count"] == jobs


def test_the_smallest_gamma_is_served_and_run(service):
    """At γ = GAMMA_MIN the statistics answer and an spdc job runs to its budget."""
    client, dataset_id, worker = service
    stats = client.get(
        f"/datasets/{dataset_id}/stats", params={"loss": "smooth_hinge", "gamma": GAMMA_MIN}
    )
    assert stats.status_code == 200, stats.text
    assert stats.json()["advice"]["gamma"] == GAMMA_MIN
    made = client.post("/jobs", json={**JOB, "gamma": GAMMA_MIN})
    assert made.status_code == 201, made.text
    deadline = time.monotonic() + 120
    while (job := client.get(f"/jobs/{made.json()['id']}").json())["status"] in (
        "queued",
        "running",
    ):
        assert time.monotonic() < deadline, worker.log()[-3000:]
        time.sleep(0.2)
    assert job["status"] == "succeeded", (job["error"], worker.log()[-3000:])
    assert job["stop_reason"] == "max_epochs" and job["gap"] is not None


@pytest.mark.parametrize("l2", [SUBNORMAL, 1e-300])
def test_a_tiny_l2_never_answers_500(service, l2):
    """λ has no floor the math needs at submission (a run diverges cleanly, recorded as
    such), but its statistics must not fail."""
    client, dataset_id, _ = service
    stats = client.get(f"/datasets/{dataset_id}/stats", params={"loss": "logistic", "l2": l2})
    assert stats.status_code == 200, stats.text


NOT_INTEGERS = [True, "3_0", "٣٠", 3.5, 3.0, "3"]  # JSON integers only (solvers.integers)


def test_integer_fields_take_json_integers_only(service):
    """Round 3: ``true``, ``"3_0"`` and ``"٣٠"`` were accepted as integer parameters (1, 30,
    30): Python's int() reads them all."""
    client, _, _ = service
    jobs = client.get("/jobs").json()["count"]
    for value in NOT_INTEGERS:
        cases = {
            ("params", "batch_size"): {**JOB, "params": {"batch_size": value}},
            ("params", "memory"): {**JOB, "solver": "lbfgs", "params": {"memory": value}},
            ("seed",): {**JOB, "seed": value},
            ("repeat",): {**JOB, "repeat": value},
        }
        for loc, body in cases.items():
            response = client.post("/jobs", json=body)
            assert response.status_code == 422, (value, loc, response.text)
            assert response.json()["detail"][0]["loc"] == ["body", *loc], response.text
        sweep = {
            "datasets": ["tiny"],
            "losses": ["logistic"],
            "l2": [1e-2],
            "solvers": ["dual_cd"],
            "seeds": [0, value],
        }
        response = client.post("/sweeps", json=sweep)
        assert response.status_code == 422, (value, response.text)
        source = {**TINY, "n_samples": value}
        response = client.post("/datasets", json={"name": "bad", "source": source})
        assert response.status_code == 422, (value, response.text)
    assert client.get("/jobs").json()["count"] == jobs
    assert client.post("/jobs", json={**JOB, "params": {"batch_size": 3}}).status_code == 201


def test_integers_in_text_are_ascii_digits(service):
    client, dataset_id, _ = service
    for text in ("3_0", "٣٠", " 3", "+3", "1e1", "3.0"):
        for path, params in [
            ("/jobs", {"limit": text}),
            ("/jobs", {"sweep_id": text}),
            (f"/jobs/{text}", {}),
            (f"/datasets/{text}/stats", {}),
            ("/sweeps", {"offset": text}),
        ]:
            response = client.get(path, params=params)
            assert response.status_code == 422, (path, params, response.text)
        upload = client.post(
            "/datasets/upload",
            files={"file": ("x.svm", b"1 1:1\n-1 2:1\n")},
            data={"name": "up", "n_features": text},
        )
        assert upload.status_code == 422, (text, upload.text)
        assert upload.json()["detail"][0]["loc"] == ["body", "n_features"]
    assert client.get("/jobs", params={"limit": "3"}).status_code == 200
    assert client.get(f"/datasets/{dataset_id}").status_code == 200
