"""Dataset names cannot poison shared results: public names are reserved on every
registration path, and reference optima P* are keyed by the content of the data a worker
solved on (a digest of the matrix and labels after transforms), not by a dataset's name.
Real PostgreSQL (and SQLite), Redis and a Celery worker process; two teams with tokens."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import httpx
import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient
from sqlalchemy import select, update

from faceoff.api.main import create_app
from faceoff.core.db import session_scope
from faceoff.core.migrate import upgrade
from faceoff.core.models import TERMINAL, Dataset, Job, Reference
from tests.api.test_auth import bearer, make_token
from tests.backends import create_pg_database, drop_pg_database, require
from tests.reliability.servers import api_env, running_api
from tests.service.workers import running_worker

SYNTHETIC = {
    "kind": "synthetic",
    "generator": "classification",
    "n_samples": 50,
    "n_features": 5,
    "density": 1.0,
    "seed": 0,
}
DATA = b"+1 1:0.5 3:1\n-1 2:1.5\n+1 1:1 2:2 3:3\n-1 1:2 3:0.5\n"
OTHER = b"+1 1:0.5 3:1\n-1 2:1.5\n+1 1:1 2:2 3:3\n-1 1:2 3:0.25\n"  # one value differs
OBJECTIVE = {"loss": "logistic", "l2": 1e-2, "solver": "dual_cd"}
STOP = {"tol": 1e-12, "max_seconds": 10}


@pytest.fixture
def teams(database_url, redis_url, settings_for):
    """(client, settings, headers of team alpha, headers of team beta), auth on."""
    settings = settings_for(database_url, redis_url, AUTH_ENABLED=True)
    alpha = bearer(make_token(database_url, "alpha")[1])
    beta = bearer(make_token(database_url, "beta")[1])
    with TestClient(create_app(settings), client=("10.0.0.5", 1234)) as client:
        yield client, settings, alpha, beta


def upload(client, headers, content: bytes, name: str | None = None, filename: str = "d.svm"):
    data = {} if name is None else {"name": name}
    return client.post(
        "/api/v1/datasets/upload", files={"file": (filename, content)}, data=data, headers=headers
    )


def assert_reserved(response, name: str) -> None:
    assert response.status_code == 409, response.text
    detail = response.json()["detail"]
    assert f"name {name!r} is reserved for the public dataset" in detail, detail


def test_public_names_are_reserved_on_every_registration_path(teams):
    client, settings, alpha, beta = teams
    # the take-over of the issue, and its variants: another source kind, another public
    # source, a look-alike name, an upload (named, or named after its file)
    for name, source in [
        ("a9a", SYNTHETIC),
        ("a9a", {"kind": "registry", "name": "w8a"}),
        ("a9a", {"kind": "sklearn", "name": "breast_cancer"}),
        ("A9A", SYNTHETIC),
        ("breast_cancer", SYNTHETIC),
        ("breast_cancer", {"kind": "registry", "name": "a1a"}),
    ]:
        body = {"name": name, "source": source}
        assert_reserved(client.post("/api/v1/datasets", json=body, headers=beta), name)
    assert_reserved(upload(client, beta, DATA, name="a9a"), "a9a")
    assert_reserved(upload(client, beta, DATA, filename="a9a.svm"), "a9a")
    assert_reserved(upload(client, beta, DATA, name="Breast_Cancer"), "Breast_Cancer")
    assert not list(settings.upload_dir.glob("*.svm"))  # refused before the file is kept
    with session_scope(settings.database_url) as session:
        assert session.scalars(select(Dataset)).all() == []
    # a public name with its own public source registers (shared by every team)
    own = {"name": "a9a", "source": {"kind": "registry", "name": "a9a"}}
    created = client.post("/api/v1/datasets", json=own, headers=beta)
    assert created.status_code == 201, created.text
    assert client.post("/api/v1/datasets", json=own, headers=alpha).status_code == 200
    # first use by name in a job or a sweep registers the public source
    jobs = [
        client.post("/api/v1/jobs", json={**OBJECTIVE, "dataset": d}, headers=alpha)
        for d in ("a9a", "breast_cancer")
    ]
    sweep = {"datasets": ["w8a"], "losses": ["logistic"], "l2": [1e-2], "solvers": ["dual_cd"]}
    swept = client.post("/api/v1/sweeps", json=sweep, headers=beta)
    assert [r.status_code for r in (*jobs, swept)] == [201, 201, 201], swept.text
    with session_scope(settings.database_url) as session:
        sources = dict(session.execute(select(Dataset.name, Dataset.source)).all())
    assert sources == {
        "a9a": {"kind": "registry", "name": "a9a"},
        "breast_cancer": {"kind": "sklearn", "name": "breast_cancer"},
        "w8a": {"kind": "registry", "name": "w8a"},
    }
    # names free of any public one stay free
    free = {"name": "a9a-mine", "source": SYNTHETIC}
    assert client.post("/api/v1/datasets", json=free, headers=beta).status_code == 201
    assert upload(client, beta, DATA, name="w8a.mine").status_code == 201


def finished(client, headers, job_id: int, timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = client.get(f"/api/v1/jobs/{job_id}", headers=headers).json()
        if job["status"] in TERMINAL:
            assert job["status"] == "succeeded", job
            return job
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} did not finish within {timeout} s")


def run(client, headers, dataset: str, force: bool = False) -> dict:
    body = {**OBJECTIVE, "dataset": dataset, "stop": STOP, "force": force}
    created = client.post("/api/v1/jobs", json=body, headers=headers)
    assert created.status_code == 201, created.text
    return finished(client, headers, created.json()["id"])


def reference(client, headers, job: dict):
    return client.get(f"/api/v1/references/{job['objective_hash']}", headers=headers)


@pytest.mark.parametrize("database_url", ["postgres"], indirect=True)
def test_references_are_keyed_by_the_content_of_the_data(teams):
    client, settings, alpha, beta = teams
    assert upload(client, alpha, DATA, name="alpha-secret").status_code == 201
    assert upload(client, beta, DATA, name="beta-copy").status_code == 201
    assert upload(client, beta, OTHER, name="beta-other").status_code == 201
    shared = {"name": "shared-x", "source": SYNTHETIC}
    assert client.post("/api/v1/datasets", json=shared, headers=beta).status_code == 201
    with running_worker(settings):
        mine, copy, other = (
            run(client, alpha, "alpha-secret"),
            run(client, beta, "beta-copy"),
            run(client, beta, "beta-other"),
        )
        # the name "shared-x" now stands for another matrix: what a take-over did to "a9a"
        with session_scope(settings.database_url) as session:
            session.execute(
                update(Dataset)
                .where(Dataset.name == "shared-x")
                .values(source={**SYNTHETIC, "seed": 1})
            )
        before = run(client, alpha, "shared-x")
        with session_scope(settings.database_url) as session:
            session.execute(
                update(Dataset).where(Dataset.name == "shared-x").values(source=SYNTHETIC)
            )
        after = run(client, alpha, "shared-x", force=True)
    # one name and spec over two matrices: two objectives, never one P*
    assert before["spec_hash"] == after["spec_hash"]
    assert before["objective_hash"] != after["objective_hash"]
    # the same content under two teams' names shares one objective and one P*
    assert mine["objective_hash"] == copy["objective_hash"]
    assert mine["data_hash"] == copy["data_hash"] and len(mine["data_hash"]) == 64
    found = reference(client, beta, copy)
    assert found.status_code == 200, found.text
    assert found.json()["primal"] == pytest.approx(mine["primal"], rel=1e-9)
    assert "alpha-secret" not in found.text and "dataset" not in found.json()["objective"]
    # different matrices never share one: not one value apart, not under one name and spec
    assert other["data_hash"] != mine["data_hash"]
    assert before["data_hash"] != after["data_hash"]
    for job in (other, before, after):
        ref = reference(client, alpha, job).json()
        assert ref["primal"] == pytest.approx(job["primal"], rel=1e-9), ref
    # what identifies a private dataset (the job, the data's digest) only to its team
    for job, owner in ((other, beta), (before, alpha)):
        shown = reference(client, owner, job).json()
        assert shown["job_id"] == job["id"] and shown["objective"]["data_hash"] == job["data_hash"]
    hidden = reference(client, alpha, other).json()
    assert hidden["job_id"] is None and "data_hash" not in hidden["objective"], hidden
    assert other["data_hash"] not in client.get("/api/v1/references", headers=alpha).text
    assert reference(client, beta, after).json()["job_id"] == after["id"]  # a shared dataset
    assert reference(client, alpha, after).json()["objective"]["dataset"] == "shared-x"
    with session_scope(settings.database_url) as session:
        assert session.scalar(select(sa.func.count()).select_from(Reference)) == 4
        assert {j.objective_hash for j in session.scalars(select(Job))} == {
            j["objective_hash"] for j in (mine, other, before, after)
        }


@pytest.fixture(params=["sqlite", "postgres"])
def unmigrated_url(request, tmp_path) -> Iterator[str]:
    """An empty database of each backend."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'old.db'}"
        return
    require("PostgreSQL", "127.0.0.1", 5432)
    url = create_pg_database()
    try:
        yield url
    finally:
        drop_pg_database(url)


