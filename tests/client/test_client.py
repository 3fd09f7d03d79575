"""The Python client and the ``faceoff`` client subcommands against a real uvicorn server
(SQLite database, real Redis broker on a unique queue)."""

from __future__ import annotations

import threading
import time

import pytest
import uvicorn

from faceoff.api.main import create_app
from faceoff.cli.main import main
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


def test_cli_commands(server, tmp_path, capsys, monkeypatch):
    url, settings = server
    argv = ["--url", url, "--dataset", "a1a", "--loss", "logistic", "--l2", "1e-4"]
    assert main(["submit", *argv, "--solver", "spdc", "--param", "batch_size=8"]) == 0
    assert capsys.readouterr().out.startswith("submitted job 1 (queued): spdc on a1a")
    assert main(["submit", *argv, "--solver", "spdc", "--param", "batch_size=0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "params.batch_size" in err[0] and "outside [1" in err[0]
    assert main(["submit", *argv, "--solver", "agd", "--max-seconds", "1e9"]) == 2
    assert "max_seconds" in capsys.readouterr().err

    sweep = tmp_path / "sweep.yaml"
    sweep.write_text("datasets: [a1a]\nlosses: [logistic]\nl2: [1e-3, 1e-4]\nsolvers: [agd]\n")
    assert main(["sweep", "--url", url, str(sweep)]) == 0
    assert capsys.readouterr().out.strip() == "sweep 1: 2 jobs, 2 queued"
    sweep.write_text("datasets: [a1a\n")
    assert main(["sweep", "--url", url, str(sweep)]) == 2
    assert "is not valid YAML" in capsys.readouterr().err
    sweep.write_bytes(b"datasets: [a1a]\nname: \xff\n")
    assert main(["sweep", "--url", url, str(sweep)]) == 2
    assert capsys.readouterr().err == (
        f"faceoff sweep: error: {sweep} is not UTF-8 text (byte 23)\n"
    )

    assert main(["status", "--url", url, "--sweep", "1"]) == 0
    assert "sweep 1: 2 jobs" in capsys.readouterr().out
    assert main(["status", "--url", url, "--format", "json"]) == 0
    assert '"count": 3' in capsys.readouterr().out

    finish(settings, 1)
    assert main(["trace", "--url", url, "1"]) == 0
    assert "job 1: succeeded, 4 points; native trace, wall 0.25 s" in capsys.readouterr().out
    assert main(["trace", "--url", url, "1", "--follow"]) == 0
    assert capsys.readouterr().out.startswith(
        "job 1: succeeded (tol), epoch 3, gap 1.000e-03; native trace, wall 0.25 s"
    )
    assert main(["status", "--url", url, "1", "--wide"]) == 0
    header, row = capsys.readouterr().out.splitlines()[1:3]
    assert header.endswith("stop  trace, wall s")
    assert row.split()[-3:] == ["tol", "native,", "0.25"]

    assert main(["cancel", "--url", url, "2"]) == 0
    assert capsys.readouterr().out.strip() == "job 2: cancelled"
    assert main(["cancel", "--url", url, "1"]) == 2
    assert "only queued or running jobs" in capsys.readouterr().err
    assert main(["status", "--url", url, "99"]) == 2
    assert "job 99 not found" in capsys.readouterr().err


def test_cli_unreachable_server(capsys, monkeypatch):
    url = f"http://127.0.0.1:{free_port()}"
    monkeypatch.setenv("FACEOFF_URL", url)
    assert main(["status"]) == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"faceoff status: error: cannot reach the Faceoff API at {url}")
