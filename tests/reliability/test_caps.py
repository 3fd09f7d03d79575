"""Dataset size caps (``FACEOFF_MAX_SAMPLES``, ``FACEOFF_MAX_FEATURES``, ``FACEOFF_MAX_NNZ``):
every registration path refuses a shape over them with a 422 naming the field and the limit,
a job on a dataset registered under larger caps is refused at submission and failed by the
worker with one line, and no request costs memory in proportion to a declared dimension.

The memory tests run a real ``uvicorn`` process on PostgreSQL with the default caps and
read its peak resident set size (``VmHWM``) from /proc: after warm-up requests, no request
may raise it by more than :data:`RSS_GROWTH_BOUND`.
"""

from __future__ import annotations

import tracemalloc
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from faceoff.api.main import create_app
from faceoff.core.datasets import Caps, DatasetTooLarge
from faceoff.core.db import session_scope
from faceoff.core.migrate import upgrade
from faceoff.core.models import FAILED, TERMINAL, Dataset, Job
from faceoff.core.settings import Settings
from faceoff.core.uploads import validate
from tests.backends import (
    LOCAL,
    PG_HOST,
    PG_PORT,
    create_pg_database,
    drop_pg_database,
    require,
)
from tests.reliability.servers import ApiProcess, running_api
from tests.service.workers import running_worker, wait_for

REPO = Path(__file__).resolve().parents[2]
DEFAULT_MAX_FEATURES = 2**22  # FACEOFF_MAX_FEATURES's default (checked below)
RSS_GROWTH_BOUND = 64 * 1024 * 1024  # no request may raise the API's peak RSS by more
TWELVE_BYTES = b"1 1:1\n-1 2:1\n"  # the upload
START_SECONDS = 60.0


# ---------------------------------------------------------------- a real uvicorn process


@dataclass
class Server:
    api: ApiProcess
    database_url: str

    @property
    def url(self) -> str:
        return self.api.url

    def peak_rss(self) -> int:
        return self.api.peak_rss()

    def log(self) -> str:
        return self.api.log()


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[Server]:
    """``uvicorn faceoff.api.main:app`` on a fresh PostgreSQL database, the caps left at their
    defaults (running_api drops any FACEOFF_MAX_* of the environment)."""
    require("PostgreSQL", PG_HOST, PG_PORT)
    database_url = create_pg_database()
    home = tmp_path_factory.mktemp("caps-api")
    env = {"FACEOFF_DATABASE_URL": database_url, "FACEOFF_HOME": str(home)}
    try:
        upgrade(database_url)
        with running_api(env, home / "faceoff.api.log", timeout=START_SECONDS) as api:
            yield Server(api, database_url)
    finally:
        drop_pg_database(database_url)


@pytest.fixture
def api(server: Server) -> Iterator[httpx.Client]:
    """A client of the server, after warm-up requests (an upload and its statistics import
    everything a request needs), so peak-RSS growth measures the request itself."""
    with httpx.Client(base_url=server.url, timeout=60) as client:
        warm = upload(client, b"1 1:1 2:1\n-1 2:1\n", f"warm-{uuid.uuid4().hex[:8]}")
        assert warm.status_code == 201, warm.text
        assert client.get(f"/datasets/{warm.json()['id']}/stats").status_code == 200
        yield client
    print(server.log()[-3000:])


def upload(client, content: bytes, name: str, **form) -> httpx.Response:
    return client.post(
        "/datasets/upload", files={"file": ("x.svm", content)}, data={"name": name, **form}
    )


def dataset_names(client) -> set[str]:
    return {d["name"] for d in client.get("/datasets", params={"limit": 1000}).json()["data"]}


def test_upload_declaring_two_billion_features_is_refused(server, api):
    """The issue's reproduction: a 12-byte file declaring n_features = 2³¹ − 1 was
    registered, then its statistics got uvicorn OOM-killed."""
    before = server.peak_rss()
    response = upload(api, TWELVE_BYTES, "big", n_features=str(2**31 - 1))
    assert response.status_code == 422, response.text
    (error,) = response.json()["detail"]
    assert error["loc"] == ["body", "n_features"]
    assert error["msg"] == (
        f"n_features: 2147483647 features, more than this server's limit of "
        f"{DEFAULT_MAX_FEATURES} (FACEOFF_MAX_FEATURES)"
    )
    assert "big" not in dataset_names(api)
    assert server.peak_rss() - before < RSS_GROWTH_BOUND