def test_migration_frees_public_names_and_drops_name_keyed_references(unmigrated_url):
    upgrade(unmigrated_url, "0003")
    datasets = sa.table(
        "datasets",
        sa.column("name"),
        sa.column("source", sa.JSON),
        sa.column("created_at", sa.DateTime),
    )
    references = sa.table(
        "references",
        sa.column("objective_hash"),
        sa.column("objective", sa.JSON),
        sa.column("primal"),
        sa.column("gap"),
        sa.column("created_at", sa.DateTime),
    )
    now = sa.func.now() if unmigrated_url.startswith("postgresql") else sa.func.datetime("now")
    with session_scope(unmigrated_url) as session:
        for name, source in [
            ("a9a", SYNTHETIC),  # a take-over
            ("w8a", {"kind": "registry", "name": "w8a"}),
            ("mine", SYNTHETIC),
        ]:
            session.execute(datasets.insert().values(name=name, source=source, created_at=now))
        session.execute(
            references.insert().values(
                objective_hash=uuid.uuid4().hex * 2,
                objective={"dataset": "a9a"},
                primal=0.1,
                gap=0.0,
                created_at=now,
            )
        )
    upgrade(unmigrated_url)
    with session_scope(unmigrated_url) as session:
        rows = session.execute(select(Dataset.id, Dataset.name).order_by(Dataset.id)).all()
        assert [name for _, name in rows] == [f"a9a.taken-{rows[0][0]}", "w8a", "mine"]
        assert session.scalars(select(Reference)).all() == []
        assert session.scalars(select(Job.data_hash)).all() == []


