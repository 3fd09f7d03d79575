"""The REST API on SQLite and PostgreSQL with a real Redis broker (jobs are really sent to a
unique queue that no worker consumes). A worker's effect is simulated with the ORM."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from dataclasses import replace

import pytest
import redis
from fastapi.testclient import TestClient

from faceoff.api.main import create_app
from faceoff.core.db import session_scope
from faceoff.core.models import RUNNING, SUCCEEDED, Job, TracePoint, utcnow
from faceoff.core.references import content_objective_hash
from tests.backends import LOCAL

JOB = {"dataset": "a1a", "loss": "logistic", "l2": 1e-4, "solver": "dual_cd"}


@pytest.fixture
def api(database_url, redis_url, settings_for):
    """(TestClient, settings) of a fresh app on a fresh database."""
    settings = settings_for(database_url, redis_url, MAX_SWEEP_JOBS=20, MAX_JOB_SECONDS=600)
    with TestClient(create_app(settings), client=LOCAL) as client:
        yield client, settings


def queued(settings) -> int:
    """Messages waiting in the test's own Celery queue."""
    with redis.Redis.from_url(settings.BROKER_URL) as r:
        return r.llen(settings.QUEUE)


def set_job(settings, job_id: int, **values) -> None:
    with session_scope(settings.database_url) as session:
        job = session.get(Job, job_id)
        for key, value in values.items():
            setattr(job, key, value)


def add_points(settings, job_id: int, seqs, epoch=lambda s: 0.01 * 1.1**s) -> None:
    """Trace points as a worker writes them (and the job's summary)."""
    with session_scope(settings.database_url) as session:
        for seq in seqs:
            session.add(
                TracePoint(
                    job_id=job_id,
                    seq=seq,
                    iteration=10 * seq,
                    epoch=epoch(seq),
                    time_s=0.001 * seq,
                    primal=1.0 + 1.0 / (seq + 1),
                    dual=1.0 - 1.0 / (seq + 1),
                    gap=2.0 / (seq + 1),
                    nnz_x=seq,
                    extras={"coord_epochs": epoch(seq)},
                )
            )
        job = session.get(Job, job_id)
        job.n_points = max(seqs) + 1
        job.epoch, job.gap, job.primal = epoch(max(seqs)), 2.0 / (max(seqs) + 1), 1.0


def test_submit_job_enqueues_and_deduplicates(api):
    client, settings = api
    first = client.post("/api/v1/jobs", json=JOB)
    assert first.status_code == 201, first.text
    job = first.json()
    assert job["status"] == "queued" and job["spec"]["params"] == {
        "sampling": "auto",
        "step": "exact",
        "accelerate": "auto",
        "shrinking": "auto",
    }
    assert queued(settings) == 1
    same = client.post("/api/v1/jobs", json={**JOB, "params": {"sampling": "auto"}})
    assert same.status_code == 200 and same.json()["id"] == job["id"]
    forced = client.post("/api/v1/jobs", json={**JOB, "force": True})
    assert forced.status_code == 201 and forced.json()["id"] != job["id"]
    assert queued(settings) == 2
    datasets = client.get("/api/v1/datasets").json()
    assert datasets["count"] == 1
    assert datasets["data"][0]["source"] == {"kind": "registry", "name": "a1a"}
    set_job(settings, job["id"], status="failed")
    set_job(settings, forced.json()["id"], status="cancelled")
    again = client.post("/api/v1/jobs", json=JOB)  # failed and cancelled jobs are not reused
    assert again.status_code == 201 and queued(settings) == 3