def test_statistics_of_the_widest_accepted_upload_use_bounded_memory(server, api):
    """The largest declared width the caps admit: the statistics and the advisor answer
    without allocating per-feature arrays (before: +833 MiB at 2²⁴ features)."""
    made = upload(api, TWELVE_BYTES, "wide", n_features=str(DEFAULT_MAX_FEATURES))
    assert made.status_code == 201, made.text
    assert made.json()["n_features"] == DEFAULT_MAX_FEATURES
    before = server.peak_rss()
    for normalize in ("none", "rows"):
        response = api.get(f"/datasets/{made.json()['id']}/stats", params={"normalize": normalize})
        assert response.status_code == 200, response.text
    body = response.json()
    assert body["stats"]["d"] == DEFAULT_MAX_FEATURES and body["stats"]["nnz"] == 2
    assert body["advice"]["winner"] in ("primal_cd", "dual_cd")
    growth = server.peak_rss() - before
    assert growth < RSS_GROWTH_BOUND, f"peak RSS grew by {growth / 2**20:.0f} MiB"
    assert server.api.process.poll() is None
    assert Settings.model_fields["MAX_FEATURES"].default == DEFAULT_MAX_FEATURES


def test_a_feature_index_beyond_2_31_is_a_422(api):
    response = upload(api, b"1 2147483648:1\n-1 1:1\n", "index")
    assert response.status_code == 422, response.text
    (error,) = response.json()["detail"]
    assert error["loc"] == ["body", "file"]
    assert error["msg"] == (
        "x.svm: line 1: feature index 2147483648 is larger than 2147483647, the largest supported"
    )


def test_a_synthetic_source_without_non_zeros_is_refused_and_its_stats_are_a_422(server, api):
    """density 1e-300 rounds to no non-zero: refused at registration; one registered before
    this check gets a 422 from its statistics (the advisor raised ZeroDivisionError)."""
    source = {
        "kind": "synthetic",
        "generator": "classification",
        "n_samples": 10,
        "n_features": 10,
        "density": 1e-300,
    }
    response = api.post("/datasets", json={"name": "nothing", "source": source})
    assert response.status_code == 422, response.text
    (error,) = response.json()["detail"]
    assert error["loc"] == ["body", "source", "density"]
    assert "rounds to no non-zero" in error["msg"]
    with session_scope(server.database_url) as session:
        old = Dataset(name="old-nothing", source={**source, "seed": 0}, n_samples=10)
        session.add(old)
        session.flush()
        old_id = old.id
    stats = api.get(f"/datasets/{old_id}/stats")
    assert stats.status_code == 422, stats.text
    assert "no non-zero" in stats.json()["detail"][0]["msg"]


# ---------------------------------------------------------------- every registration path

CAPS = {"MAX_SAMPLES": 1000, "MAX_FEATURES": 100, "MAX_NNZ": 5000}


def synthetic(n: int, d: int, density: float) -> dict:
    return {
        "kind": "synthetic",
        "generator": "classification",
        "n_samples": n,
        "n_features": d,
        "density": density,
    }


def svm_file(rows: int, features: int) -> bytes:
    line = " ".join(f"{j}:1" for j in range(1, features + 1))
    return "".join(f"{1 - 2 * (i % 2)} {line}\n" for i in range(rows)).encode()


@pytest.fixture
def capped(sqlite_url, settings_for) -> Iterator[tuple[TestClient, Settings]]:
    settings = settings_for(sqlite_url, **CAPS)
    with TestClient(create_app(settings), client=LOCAL) as client:
        yield client, settings


@pytest.mark.parametrize(
    ("source", "loc", "words"),
    [
        (synthetic(1001, 10, 0.1), ["source", "n_samples"], ["1001 samples", "MAX_SAMPLES"]),
        (synthetic(10, 101, 0.1), ["source", "n_features"], ["101 features", "MAX_FEATURES"]),
        (synthetic(1000, 100, 0.06), ["source", "density"], ["6000 non-zeros", "MAX_NNZ"]),
        ({"kind": "registry", "name": "a9a"}, ["source", "name"], ["'a9a': 32561 samples"]),
        ({"kind": "sklearn", "name": "breast_cancer"}, ["source", "name"], ["17070 non-zeros"]),
    ],
    ids=["synthetic-samples", "synthetic-features", "synthetic-nnz", "registry", "sklearn"],
)
def test_registration_over_a_cap_is_a_422_naming_field_and_limit(capped, source, loc, words):
    client, _ = capped
    response = client.post("/api/v1/datasets", json={"name": "big", "source": source})
    assert response.status_code == 422, response.text
    (error,) = response.json()["detail"]
    assert error["loc"] == ["body", *loc]
    assert "more than this server's limit of" in error["msg"]
    for word in words:
        assert word in error["msg"]
    assert client.get("/api/v1/datasets").json()["count"] == 0


