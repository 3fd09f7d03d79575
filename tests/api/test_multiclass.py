"""K-class problems through the API: datasets know their labels, and every request their
labels cannot serve is a 422 naming the field and the reason, with nothing stored or sent.

The data are tiny uploads and synthetic sources (no LIBSVM file is read); jobs are sent to
a queue no worker consumes, as in test_routes.py.
"""

from __future__ import annotations

import time

import pytest
from fastapi.testclient import TestClient

from faceoff.api.main import create_app
from tests.api.test_routes import LOCAL, queued
from tests.core.test_sweeps import MAIN_HASHES

FOUR_CLASSES = b"1 1:1\n2 2:1\n3 1:1 2:1\n4 2:2\n1 1:2\n"
ONE_CLASS = b"1 1:1\n1 2:1\n1 1:1 2:1\n"
TARGETS = b"0.5 1:1\n1.5 2:1\n2 1:1 2:1\n"
PLANTED = {
    "kind": "synthetic",
    "generator": "multiclass",
    "n_samples": 300,
    "n_features": 20,
    "density": 1.0,
    "n_classes": 3,
}


@pytest.fixture
def api(database_url, redis_url, settings_for):
    """(TestClient, settings): K capped at 4 classes, 1 GiB of working memory a job."""
    settings = settings_for(
        database_url, redis_url, MAX_SWEEP_JOBS=50, MAX_CLASSES=4, MAX_JOB_BYTES=2**30
    )
    with TestClient(create_app(settings), client=LOCAL) as client:
        yield client, settings


def upload(client: TestClient, name: str, content: bytes) -> dict:
    files = {"file": (f"{name}.svm", content)}
    response = client.post("/api/v1/datasets/upload", files=files, data={"name": name})
    assert response.status_code == 201, response.text
    return response.json()


def register(client: TestClient, name: str, source: dict) -> dict:
    response = client.post("/api/v1/datasets", json={"name": name, "source": source})
    assert response.status_code == 201, response.text
    return response.json()


def refused(response, loc: list, *words: str) -> str:
    """The one error of a 422 at ``loc``, whose message holds ``words``."""
    assert response.status_code == 422, response.text
    (error,) = response.json()["detail"]
    assert error["loc"] == loc, error
    for word in words:
        assert word in error["msg"], error["msg"]
    return error["msg"]


def job(dataset: str, **fields) -> dict:
    return {"dataset": dataset, "loss": "logistic", "l2": 1e-3, "solver": "lbfgs", **fields}


def nothing_stored(client: TestClient, settings) -> None:
    assert client.get("/api/v1/jobs").json()["count"] == 0
    assert client.get("/api/v1/sweeps").json()["count"] == 0
    assert queued(settings) == 0


def test_datasets_record_their_labels_at_registration(api):
    client, _ = api
    four = upload(client, "four", FOUR_CLASSES)
    assert four["labels"] == {
        "kind": "classes",
        "n_classes": 4,
        "counts": {"1": 2, "2": 1, "3": 1, "4": 1},
    }
    assert upload(client, "targets", TARGETS)["labels"] == {"kind": "targets", "example": "0.5"}
    planted = register(client, "planted", PLANTED)
    assert planted["source"] == {**PLANTED, "seed": 0, "layout": "planted"}
    assert planted["labels"] == {"kind": "classes", "n_classes": 3, "counts": None}
    aloi = register(client, "aloi-like", {**PLANTED, "n_classes": 4, "layout": "clusters"})
    counts = {"0": 75, "1": 75, "2": 75, "3": 75}
    assert aloi["labels"] == {"kind": "classes", "n_classes": 4, "counts": counts}
    binary = {"kind": "synthetic", "generator": "classification", "n_samples": 50}
    binary |= {"n_features": 5, "density": 1.0}
    assert register(client, "binary", binary)["source"] == {**binary, "seed": 0}  # as before
    sklearn = register(client, "bc", {"kind": "sklearn", "name": "breast_cancer"})
    assert sklearn["labels"]["counts"] == {"-1": 212, "1": 357}
    # a registry entry: its K and the MANIFEST's counts, without reading the file
    usps = register(client, "usps_zip_train", {"kind": "registry", "name": "usps_zip_train"})
    assert usps["labels"]["n_classes"] == 10 and usps["labels"]["counts"]["0"] == 1194
    response = client.post("/api/v1/jobs", json=job("usps_zip_train", multiclass="ovr"))
    refused(response, ["body", "multiclass"], "10 classes", "limit of 4", "FACEOFF_MAX_CLASSES")


def test_a_k_class_job_runs_on_class_labels_and_counts_k(api):
    client, settings = api
    upload(client, "four", FOUR_CLASSES)
    for form in ("ovr", "multinomial"):
        response = client.post("/api/v1/jobs", json=job("four", multiclass=form))
        assert response.status_code == 201, response.text
        assert response.json()["spec"]["multiclass"] == form
    assert queued(settings) == 2