@pytest.mark.parametrize(
    "change, loc, words",
    [
        ({"solver": "nope"}, ["body", "solver"], "accepted: primal_cd"),
        ({"params": {"nope": 1}}, ["body", "params", "nope"], "accepted: sampling, step"),
        ({"params": {"sampling": "x"}}, ["body", "params", "sampling"], "not one of"),
        (
            {"solver": "saga", "params": {"step_scale": 1e9}},
            ["body", "params", "step_scale"],
            "outside",
        ),
        ({"dataset": "a9"}, ["body", "dataset"], "did you mean"),
        ({"stop": {"max_seconds": 3600}}, ["body", "stop", "max_seconds"], "limit of 600"),
    ],
)
def test_submit_job_checks_the_catalogue(sqlite_url, redis_url, settings_for, change, loc, words):
    settings = settings_for(sqlite_url, redis_url, MAX_JOB_SECONDS=600)
    with TestClient(create_app(settings), client=LOCAL) as client:
        response = client.post("/api/v1/jobs", json={**JOB, **change})
    assert response.status_code == 422
    (error,) = response.json()["detail"]
    assert error["loc"] == loc and words in error["msg"]
    assert queued(settings) == 0


def test_list_filter_and_read_jobs(api):
    client, settings = api
    ids = [
        client.post("/api/v1/jobs", json={**JOB, "seed": seed, "solver": solver}).json()["id"]
        for seed in range(3)
        for solver in ("dual_cd", "primal_cd")
    ]
    set_job(settings, ids[0], status=RUNNING)
    page = client.get("/api/v1/jobs", params={"limit": 2, "offset": 1}).json()
    assert page["count"] == 6 and [j["id"] for j in page["data"]] == ids[::-1][1:3]
    assert client.get("/api/v1/jobs", params={"solver": "primal_cd"}).json()["count"] == 3
    assert client.get("/api/v1/jobs", params={"status": "running"}).json()["count"] == 1
    assert (
        client.get("/api/v1/jobs", params={"dataset": "a1a", "loss": "logistic"}).json()["count"]
        == 6
    )
    assert client.get("/api/v1/jobs", params={"dataset": "a9a"}).json()["count"] == 0
    assert client.get(f"/api/v1/jobs/{ids[2]}").json()["spec"]["seed"] == 1
    missing = client.get("/api/v1/jobs/999999")
    assert missing.status_code == 404 and missing.json() == {"detail": "job 999999 not found"}


def test_trace_downsampling_keeps_first_and_last(api):
    client, settings = api
    job_id = client.post("/api/v1/jobs", json=JOB).json()["id"]
    add_points(settings, job_id, range(200))
    full = client.get(f"/api/v1/jobs/{job_id}/trace").json()
    assert full["n_points"] == 200 and [p["seq"] for p in full["data"]] == list(range(200))
    small = client.get(f"/api/v1/jobs/{job_id}/trace", params={"max_points": 20}).json()["data"]
    seqs = [p["seq"] for p in small]
    assert seqs[0] == 0 and seqs[-1] == 199 and 10 <= len(seqs) <= 20
    assert seqs == sorted(set(seqs))
    later = client.get(f"/api/v1/jobs/{job_id}/trace", params={"after_seq": 195}).json()["data"]
    assert [p["seq"] for p in later] == [196, 197, 198, 199]
    assert later[0]["extras"]["coord_epochs"] == pytest.approx(0.01 * 1.1**196)


def _events(text: str) -> list[tuple[str, str]]:
    import json

    out = []
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "event" in lines:
            out.append((lines["event"], json.loads(lines["data"])))
    return out


def test_events_stream_points_and_status_until_terminal(api):
    client, settings = api
    job_id = client.post("/api/v1/jobs", json=JOB).json()["id"]
    add_points(settings, job_id, range(3))

    def worker() -> None:
        time.sleep(0.3)
        set_job(settings, job_id, status=RUNNING, started_at=utcnow())
        time.sleep(0.6)
        add_points(settings, job_id, range(3, 6))
        time.sleep(0.6)
        set_job(settings, job_id, status=SUCCEEDED, finished_at=utcnow(), stop_reason="tol")

    thread = threading.Thread(target=worker)
    thread.start()
    with client.stream("GET", f"/api/v1/jobs/{job_id}/events", params={"after_seq": 0}) as r:
        assert r.headers["content-type"].startswith("text/event-stream")
        text = r.read().decode()
    thread.join()
    events = _events(text)
    points = [data["seq"] for kind, data in events if kind == "point"]
    statuses = [data["status"] for kind, data in events if kind == "status"]
    assert points == [1, 2, 3, 4, 5]
    assert statuses == ["queued", "running", "succeeded"]
    assert events[-1][0] == "status"
    resumed = client.get(f"/api/v1/jobs/{job_id}/events", headers={"Last-Event-ID": "4"})
    assert [d["seq"] for k, d in _events(resumed.text) if k == "point"] == [5]
    assert client.get("/api/v1/jobs/424242/events").status_code == 404


