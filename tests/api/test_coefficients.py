"""``GET /jobs/{id}/coefficients``: a finished job's final iterate as npy or csv, through the
app (SQLite and PostgreSQL), the Python client and ``faceoff coefficients``; refusals (404,
409, 422) and retention. A worker's effect is written with the worker's own store function
(tests/service/test_coefficients.py runs a real worker)."""

from __future__ import annotations

import io
from datetime import timedelta

import numpy as np
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from faceoff.api.main import create_app
from faceoff.cli.main import main
from faceoff.client import Client, ClientError
from faceoff.core.db import session_scope
from faceoff.core.models import FAILED, RUNNING, SUCCEEDED, JobCoefficients, utcnow
from faceoff.core.retention import prune
from faceoff.worker.store import Coefficients, write_coefficients
from tests.api.test_auth import make_token, secured  # noqa: F401
from tests.api.test_routes import JOB, add_points, api, set_job  # noqa: F401
from tests.backends import LOCAL
from tests.client.test_client import finish, server  # noqa: F401


def submitted(client: TestClient, headers: dict[str, str] | None = None, **spec) -> int:
    response = client.post("/api/v1/jobs", json={**JOB, **spec, "force": True}, headers=headers)
    assert response.status_code == 201, response.text
    return response.json()["id"]


def store(settings, job_id: int, x: np.ndarray, classes=None, status: str = SUCCEEDED) -> None:
    """What the worker does at a job's end: its last points, its x, its terminal status."""
    add_points(settings, job_id, range(3))
    with session_scope(settings.database_url) as session:
        write_coefficients(session, job_id, Coefficients(x, classes))
    set_job(settings, job_id, status=status, finished_at=utcnow())


def npy(response) -> np.ndarray:
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/octet-stream"
    assert int(response.headers["content-length"]) == len(response.content)
    return np.load(io.BytesIO(response.content), allow_pickle=False)


def test_a_finished_jobs_x_comes_back_exactly_as_npy_and_csv(api):  # noqa: F811
    client, settings = api
    job_id = submitted(client)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(1000) * 10.0 ** rng.integers(-300, 300, 1000)
    x[:3] = (0.0, -0.0, 1 / 3)
    store(settings, job_id, x)
    url = f"/api/v1/jobs/{job_id}/coefficients"
    got = npy(client.get(url))  # npy by default
    assert got.dtype == np.float64 and got.shape == (1000,)
    assert got.tobytes() == x.tobytes()  # bit for bit, the sign of -0.0 too
    assert npy(client.get(url, params={"format": "npy"})).tobytes() == x.tobytes()
    csv = client.get(url, params={"format": "csv"})
    assert csv.status_code == 200 and csv.headers["content-type"].startswith("text/csv")
    assert f"job-{job_id}-coefficients.csv" in csv.headers["content-disposition"]
    lines = csv.text.splitlines()
    assert lines[0] == "feature,coef" and len(lines) == 1001
    assert lines[1:4] == ["0,0.0", "1,-0.0", f"2,{1 / 3!r}"]
    table = np.loadtxt(io.StringIO(csv.text), delimiter=",", skiprows=1)
    assert table[:, 0].tolist() == list(range(1000))
    assert table[:, 1].tobytes() == x.tobytes()  # shortest round-trip decimals


def test_an_intercept_is_the_last_coefficient_and_named_in_csv(api):  # noqa: F811
    client, settings = api
    job_id = submitted(client, solver="lbfgs", fit_intercept=True)
    x = np.array([0.5, 0.0, -2.0, 3.25])  # (w, c)
    store(settings, job_id, x)
    url = f"/api/v1/jobs/{job_id}/coefficients"
    assert npy(client.get(url)).tolist() == x.tolist()
    lines = client.get(url, params={"format": "csv"}).text.splitlines()
    assert lines == ["feature,coef", "0,0.5", "1,0.0", "2,-2.0", "intercept,3.25"]


def test_a_k_class_job_has_one_column_per_class_named_by_its_label(api):  # noqa: F811
    client, settings = api
    job_id = submitted(client)
    x = np.arange(12.0).reshape(4, 3) - 5.5  # (d, K), C order
    store(settings, job_id, x, classes=np.array([-1.0, 2.0, 7.5]), status=FAILED)
    url = f"/api/v1/jobs/{job_id}/coefficients"
    got = npy(client.get(url))
    assert got.shape == (4, 3) and np.array_equal(got, x)
    csv = client.get(url, params={"format": "csv"}).text.splitlines()
    assert csv[0] == "feature,-1,2,7.5"
    assert csv[1:] == [f"{i},{','.join(map(repr, row))}" for i, row in enumerate(x.tolist())]
    # a Fortran-ordered x is stored in C order
    other = submitted(client, l2=1e-3)
    store(settings, other, np.asfortranarray(x), classes=np.array([0.0, 1.0, 2.0]))
    assert np.array_equal(npy(client.get(f"/api/v1/jobs/{other}/coefficients")), x)