BAD_JOBS = {
    "regression dataset": (
        "cpusmall",
        {"loss": "squared", "multiclass": "ovr"},
        ["body", "multiclass"],
        ["multiclass 'ovr' needs integer class labels", "'cpusmall' holds regression targets"],
    ),
    "labels that are not integers": (
        "targets",
        {"multiclass": "multinomial"},
        ["body", "multiclass"],
        ["needs integer class labels", "label 0.5 is not an integer"],
    ),
    "single class": (
        "one",
        {"multiclass": "ovr"},
        ["body", "multiclass"],
        ["at least 2 classes", "single class (label 1: 3 samples)"],
    ),
    "K above the cap": (
        "five",
        {"multiclass": "ovr"},
        ["body", "multiclass"],
        ["'five' has 5 classes", "limit of 4 (FACEOFF_MAX_CLASSES)"],
    ),
    "solver without the form": (
        "four",
        {"solver": "dgpd", "multiclass": "multinomial"},
        ["body", "multiclass"],
        ["dgpd", "multinomial"],
    ),
    "loss without the form": (
        "four",
        {"loss": "smooth_hinge", "multiclass": "multinomial"},
        ["body", "multiclass"],
        ["multinomial"],
    ),
    "positive with multiclass": (
        "four",
        {"multiclass": "ovr", "positive": [1]},
        ["body", "multiclass"],
        ["positive makes a binary problem and multiclass a K-class one"],
    ),
    "K classes, a binary loss, no positive": (
        "four",
        {},
        ["body", "positive"],
        ["'four' has 4 classes", "give positive", "or multiclass"],
    ),
    "positive class not in the data": (
        "four",
        {"positive": [7]},
        ["body", "positive"],
        ["class 7 of positive does not occur in dataset 'four'", "1 (2), 2 (1)"],
    ),
    "positive covering every class": (
        "four",
        {"positive": [1, 2, 3, 4]},
        ["body", "positive"],
        ["covers every class"],
    ),
    "classification loss on targets": (
        "targets",
        {},
        ["body", "loss"],
        ["needs two label classes", "regression targets (label 0.5 is not an integer)"],
    ),
    "classification loss on one class": (
        "one",
        {"loss": "smooth_hinge"},
        ["body", "loss"],
        ["needs two label classes", "single class"],
    ),
}


@pytest.mark.parametrize(("dataset", "change", "loc", "words"), BAD_JOBS.values(), ids=BAD_JOBS)
def test_a_job_its_labels_cannot_serve_is_refused_and_nothing_is_stored(
    api, dataset, change, loc, words
):
    client, settings = api
    upload(client, "four", FOUR_CLASSES)
    upload(client, "five", FOUR_CLASSES + b"5 1:3\n")
    upload(client, "one", ONE_CLASS)
    upload(client, "targets", TARGETS)
    refused(client.post("/api/v1/jobs", json=job(dataset, **change)), loc, *words)
    nothing_stored(client, settings)


def test_a_sweep_its_labels_cannot_serve_is_refused_and_nothing_is_stored(api):
    client, settings = api
    upload(client, "four", FOUR_CLASSES)
    upload(client, "targets", TARGETS)
    sweep = {
        "datasets": ["four", "targets"],
        "losses": ["logistic"],
        "l2": [1e-3],
        "solvers": ["lbfgs"],
        "multiclass": ["ovr", "multinomial"],
    }
    response = client.post("/api/v1/sweeps", json=sweep)
    refused(response, ["body", "multiclass"], "'targets' holds regression targets")
    response = client.post("/api/v1/sweeps", json={**sweep, "positive": [1]})
    refused(response, ["body", "multiclass"], "positive makes binary problems")
    binary = {**sweep, "datasets": ["four"], "multiclass": None}
    response = client.post("/api/v1/sweeps", json=binary)
    refused(response, ["body", "positive"], "'four' has 4 classes")
    response = client.post("/api/v1/sweeps", json={**binary, "losses": ["squared", "logistic"]})
    refused(response, ["body", "positive"], "loss 'logistic' two")  # squared takes 4 values
    nothing_stored(client, settings)
    ok = client.post("/api/v1/sweeps", json={**sweep, "datasets": ["four"]})
    assert ok.status_code == 201 and ok.json()["n_jobs"] == 2


def test_a_k_class_job_that_does_not_fit_is_refused_with_the_number(api):
    """X is d × K: lbfgs (memory 30) on 500,000 features × 4 classes needs 1.2 GiB, more
    than the 1 GiB a job may take here; the same data as a binary problem fits."""
    client, settings = api
    wide = {**PLANTED, "n_samples": 1000, "n_features": 500_000, "density": 1e-5}
    register(client, "wide", {**wide, "n_classes": 4})
    response = client.post("/api/v1/jobs", json=job("wide", multiclass="ovr"))
    message = refused(
        response,
        ["body", "params"],  # lbfgs's history (its memory) is most of it
        "lbfgs on a 1000 × 500000 dataset with 5000 non-zeros and 4 classes",
        "(X is 500000 features × 4 classes)",
        "GiB) of working memory, more than this server's limit of 1073741824 bytes "
        "(1.0 GiB) per job (FACEOFF_MAX_JOB_BYTES)",
    )
    assert "{'memory': 30}" in message
    sweep = {"datasets": ["wide"], "losses": ["logistic"], "l2": [1e-3], "solvers": ["lbfgs"]}
    response = client.post("/api/v1/sweeps", json={**sweep, "multiclass": ["multinomial"]})
    refused(response, ["body", "solvers", "params"], "and 4 classes")
    nothing_stored(client, settings)
    binary = client.post("/api/v1/jobs", json=job("wide", positive=[0, 1]))
    assert binary.status_code == 201, binary.text