def test_cancel(api):
    client, settings = api
    ids = [client.post("/api/v1/jobs", json={**JOB, "seed": s}).json()["id"] for s in range(3)]
    cancelled = client.post(f"/api/v1/jobs/{ids[0]}/cancel")
    assert cancelled.status_code == 200
    assert cancelled.json()["status"] == "cancelled" and cancelled.json()["cancel_requested"]
    set_job(settings, ids[1], status=RUNNING)
    running = client.post(f"/api/v1/jobs/{ids[1]}/cancel").json()
    assert running["status"] == "running" and running["cancel_requested"]
    set_job(settings, ids[2], status=SUCCEEDED)
    for job_id in (ids[0], ids[2]):
        refused = client.post(f"/api/v1/jobs/{job_id}/cancel")
        assert refused.status_code == 409 and "only queued or running" in refused.json()["detail"]
    assert client.post("/api/v1/jobs/31337/cancel").status_code == 404


SWEEP = {
    "name": "small",
    "datasets": ["a1a"],
    "losses": ["logistic", "squared"],
    "l2": [1e-3, 1e-4],
    "solvers": ["agd", {"solver": "dual_cd", "params": {"sampling": ["uniform", "importance"]}}],
}


def test_sweeps(api):
    client, settings = api
    standalone = client.post("/api/v1/jobs", json={**JOB, "l2": 1e-3, "solver": "agd"}).json()
    created = client.post("/api/v1/sweeps", json=SWEEP)
    assert created.status_code == 201, created.text
    sweep = created.json()
    assert sweep["n_jobs"] == 12 and sweep["progress"]["queued"] == 12
    assert queued(settings) == 1 + 11  # the standalone job was adopted, not sent again
    jobs = client.get("/api/v1/jobs", params={"sweep_id": sweep["id"], "limit": 50}).json()
    assert jobs["count"] == 12 and standalone["id"] in [j["id"] for j in jobs["data"]]
    again = client.post("/api/v1/sweeps", json=SWEEP)
    assert again.status_code == 200 and again.json()["id"] == sweep["id"]
    assert queued(settings) == 12
    forced = client.post("/api/v1/sweeps", json={**SWEEP, "force": True})
    assert forced.status_code == 201 and queued(settings) == 24
    set_job(settings, standalone["id"], status=SUCCEEDED)
    progress = client.get(f"/api/v1/sweeps/{sweep['id']}").json()["progress"]
    assert progress == {"queued": 11, "running": 0, "succeeded": 1, "failed": 0, "cancelled": 0}
    assert client.get("/api/v1/sweeps").json()["count"] == 2
    assert client.get("/api/v1/sweeps/777").status_code == 404


def test_sweep_size_limit_and_invalid_combination(sqlite_url, redis_url, settings_for):
    settings = settings_for(sqlite_url, redis_url, MAX_SWEEP_JOBS=20)
    with TestClient(create_app(settings), client=LOCAL) as client:
        big = client.post("/api/v1/sweeps", json={**SWEEP, "seeds": list(range(10))})
        bad = client.post(
            "/api/v1/sweeps", json={**SWEEP, "solvers": [{"solver": "saga", "params": {"x": 1}}]}
        )
        assert client.get("/api/v1/jobs").json()["count"] == 0
    # 4 objectives × (agd once + dual_cd's 2 settings × 10 seeds): agd uses no seed
    assert big.status_code == 422 and "84 jobs" in big.json()["detail"][0]["msg"]
    assert bad.status_code == 422
    assert bad.json()["detail"][0]["loc"] == ["body", "solvers", 0, "params", "x"]
    assert queued(settings) == 0


