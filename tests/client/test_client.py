"""The Python client against a real uvicorn server (SQLite database, real Redis broker on a
unique queue); the ``faceoff`` client commands against the same server are in
tests/cli/test_service_cli.py."""

from __future__ import annotations

import threading
import time

import pytest
import uvicorn

from faceoff.api.main import create_app
from faceoff.cli.up import free_port
from faceoff.client import Client, ClientError, ServerUnreachable
from faceoff.core.db import session_scope
from faceoff.core.models import SUCCEEDED, Job, TracePoint, utcnow

JOB = {"dataset": "a1a", "loss": "logistic", "l2": 1e-4, "solver": "dual_cd"}


@pytest.fixture
def server(sqlite_url, redis_url, settings_for):
    """(base URL, settings) of the API served by uvicorn in a thread."""
    settings = settings_for(sqlite_url, redis_url)
    port = free_port()
    config = uvicorn.Config(create_app(settings), port=port, log_level="warning")
    runner = uvicorn.Server(config)
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not runner.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}", settings
    runner.should_exit = True
    thread.join(timeout=10)


def finish(settings, job_id: int, n_points: int = 4, stop_reason: str = "tol") -> None:
    """What a worker does: write the trace and mark the job succeeded."""
    with session_scope(settings.database_url) as session:
        job = session.get(Job, job_id)
        for seq in range(n_points):
            session.add(
                TracePoint(
                    job_id=job_id,
                    seq=seq,
                    iteration=seq,
                    epoch=float(seq),
                    time_s=0.01 * seq,
                    primal=1.0,
                    dual=1.0 - 10.0**-seq,
                    gap=10.0**-seq,
                    nnz_x=3,
                    extras={},
                )
            )
        job.status, job.stop_reason, job.finished_at = SUCCEEDED, stop_reason, utcnow()
        job.n_points, job.epoch, job.gap, job.primal = n_points, n_points - 1.0, 1e-3, 1.0
        job.trace_mode, job.wall_s = "native", 0.25


def test_client_round_trip(server, tmp_path):
    url, settings = server
    with Client(url) as client:
        job = client.submit_job(JOB)
        assert client.submit_job(JOB)["id"] == job["id"]
        assert client.job(job["id"])["status"] == "queued"
        assert client.jobs(solver="dual_cd")["count"] == 1
        finish(settings, job["id"])
        assert [p["seq"] for p in client.trace(job["id"], max_points=2)["data"]] == [0, 3]
        events = list(client.follow(job["id"], after_seq=1))
        assert [d["seq"] for k, d in events if k == "point"] == [2, 3]
        assert events[-1] == ("status", client.job(job["id"]))
        with pytest.raises(ClientError, match="already finished") as refused:
            client.cancel(job["id"])
        assert refused.value.status == 409
        with pytest.raises(ClientError, match="unknown solver 'x'") as invalid:
            client.submit_job({**JOB, "solver": "x"})
        assert invalid.value.status == 422 and str(invalid.value).startswith("solver: ")
        with pytest.raises(ClientError, match="job 77 not found"):
            list(client.follow(77))
        sweep = client.submit_sweep(
            {"datasets": ["a1a"], "losses": ["squared"], "l2": [1e-3], "solvers": ["agd", "saga"]}
        )
        assert client.sweep(sweep["id"])["progress"]["queued"] == 2
        assert {s["name"] for s in client.solvers()} >= {"dual_cd", "primal_cd", "agd"}
        toy = client.register_dataset("bc", {"kind": "sklearn", "name": "breast_cancer"})
        assert toy["n_features"] == 30
        path = tmp_path / "tiny.txt"
        path.write_bytes(b"1 1:1 2:2\n-1 2:1\n")
        uploaded = client.upload_dataset(path, n_features=4)
        assert uploaded["name"] == "tiny" and uploaded["n_features"] == 4
        assert client.datasets()["count"] == 3
        assert client.dataset_stats(toy["id"], loss="squared", l2=1e-2)["stats"]["d"] == 30
        assert client.health()["database"] == "ok"


def test_client_reports_an_unreachable_server():
    url = f"http://127.0.0.1:{free_port()}"
    with Client(url) as client, pytest.raises(ServerUnreachable) as err:
        client.jobs()
    assert f"cannot reach the Faceoff API at {url}" in str(err.value)
    assert "(make up)" in str(err.value)


def test_client_submits_k_class_jobs_and_reads_labels(server, tmp_path):
    url, _ = server
    path = tmp_path / "three.txt"
    path.write_bytes(b"1 1:1\n2 2:1\n3 1:1 2:1\n1 2:2\n")
    spec = {"dataset": "three", "loss": "logistic", "l2": 1e-3, "solver": "lbfgs"}
    with Client(url) as client:
        uploaded = client.upload_dataset(path)
        assert uploaded["labels"] == {
            "kind": "classes",
            "n_classes": 3,
            "counts": {"1": 2, "2": 1, "3": 1},
        }
        job = client.submit_job(spec, multiclass="multinomial")
        assert job["spec"]["multiclass"] == "multinomial"
        assert client.submit_job({**spec, "multiclass": "multinomial"})["id"] == job["id"]
        with pytest.raises(ClientError, match="^positive: dataset 'three' has 3 classes"):
            client.submit_job(spec)  # no silent binarization
        with pytest.raises(ClientError, match="^multiclass: ") as refused:
            client.submit_job({**spec, "solver": "dgpd"}, multiclass="multinomial")
        assert refused.value.status == 422