# ---------------------------------------------------------------- round 3, on uvicorn


@pytest.fixture
def served(postgres_url, redis_url, settings_for):
    """(httpx client of a real uvicorn API with auth on, headers of alpha and beta, worker)."""
    settings = settings_for(postgres_url, redis_url, AUTH_ENABLED=True)
    alpha = bearer(make_token(postgres_url, "alpha")[1])
    beta = bearer(make_token(postgres_url, "beta")[1])
    with (
        running_worker(settings) as worker,
        running_api(api_env(settings), settings.HOME / "faceoff.api.log") as api,
        httpx.Client(base_url=api.url, timeout=30) as client,
    ):
        yield client, alpha, beta, worker


def test_no_answer_tells_another_teams_private_names(served):
    """Round 3: registering a name answered 409 for another team's private upload (an
    existence oracle), and a reference on a private dataset showed its job and data digest
    to every team."""
    client, alpha, beta, worker = served
    post = client.post
    made = post("/datasets/upload", files={"file": ("d.svm", DATA)}, data={"name": "secret-x"},
                headers=alpha)  # fmt: skip
    assert made.status_code == 201, made.text
    # beta may use the name, as an upload or a shared dataset: alpha's stays alpha's
    mine = post("/datasets/upload", files={"file": ("d.svm", OTHER)}, data={"name": "secret-x"},
                headers=beta)  # fmt: skip
    assert mine.status_code == 201, mine.text
    shared = {"name": "secret-y", "source": SYNTHETIC}
    post("/datasets/upload", files={"file": ("d.svm", DATA)}, data={"name": "secret-y"},
         headers=alpha)  # fmt: skip
    assert post("/datasets", json=shared, headers=beta).status_code == 201
    # each team's jobs on "secret-x" use its own data
    body = {**OBJECTIVE, "dataset": "secret-x", "stop": STOP}
    job_a = post("/jobs", json=body, headers=alpha).json()
    job_b = post("/jobs", json=body, headers=beta).json()
    assert job_a["dataset_id"] == made.json()["id"] and job_b["dataset_id"] == mine.json()["id"]
    # a name the caller sees conflicts, and is described
    again = post("/datasets", json={"name": "secret-x", "source": SYNTHETIC}, headers=beta)
    assert again.status_code == 409 and f"id {mine.json()['id']}" in again.json()["detail"]

    done = {}
    deadline = time.monotonic() + 120
    while len(done) < 2:
        assert time.monotonic() < deadline, worker.log()[-3000:]
        for job, headers in ((job_a, alpha), (job_b, beta)):
            found = client.get(f"/jobs/{job['id']}", headers=headers).json()
            if found["status"] in TERMINAL:
                assert found["status"] == "succeeded", found
                done[job["id"]] = found
        time.sleep(0.2)
    ref_a = done[job_a["id"]]
    listed = client.get("/references", headers=beta)
    assert ref_a["data_hash"] not in listed.text
    seen = client.get(f"/references/{ref_a['objective_hash']}", headers=beta).json()
    assert seen["job_id"] is None and "data_hash" not in seen["objective"], seen
    own = client.get(f"/references/{ref_a['objective_hash']}", headers=alpha).json()
    assert own["job_id"] == job_a["id"] and own["objective"]["data_hash"] == ref_a["data_hash"]