def test_register_datasets_and_stats(api):
    client, _ = api
    synthetic = {
        "kind": "synthetic",
        "generator": "classification",
        "n_samples": 200,
        "n_features": 30,
        "density": 0.2,
        "seed": 1,
    }
    made = client.post("/api/v1/datasets", json={"name": "toy", "source": synthetic})
    assert made.status_code == 201, made.text
    toy = made.json()
    assert (toy["n_samples"], toy["n_features"], toy["nnz"]) == (200, 30, 1200)
    same = client.post("/api/v1/datasets", json={"name": "toy", "source": synthetic})
    assert same.status_code == 200 and same.json()["id"] == toy["id"]
    taken = client.post(
        "/api/v1/datasets",
        json={"name": "toy", "source": {"kind": "sklearn", "name": "breast_cancer"}},
    )
    assert taken.status_code == 409 and "taken" in taken.json()["detail"]
    public = client.post(
        "/api/v1/datasets", json={"name": "A1", "source": {"kind": "registry", "name": "a1a"}}
    )
    assert public.status_code == 201 and public.json()["n_features"] == 123
    unknown = client.post(
        "/api/v1/datasets", json={"name": "x", "source": {"kind": "registry", "name": "a9"}}
    )
    assert unknown.status_code == 422 and unknown.json()["detail"][0]["loc"] == [
        "body",
        "source",
        "name",
    ]
    stats = client.get(f"/api/v1/datasets/{toy['id']}/stats", params={"l2": 1e-3})
    assert stats.status_code == 200, stats.text
    body = stats.json()
    assert body["stats"]["n"] == 200 and body["advice"]["winner"] in ("primal_cd", "dual_cd")
    assert body["advice"]["smoothness"] == 0.25 and body["advice"]["l2"] == 1e-3
    assert client.get(f"/api/v1/datasets/{toy['id']}").json()["nnz"] == body["stats"]["nnz"]
    hinge = client.get(
        f"/api/v1/datasets/{toy['id']}/stats", params={"loss": "smooth_hinge", "gamma": 0.5}
    ).json()
    assert hinge["advice"]["smoothness"] == 2.0 and hinge["stats"] == body["stats"]
    job = client.post("/api/v1/jobs", json={**JOB, "dataset": "toy"})
    assert job.status_code == 201 and job.json()["dataset_id"] == toy["id"]
    assert client.get("/api/v1/datasets/4040").status_code == 404


GOOD_FILE = b"+1 1:0.5 3:1\n-1 2:1.5\n+1 1:1 2:2 3:3\n"
BAD_FILE = b"+1 1:0.5 3:1\n-1 2:x\n"


def test_upload(api):
    client, settings = api
    upload = settings.upload_dir
    made = client.post("/api/v1/datasets/upload", files={"file": ("tiny.svm", GOOD_FILE)})
    assert made.status_code == 201, made.text
    tiny = made.json()
    assert tiny["name"] == "tiny" and (tiny["n_samples"], tiny["n_features"]) == (3, 3)
    assert [p.name for p in upload.iterdir()] == [f"{tiny['sha256']}.svm"]
    bad = client.post(
        "/api/v1/datasets/upload", files={"file": ("bad.svm", BAD_FILE)}, data={"name": "bad"}
    )
    assert bad.status_code == 422
    assert bad.json()["detail"][0]["msg"].startswith("bad.svm: line 2:")
    assert client.get("/api/v1/datasets").json()["count"] == 1
    assert len(list(upload.iterdir())) == 1
    stats = client.get(f"/api/v1/datasets/{tiny['id']}/stats").json()
    assert stats["stats"]["label_counts"] == {"-1": 1, "1": 2}