@pytest.mark.parametrize(
    ("content", "form", "loc", "words"),
    [
        (TWELVE_BYTES, {"n_features": "101"}, "n_features", ["n_features: 101 features"]),
        (b"1 1:1\n-1 101:1\n", {}, "file", ["x.svm: 101 features", "MAX_FEATURES"]),
        (svm_file(1001, 1), {}, "file", ["x.svm (up to line 1001): 1001 samples", "SAMPLES"]),
        (svm_file(60, 90), {}, "file", ["x.svm (up to line 56): 5040 non-zeros", "MAX_NNZ"]),
    ],
    ids=["declared-features", "file-features", "file-samples", "file-nnz"],
)
def test_upload_over_a_cap_is_a_422_and_nothing_is_kept(capped, content, form, loc, words):
    client, settings = capped
    response = client.post("/api/v1/datasets/upload", files={"file": ("x.svm", content)}, data=form)
    assert response.status_code == 422, response.text
    (error,) = response.json()["detail"]
    assert error["loc"] == ["body", loc]
    for word in words:
        assert word in error["msg"]
    assert client.get("/api/v1/datasets").json()["count"] == 0
    assert list(settings.upload_dir.iterdir()) == []


def test_an_upload_over_the_caps_is_refused_before_it_is_parsed(tmp_path):
    """Ten million one-label lines (20 MB, a few KB as bzip2): counted in one chunk of
    memory and refused, where parsing would take ~8 times the file's size."""
    path = tmp_path / "lines.svm"
    path.write_bytes(b"1 1:1\n" + b"1\n" * 10_000_000)
    caps = Caps(n_samples=1000, n_features=100, nnz=5000)
    tracemalloc.start()
    try:
        with pytest.raises(DatasetTooLarge) as refused:
            validate(path, "lines.svm", None, caps)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8_000_000
    assert refused.value.loc == ("file",)
    assert str(refused.value).startswith("lines.svm (up to line 1001): 1001 samples, more than")


def test_jobs_on_a_public_dataset_over_the_caps_are_refused(capped):
    client, _ = capped
    job = {"dataset": "a9a", "loss": "logistic", "l2": 1e-4, "solver": "dual_cd"}
    response = client.post("/api/v1/jobs", json=job)
    assert response.status_code == 422, response.text
    assert response.json()["detail"][0]["loc"] == ["body", "dataset"]
    sweep = {"datasets": ["a9a"], "losses": ["logistic"], "l2": [1e-4], "solvers": ["dual_cd"]}
    response = client.post("/api/v1/sweeps", json=sweep)
    assert response.status_code == 422, response.text
    (error,) = response.json()["detail"]
    assert error["loc"] == ["body", "datasets", 0]
    assert "FACEOFF_MAX_SAMPLES" in error["msg"]
    assert client.get("/api/v1/datasets").json()["count"] == 0


def test_a_job_whose_working_memory_exceeds_the_limit_is_refused(sqlite_url, settings_for):
    """L-BFGS keeps 2·memory vectors of the width of x: on the widest dataset the caps allow,
    memory=1000 would need tens of GiB, so it is refused at submission (job and sweep),
    naming the parameter and the limit; the default memory runs."""
    settings = settings_for(sqlite_url)  # the default caps and MAX_JOB_BYTES
    wide = synthetic(2, settings.MAX_FEATURES, 1.0 / settings.MAX_FEATURES)
    with TestClient(create_app(settings), client=LOCAL) as client:
        response = client.post("/api/v1/datasets", json={"name": "wide", "source": wide})
        assert response.status_code == 201, response.text
        job = {"dataset": "wide", "loss": "logistic", "l2": 1e-4, "solver": "lbfgs"}
        response = client.post("/api/v1/jobs", json={**job, "params": {"memory": 1000}})
        assert response.status_code == 422, response.text
        (error,) = response.json()["detail"]
        assert error["loc"] == ["body", "params"]
        assert "FACEOFF_MAX_JOB_BYTES" in error["msg"] and "GiB" in error["msg"]
        sweep = {
            "datasets": ["wide"],
            "losses": ["logistic"],
            "l2": [1e-4],
            "solvers": [{"solver": "lbfgs", "params": {"memory": [30, 1000]}}],
        }
        response = client.post("/api/v1/sweeps", json=sweep)
        assert response.status_code == 422, response.text
        assert response.json()["detail"][0]["loc"] == ["body", "solvers", "params"]
        assert client.get("/api/v1/jobs").json()["count"] == 0
        response = client.post("/api/v1/jobs", json=job)
        assert response.status_code == 201, response.text