LOOK_ALIKES = ["w8a.bz2", "a9a.t.bz2", "W8A.svm", "rcv1_train.binary", "a1a.T", "news20.bz2"]


def test_look_alikes_of_public_names_are_refused_for_shared_datasets(served):
    """Round 3: shared synthetic datasets took the names w8a.bz2 and a9a.t.bz2."""
    client, alpha, beta, _ = served
    sklearn = {"kind": "sklearn", "name": "breast_cancer"}
    for name in LOOK_ALIKES:
        for source in (SYNTHETIC, sklearn):
            refused = client.post("/datasets", json={"name": name, "source": source}, headers=beta)
            assert refused.status_code == 409, (name, refused.text)
            assert "is reserved for the public dataset" in refused.json()["detail"]
        upload = client.post(
            "/datasets/upload", files={"file": ("d.svm", DATA)}, data={"name": name}, headers=alpha
        )
        assert upload.status_code == 409, (name, upload.text)
    own = client.post("/datasets", json={"name": "breast_cancer.gz", "source": sklearn})
    assert own.status_code == 401  # no token
    own = client.post(
        "/datasets", json={"name": "Breast_Cancer.gz", "source": sklearn}, headers=beta
    )
    assert own.status_code == 201, own.text  # a look-alike may name its own public data
    names = {d["name"] for d in client.get("/datasets", headers=alpha).json()["data"]}
    assert not names & set(LOOK_ALIKES)