def test_upload_size_limit(sqlite_url, redis_url, settings_for):
    settings = settings_for(sqlite_url, redis_url, MAX_UPLOAD_BYTES=1000)
    with TestClient(create_app(settings), client=LOCAL) as client:
        big = b"+1 1:0.5 3:1\n" * 200
        response = client.post("/api/v1/datasets/upload", files={"file": ("big.svm", big)})
        assert response.status_code == 413 and "1000 bytes" in response.json()["detail"]
        assert client.get("/api/v1/datasets").json()["count"] == 0
    assert list(settings.upload_dir.iterdir()) == []


def test_solvers(sqlite_url, settings_for):
    with TestClient(create_app(settings_for(sqlite_url)), client=LOCAL) as client:
        body = client.get("/api/v1/solvers").json()
    solvers = {s["name"]: s for s in body["data"]}
    assert body["count"] == len(solvers) and "dual_cd" in solvers
    (memory,) = solvers["lbfgs"]["params"]
    assert memory == {
        "name": "memory",
        "kind": "int",
        "default": 30,
        "help": memory["help"],
        "low": 1,
        "high": 1000,
        "choices": None,
    }
    assert solvers["dual_cd"]["losses"] == ["logistic", "smooth_hinge", "squared"]
    ours, peer = solvers["dual_cd"], solvers["sklearn.liblinear"]
    assert (ours["trace_mode"], ours["requires"], ours["available"]) == ("native", None, True)
    assert (peer["trace_mode"], peer["requires"], peer["losses"]) == (
        "refit",
        "scikit-learn",
        ["logistic"],
    )
    assert peer["available"] and peer["unavailable_reason"] is None  # a dependency


def test_solvers_says_which_peer_is_not_installed(sqlite_url, settings_for, monkeypatch):
    """A peer whose distribution is missing is listed as unavailable, with what to install."""
    from faceoff.solvers.catalogue import catalogue

    ghost = replace(catalogue()["cyanure"], name="ghost.peer", requires="faceoff-no-such-dist")
    monkeypatch.setitem(catalogue(), "ghost.peer", ghost)
    with TestClient(create_app(settings_for(sqlite_url)), client=LOCAL) as client:
        body = client.get("/api/v1/solvers").json()
    (entry,) = [s for s in body["data"] if s["name"] == "ghost.peer"]
    assert entry["available"] is False
    assert "'faceoff-no-such-dist'" in entry["unavailable_reason"]
    assert 'pip install "faceoff-bench[peers]"' in entry["unavailable_reason"]


def test_a_job_on_an_unsupported_peer_combination_is_refused(api):
    client, _ = api
    job = {"dataset": "a1a", "loss": "smooth_hinge", "l2": 1e-3, "solver": "sklearn.liblinear"}
    response = client.post("/api/v1/jobs", json=job)
    assert response.status_code == 422, response.text
    assert "does not support loss 'smooth_hinge'" in response.text


def test_a_peer_s_unsupported_loss_parameter_is_refused_for_jobs_and_sweeps(api):
    """lightning.cd's smoothed hinge has γ = 1 built in: γ = 0.5 is a 422 at the field gamma
    (a job) or at the solver's gamma (a sweep), saying what is accepted; γ = 1 is queued."""
    client, settings = api
    job = {"dataset": "a1a", "loss": "smooth_hinge", "gamma": 0.5, "l2": 1e-3}
    refused = client.post("/api/v1/jobs", json={**job, "solver": "lightning.cd"})
    assert refused.status_code == 422, refused.text
    (error,) = refused.json()["detail"]
    assert error["loc"] == ["body", "gamma"] and "gamma = 1 only" in error["msg"]
    sweep = {"datasets": ["a1a"], "losses": ["smooth_hinge"], "gamma": 0.5, "l2": [1e-3]}
    swept = client.post("/api/v1/sweeps", json={**sweep, "solvers": ["agd", "lightning.cd"]})
    assert swept.status_code == 422, swept.text
    assert swept.json()["detail"][0]["loc"] == ["body", "solvers", 1, "gamma"]
    assert queued(settings) == 0
    accepted = client.post("/api/v1/jobs", json={**job, "gamma": 1.0, "solver": "lightning.cd"})
    assert accepted.status_code == 201 and queued(settings) == 1