def test_refusals_name_the_reason(api):  # noqa: F811
    client, settings = api
    job_id = submitted(client)
    url = f"/api/v1/jobs/{job_id}/coefficients"
    queued = client.get(url)
    assert queued.status_code == 409
    assert queued.json()["detail"].startswith(f"job {job_id} has not finished (status queued)")
    set_job(settings, job_id, status=RUNNING)
    assert "status running" in client.get(url).json()["detail"]
    set_job(settings, job_id, status=FAILED, finished_at=utcnow())
    none = client.get(url, params={"format": "csv"})
    assert none.status_code == 409 and "has no stored coefficients" in none.json()["detail"]
    bad = client.get(url, params={"format": "parquet"})
    assert bad.status_code == 422
    [error] = bad.json()["detail"]
    assert error["loc"] == ["query", "format"]
    assert "'npy'" in error["msg"] and "'csv'" in error["msg"]
    missing = client.get(f"/api/v1/jobs/{job_id + 1000}/coefficients")
    assert missing.status_code == 404
    assert missing.json()["detail"] == f"job {job_id + 1000} not found"


def test_another_teams_job_is_not_found(secured):  # noqa: F811
    client, settings, alpha, beta = secured
    job_id = submitted(client, alpha)
    store(settings, job_id, np.ones(5))
    url = f"/api/v1/jobs/{job_id}/coefficients"
    assert client.get(url, headers=alpha).status_code == 200
    theirs = client.get(url, headers=beta)
    assert theirs.status_code == 404 and theirs.json()["detail"] == f"job {job_id} not found"
    assert client.get(url).status_code == 401


def test_prune_deletes_the_coefficients_of_the_jobs_it_prunes(api):  # noqa: F811
    client, settings = api
    old, recent = submitted(client), submitted(client, l2=1e-3)
    for job_id in (old, recent):
        store(settings, job_id, np.ones(3))
    set_job(settings, old, finished_at=utcnow() - timedelta(days=100))
    with session_scope(settings.database_url) as session:
        done = prune(session, utcnow() - timedelta(days=90))
    assert (done.jobs, done.coefficients_deleted) == (1, 1)
    assert done.as_dict()["coefficients_deleted"] == 1
    with session_scope(settings.database_url) as session:
        assert list(session.scalars(select(JobCoefficients.job_id))) == [recent]
    gone = client.get(f"/api/v1/jobs/{old}/coefficients")
    assert gone.status_code == 409 and "retention" in gone.json()["detail"]
    assert client.get(f"/api/v1/jobs/{recent}/coefficients").status_code == 200


def test_the_client_downloads_and_loads_x(sqlite_url, redis_url, settings_for):
    settings = settings_for(sqlite_url, redis_url)
    with TestClient(create_app(settings), client=LOCAL) as http:
        job_id = submitted(http)
        client = Client("http://testserver", http=http)
        with pytest.raises(ClientError) as refused:
            client.coefficients(job_id)
        assert refused.value.status == 409 and "not finished" in str(refused.value)
        x = np.linspace(-1, 1, 7)
        store(settings, job_id, x)
        got = client.coefficients(job_id)
        assert got.dtype == np.float64 and got.tobytes() == x.tobytes()
        out = io.BytesIO()
        size = client.download_coefficients(job_id, out, "csv")
        assert size == len(out.getvalue()) and out.getvalue().startswith(b"feature,coef\n0,-1.0\n")


def test_cli_writes_a_file_or_standard_output(server, tmp_path, capsys, monkeypatch):  # noqa: F811
    url, settings = server
    monkeypatch.delenv("FACEOFF_TOKEN", raising=False)
    job_id = Client(url).submit_job(JOB)["id"]
    target = tmp_path / "x.npy"
    assert main(["coefficients", str(job_id), "--url", url, "-o", str(target)]) == 2
    assert "not finished" in capsys.readouterr().err
    assert not target.exists() and not (tmp_path / "x.npy.part").exists()
    finish(settings, job_id)
    x = np.array([0.5, -2.0, 3e-300])
    with session_scope(settings.database_url) as session:
        write_coefficients(session, job_id, Coefficients(x))
    args = ["coefficients", str(job_id), "--url", url]
    assert main([*args, "--format", "npy", "-o", str(target)]) == 0
    assert f"written to {target}" in capsys.readouterr().out
    assert np.load(target).tobytes() == x.tobytes()
    assert main(args) == 0  # csv on standard output by default
    assert capsys.readouterr().out == "feature,coef\n0,0.5\n1,-2.0\n2,3e-300\n"
    with pytest.raises(SystemExit) as refused:  # argparse refuses it
        main([*args, "--format", "json"])
    assert refused.value.code == 2
    assert "invalid choice" in capsys.readouterr().err
    assert main(["coefficients", str(job_id + 99), "--url", url]) == 2
    assert f"job {job_id + 99} not found" in capsys.readouterr().err
