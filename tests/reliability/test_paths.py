"""No path traversal: dataset names, registry names and uploaded file names never become
paths outside the mirror, cache or upload folders, and no request reads an arbitrary file.
(``faceoff solve --data ../x.svm`` is a path on the user's own machine and stays allowed.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from faceoff.api.main import create_app
from faceoff.cli.main import build_parser
from faceoff.cli.solve import load_matrix as cli_load_matrix
from faceoff.core.datasets import load_matrix
from faceoff.core.db import session_scope
from faceoff.core.models import Dataset
from faceoff.data.cache import load_dataset
from faceoff.data.fetch import dataset_path, locate, status
from faceoff.data.registry import DatasetError, DatasetSpec, Source, UnknownDatasetError, get_spec
from tests.backends import LOCAL

REPO = Path(__file__).resolve().parents[2]
SVM = b"+1 1:0.5 3:1\n-1 2:1.5\n"
BAD_NAMES = [
    "../x",
    "a/b",
    "..",
    ".",
    ".hidden",
    "/etc/passwd",
    "C:\\Windows",
    "a\\b",
    "a\x00b",
    "a\nb",
    "x" * 201,
    "",
]
TRAVERSALS = ["../../etc/passwd", "/etc/passwd", "a9a/../../a9a", "..", "a9a\x00", "~/x"]


@pytest.fixture
def client(sqlite_url, settings_for):
    settings = settings_for(sqlite_url)
    with TestClient(create_app(settings), client=LOCAL) as client:
        yield client, settings


@pytest.mark.parametrize("name", BAD_NAMES)
def test_dataset_names_that_are_not_plain_are_refused(client, name):
    client, _ = client
    body = {"name": name, "source": {"kind": "sklearn", "name": "breast_cancer"}}
    response = client.post("/api/v1/datasets", json=body)
    assert response.status_code == 422, response.text
    (error,) = response.json()["detail"]
    assert error["loc"] == ["body", "name"]
    files = {"file": ("ok.svm", SVM)}
    response = client.post("/api/v1/datasets/upload", files=files, data={"name": name})
    if name:  # an empty form field means "not given": the name comes from the file name
        assert response.status_code == 422, response.text
        assert response.json()["detail"][0]["loc"] == ["body", "name"]


@pytest.mark.parametrize("name", TRAVERSALS)
def test_registry_names_are_names_not_paths(client, name):
    client, _ = client
    body = {"name": "x", "source": {"kind": "registry", "name": name}}
    response = client.post("/api/v1/datasets", json=body)
    assert response.status_code == 422, response.text
    (error,) = response.json()["detail"]
    # a control character is refused by the schema, under the source's kind
    assert error["loc"] in (["body", "source", "name"], ["body", "source", "registry", "name"])
    assert "unknown dataset" in error["msg"] or "control character" in error["msg"]
    job = {"dataset": name, "loss": "logistic", "l2": 1e-4, "solver": "dual_cd"}
    response = client.post("/api/v1/jobs", json=job)
    assert response.status_code == 422, response.text
    assert response.json()["detail"][0]["loc"] == ["body", "dataset"]
    assert client.get("/api/v1/datasets").json()["count"] == 0


@pytest.mark.parametrize(
    "filename", ["../../../evil.svm", "..\\..\\evil.svm", "/tmp/x/evil.svm", "sub/dir/evil.svm"]
)
def test_uploaded_file_names_are_ignored_but_for_the_default_name(client, filename, tmp_path):
    client, settings = client
    response = client.post("/api/v1/datasets/upload", files={"file": (filename, SVM)})
    assert response.status_code == 201, response.text
    dataset = response.json()
    assert dataset["name"] == "evil" and dataset["source"]["file"] == f"{dataset['sha256']}.svm"
    assert [p.name for p in settings.upload_dir.iterdir()] == [dataset["source"]["file"]]
    assert not any(p.name == "evil.svm" for p in tmp_path.rglob("*"))


@pytest.mark.parametrize("file", ["../../../../etc/passwd", "/etc/passwd", "..", "sub/../../x"])
def test_an_upload_source_outside_the_upload_folder_is_never_read(client, file):
    client, settings = client
    with pytest.raises(ValueError, match="leaves the upload folder"):
        load_matrix({"kind": "upload", "file": file}, settings.upload_dir)
    with session_scope(settings.database_url) as session:  # a tampered row
        row = Dataset(name="tampered", source={"kind": "upload", "file": file, "n_features": None})
        session.add(row)
        session.flush()
        dataset_id = row.id
    response = client.get(f"/api/v1/datasets/{dataset_id}/stats")
    assert response.status_code == 422
    assert "leaves the upload folder" in response.json()["detail"][0]["msg"]
    assert "root:" not in response.text


def _unchecked_source(file: str, url: str | None) -> Source:
    """A Source whose file name skipped the registry's check (a tampered registry)."""
    source = Source("placeholder.bz2", url=url)
    object.__setattr__(source, "file", file)
    return source