def test_references(api):
    client, settings = api
    objective = {"dataset": "a1a", "loss": "squared", "l2": 1e-3}
    made = client.post("/api/v1/references", json=objective)
    assert made.status_code == 201, made.text
    job = made.json()
    assert job["solver"] == "dual_cd" and job["spec"]["stop"]["tol"] == 1e-13
    named = job["objective_hash"]  # as the spec names it, until a worker has run the job
    assert client.get(f"/api/v1/references/{named}").status_code == 404
    # as the worker ends it: keyed by the digest of its data
    digest = content_objective_hash("d" * 64, "squared", 1.0, 0.0, 1e-3)
    values = {"data_hash": "d" * 64, "objective_hash": digest}
    set_job(settings, job["id"], status=SUCCEEDED, primal=0.5, gap=1e-14, **values)
    from faceoff.core.references import record_reference

    with session_scope(settings.database_url) as session:
        assert record_reference(session, session.get(Job, job["id"])) is not None
    reference = client.get(f"/api/v1/references/{digest}").json()
    assert (reference["primal"], reference["gap"], reference["job_id"]) == (0.5, 1e-14, job["id"])
    assert reference["objective"]["l2"] == 1e-3
    assert reference["objective"]["data_hash"] == "d" * 64
    assert client.get(f"/api/v1/jobs/{job['id']}").json()["objective_hash"] == digest


def test_health_and_metrics(api):
    client, _ = api
    health = client.get("/api/v1/health")
    assert health.status_code == 200
    body = health.json()
    limits = body.pop("time_limits")
    assert body == {
        "database": "ok",
        "broker": "ok",
        "workers": 0,
        "worker_hosts": [],
        "worker_memory": [],
    }
    assert set(limits) == {
        "run_killed_after",
        "cancel_grace_seconds",
        "soft_limit",
        "hard_limit",
        "max_job_seconds",
        "warmup_timeout_seconds",
    }
    client.post("/api/v1/jobs", json=JOB)
    client.get("/api/v1/jobs/5")
    metrics = client.get("/metrics").text
    assert 'faceoff_jobs{status="queued"} 1.0' in metrics
    assert 'route="/api/v1/jobs/{job_id}",status="404"' in metrics
    assert 'faceoff_http_requests_total{method="POST",route="/api/v1/jobs",status="201"}' in metrics


def test_health_reports_an_unreachable_broker(sqlite_url, settings_for):
    settings = settings_for(sqlite_url, "redis://127.0.0.1:1/0")
    with TestClient(create_app(settings), client=LOCAL) as client:
        response = client.get("/api/v1/health")
    assert response.status_code == 503
    body = response.json()
    assert body["database"] == "ok" and body["broker"] != "ok" and body["workers"] == 0


def test_openapi_operation_ids(sqlite_url, settings_for):
    schema = create_app(settings_for(sqlite_url)).openapi()
    ids = [op["operationId"] for path in schema["paths"].values() for op in path.values()]
    assert len(ids) == len(set(ids)) and "create_job" in ids and "stream_job_events" in ids
    assert all(path.startswith("/api/v1/") for path in schema["paths"])


def test_api_never_imports_numba(tmp_path):
    modules = "faceoff.api.main, faceoff.core.jobs, faceoff.core.sweeps, faceoff.core.references"
    code = f"import sys, {modules}; assert 'numba' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path)  # the installed one


def test_solvers_state_the_loss_parameters_a_peer_supports(sqlite_url, settings_for):
    """lightning.cd takes the smoothed hinge with γ = 1 only: GET /solvers says so."""
    with TestClient(create_app(settings_for(sqlite_url)), client=LOCAL) as client:
        body = client.get("/api/v1/solvers").json()
    solvers = {s["name"]: s for s in body["data"]}
    (rule,) = solvers["lightning.cd"]["loss_params"]
    assert (rule["loss"], rule["param"], rule["low"], rule["high"]) == (
        "smooth_hinge",
        "gamma",
        1.0,
        1.0,
    )
    assert rule["why"]
    assert solvers["dual_cd"]["loss_params"] == []