def test_a_dataset_registered_under_larger_caps_is_refused(sqlite_url, settings_for):
    """Registered with the defaults, then the server restarts with MAX_FEATURES = 10: its
    statistics and new jobs on it are 422s naming the limit."""
    before = settings_for(sqlite_url)
    with TestClient(create_app(before), client=LOCAL) as client:
        made = client.post("/api/v1/datasets", json={"name": "s", "source": synthetic(50, 20, 1)})
        assert made.status_code == 201, made.text
    after = before.model_copy(update={"MAX_FEATURES": 10})
    with TestClient(create_app(after), client=LOCAL) as client:
        stats = client.get(f"/api/v1/datasets/{made.json()['id']}/stats")
        assert stats.status_code == 422, stats.text
        assert "20 features, more than this server's limit of 10" in stats.text
        job = {"dataset": "s", "loss": "logistic", "l2": 1e-2, "solver": "dual_cd"}
        response = client.post("/api/v1/jobs", json=job)
        assert response.status_code == 422, response.text
        assert "(FACEOFF_MAX_FEATURES)" in response.json()["detail"][0]["msg"]


# ---------------------------------------------------------------- the worker


@pytest.mark.timeout(300)
def test_the_worker_fails_a_job_over_its_caps_with_one_line(
    postgres_url, redis_url, settings_for, monkeypatch
):
    """The API (default caps) accepts a 50 × 20 dataset and a job on it; the worker, started
    with FACEOFF_MAX_FEATURES=10, fails the job before loading any data."""
    settings = settings_for(postgres_url, redis_url)
    monkeypatch.setenv("FACEOFF_MAX_FEATURES", "10")
    with running_worker(settings) as worker, TestClient(create_app(settings), client=LOCAL) as api:
        made = api.post("/api/v1/datasets", json={"name": "s", "source": synthetic(50, 20, 1)})
        assert made.status_code == 201, made.text
        job = {"dataset": "s", "loss": "logistic", "l2": 1e-2, "solver": "dual_cd"}
        submitted = api.post("/api/v1/jobs", json=job)
        assert submitted.status_code == 201, submitted.text
        job_id = submitted.json()["id"]

        def finished() -> tuple[str, str | None] | None:
            with session_scope(settings.database_url) as session:
                found = session.get(Job, job_id)
                return (found.status, found.error) if found.status in TERMINAL else None

        status, error = wait_for(finished, 120, f"job {job_id} to finish", worker)
    assert status == FAILED
    assert error == (
        "DatasetTooLarge: synthetic source: 20 features, more than this server's limit of 10 "
        "(FACEOFF_MAX_FEATURES)"
    )


BENCHOPT = synthetic(100_000, 400, 1.0)  # benchopt's logistic problem: 4e7 non-zeros


def test_the_synthetic_cap_is_max_nnz_and_names_it(sqlite_url, settings_for):
    """4e7 non-zeros, refused by a constant 2e7 before, is accepted under a cap sized for
    it and refused by a smaller FACEOFF_MAX_NNZ with the setting and its value."""
    for cap, status in ((40_000_000, 201), (39_999_999, 422)):
        settings = settings_for(sqlite_url, MAX_NNZ=cap)
        with TestClient(create_app(settings), client=LOCAL) as client:
            body = {"name": f"benchopt-{cap}", "source": BENCHOPT}
            response = client.post("/api/v1/datasets", json=body)
        assert response.status_code == status, response.text
    (error,) = response.json()["detail"]
    assert error["loc"] == ["body", "source", "density"]
    assert "40000000 non-zeros" in error["msg"]
    assert "limit of 39999999 (FACEOFF_MAX_NNZ)" in error["msg"]


def test_statistics_load_no_worker_sized_matrix_into_the_api(sqlite_url, settings_for):
    """A dataset within FACEOFF_MAX_NNZ (a worker's cap) but over FACEOFF_STATS_MAX_NNZ is
    registered, yet its statistics are a 422 naming the setting, before anything is
    generated in the API process; one within it gets its statistics."""
    settings = settings_for(sqlite_url, MAX_NNZ=10**8, STATS_MAX_NNZ=5_000)
    small = {"kind": "synthetic", "generator": "classification", "n_samples": 100,
             "n_features": 10, "density": 1.0, "seed": 0}  # fmt: skip
    large = {**small, "n_samples": 10**6, "n_features": 100}  # 1e8 non-zeros
    with TestClient(create_app(settings), client=LOCAL) as client:
        ids = {}
        for name, source in (("small", small), ("large", large)):
            created = client.post("/api/v1/datasets", json={"name": name, "source": source})
            assert created.status_code == 201, created.text
            ids[name] = created.json()["id"]
        tracemalloc.start()
        refused = client.get(f"/api/v1/datasets/{ids['large']}/stats")
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert refused.status_code == 422, refused.text
        (error,) = refused.json()["detail"]
        assert error["loc"] == ["path", "dataset_id"]
        assert "100000000 non-zeros" in error["msg"]
        assert "limit of 5000 (FACEOFF_STATS_MAX_NNZ)" in error["msg"]
        assert peak < 50 * 1024 * 1024  # nothing near the 1.2 GB of the matrix
        served = client.get(f"/api/v1/datasets/{ids['small']}/stats")
        assert served.status_code == 200, served.text
        assert served.json()["stats"]["nnz"] == 1000