BAD_SOURCES = {
    "classes above the cap": (
        {**PLANTED, "n_classes": 5},
        ["body", "source", "n_classes"],
        "n_classes: 5 classes, more than this server's limit of 4 (FACEOFF_MAX_CLASSES)",
    ),
    "no n_classes": (
        {k: v for k, v in PLANTED.items() if k != "n_classes"},
        ["body", "source", "synthetic"],
        "generator multiclass needs n_classes",
    ),
    "more classes than samples": (
        {**PLANTED, "n_samples": 3, "n_classes": 4},
        ["body", "source", "synthetic"],
        "every class needs a sample",
    ),
    "n_classes of a binary generator": (
        {**PLANTED, "generator": "classification", "n_classes": 3},
        ["body", "source", "synthetic"],
        "n_classes applies to generator multiclass only",
    ),
}


@pytest.mark.parametrize(("source", "loc", "words"), BAD_SOURCES.values(), ids=BAD_SOURCES)
def test_a_bad_multiclass_source_is_refused(api, source, loc, words):
    client, _ = api
    response = client.post("/api/v1/datasets", json={"name": "bad", "source": source})
    refused(response, loc, words)
    assert client.get("/api/v1/datasets").json()["count"] == 0


def test_ten_million_classes_are_refused_before_anything_is_made_of_them(api):
    client, _ = api
    huge = {**PLANTED, "n_samples": 10**7, "n_features": 1, "n_classes": 10**7}
    start = time.monotonic()
    response = client.post("/api/v1/datasets", json={"name": "huge", "source": huge})
    refused(response, ["body", "source", "n_classes"], "10000000 classes")
    assert time.monotonic() - start < 2


def test_random_features_of_a_dataset_keep_its_labels(api):
    """The DGPD recipe's sources through the API: the map's defaults filled in, the other
    map's parameters refused, the labels the base's, a K-class job accepted on them."""
    client, settings = api
    register(client, "planted", PLANTED)
    rf = register(
        client, "planted-rf", {"kind": "random_features", "base": "planted", "map": "fourier"}
    )
    assert {k: rf["source"][k] for k in ("map", "n_components", "gamma", "seed")} == {
        "map": "fourier",
        "n_components": 1000,
        "gamma": 0.02,
        "seed": 0,
    }
    assert "n_grids" not in rf["source"] and rf["source"]["base_shape"] == [300, 20]
    assert (rf["n_samples"], rf["n_features"], rf["nnz"]) == (300, 1000, 300_000)
    assert rf["labels"] == {"kind": "classes", "n_classes": 3, "counts": None}
    rb = {"kind": "random_features", "base": "planted", "map": "binning", "n_grids": 10}
    assert register(client, "planted-rb", rb)["source"]["sigma"] == 20.0
    response = client.post("/api/v1/jobs", json=job("planted-rb", multiclass="multinomial"))
    assert response.status_code == 201, response.text
    wrong = {**rb, "gamma": 0.1}
    response = client.post("/api/v1/datasets", json={"name": "x", "source": wrong})
    refused(
        response,
        ["body", "source", "random_features"],
        "gamma does not apply to map binning, which takes n_grids and sigma",
    )
    response = client.post("/api/v1/datasets", json={"name": "x", "source": {**rb, "base": "nope"}})
    refused(response, ["body", "source", "base"], "unknown dataset 'nope'")
    huge = {**rb, "map": "fourier", "n_grids": None, "n_components": 10**7}
    response = client.post("/api/v1/datasets", json={"name": "x", "source": huge})
    refused(
        response,
        ["body", "source", "n_components"],
        "random Fourier features of 'planted' (n_samples·n_components, dense): "
        "3000000000 non-zeros, more than this server's limit",
    )
    assert queued(settings) == 1


def test_a_binary_job_keeps_main_s_hashes_through_the_api(api, tmp_path, monkeypatch):
    """The labels checks and the K in the memory estimate leave a binary job as it was.
    (The official news20 is in no mirror here: a cached file of its name lets the API
    accept the job, which no worker runs.)"""
    client, _ = api
    monkeypatch.setenv("FACEOFF_DATA_CACHE", str(tmp_path))
    (tmp_path / "news20.libsvm.bz2").write_bytes(b"")
    for fields, digest, objective in MAIN_HASHES[:2]:
        response = client.post("/api/v1/jobs", json=fields)
        assert response.status_code == 201, response.text
        stored = response.json()
        assert (stored["spec_hash"], stored["objective_hash"]) == (digest, objective)
        assert "multiclass" not in stored["spec"]