@pytest.mark.parametrize("url", [None, "http://127.0.0.1:1/x.bz2"], ids=["mirror", "download"])
@pytest.mark.parametrize("file", ["../secret.bz2", "../../secret.bz2", "/tmp/secret.bz2", ".."])
def test_fetch_never_builds_a_path_outside_the_mirror_or_cache(tmp_path, file, url):
    mirror, cache = tmp_path / "mirror", tmp_path / "cache"
    mirror.mkdir()
    (tmp_path / "secret.bz2").write_bytes(b"secret")
    spec = DatasetSpec("evil", "binary", (_unchecked_source(file, url),), 1, 1)
    registry = {"evil": spec}
    for call in (
        lambda: locate(spec, mirror=mirror, cache=cache, progress=False),
        lambda: locate(spec, mirror=mirror, cache=cache, progress=False, copy_to_cache=True),
        lambda: status(spec, mirror=mirror, cache=cache),
        lambda: dataset_path("evil", registry=registry, mirror=mirror, cache=cache),
        lambda: load_dataset("evil", registry=registry, mirror=mirror, cache=cache),
    ):
        with pytest.raises(DatasetError, match="must be a plain file name, not a path"):
            call()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mirror", "secret.bz2"]
    assert list(mirror.iterdir()) == []


@pytest.mark.parametrize("file", ["../x.bz2", "a/b.bz2", "..", ".hidden", "/abs.bz2", "a\x00"])
def test_registry_sources_refuse_paths(file):
    with pytest.raises(ValueError, match="plain file name"):
        Source(file)


@pytest.mark.parametrize("name", TRAVERSALS)
def test_registry_lookups_by_path_are_unknown_names(name, tmp_path):
    with pytest.raises(UnknownDatasetError, match="unknown dataset"):
        get_spec(name)
    with pytest.raises(UnknownDatasetError):
        load_dataset(name, mirror=tmp_path, cache=tmp_path, progress=False)


def test_cli_datasets_info_of_a_path_reads_this_machine_never_the_registry(tmp_path):
    """A path is the user's own file, as for faceoff solve --data: parsed as an upload (a
    non-svmlight file is a parse error naming its line), never looked up in the cache."""

    def info(path: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "faceoff.cli.main", "datasets", "info", path],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=60,
            env={"FACEOFF_DATA_CACHE": str(tmp_path / "cache"), "PATH": ""},
        )

    missing = info("../../etc/no-such-file")
    assert (missing.returncode, missing.stdout) == (2, "")
    assert missing.stderr.strip() == (
        "faceoff datasets info: error: ../../etc/no-such-file: no such file "
        "(nor a name of faceoff datasets list)"
    )
    (tmp_path / "passwd").write_text("root:x:0:0:root:/root:/bin/sh\n")
    not_svmlight = info(os.path.relpath(tmp_path / "passwd", REPO))
    assert (not_svmlight.returncode, not_svmlight.stdout) == (2, "")
    assert not_svmlight.stderr.startswith("faceoff datasets info: error: passwd: line 1: label")
    assert not (tmp_path / "cache").exists()


def test_cli_solve_reads_a_relative_path_on_this_machine(tmp_path, monkeypatch):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "mine.svm").write_bytes(SVM)
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    args = build_parser().parse_args(
        ["solve", "--data", "../data/mine.svm", "--loss", "logistic", "--l2", "1e-3"]
        + ["--solver", "dual_cd"]
    )
    A, b, description = cli_load_matrix(args)
    assert A.shape == (2, 3) and list(b) == [1.0, -1.0] and description == "mine.svm"
