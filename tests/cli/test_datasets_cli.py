"""``faceoff datasets list|info|fetch`` as a subprocess, with a temporary cache folder and a
temporary mirror folder, into which a test links the real files it reads (tests/datasets.py:
from the mirror, the cache or a download)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.datasets import link_datasets

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def mirror(tmp_path_factory) -> Path:
    """An empty mirror folder of the test's own."""
    return tmp_path_factory.mktemp("mirror")


@pytest.fixture
def datasets(mirror, tmp_path):
    env = {**os.environ, "FACEOFF_DATA_MIRROR": str(mirror), "FACEOFF_DATA_CACHE": str(tmp_path)}

    def run(*args: str, **env_changes: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "faceoff.cli.main", "datasets", *args],
            cwd=REPO,
            env={**env, **env_changes},
            capture_output=True,
            text=True,
            timeout=120,
        )

    return run


def test_list_json(datasets, mirror):
    link_datasets(mirror, "a9a", "leu_recon")
    run = datasets("list", "--format", "json")
    assert run.returncode == 0, run.stderr
    rows = {r["name"]: r for r in json.loads(run.stdout)}
    assert rows["a9a"] == {
        "name": "a9a",
        "task": "binary",
        "n_samples": 32561,
        "n_features": 123,
        "nnz": 451592,
        "status": "mirror",
    }
    assert rows["rcv1.binary"]["status"] == "remote"
    assert rows["leu_recon"]["status"] == "mirror"


def test_list_table(datasets):
    run = datasets("list", "--format", "table")
    assert run.returncode == 0, run.stderr
    assert "news20.binary" in run.stdout and "remote" in run.stdout


def test_info_json(datasets, mirror):
    link_datasets(mirror, "mushrooms")
    run = datasets("info", "mushrooms", "--format", "json")
    assert run.returncode == 0, run.stderr
    info = json.loads(run.stdout)
    assert (info["n_samples"], info["n_features"], info["nnz"]) == (8124, 112, 170604)
    assert info["labels"] == {"1": 3916, "2": 4208}
    assert info["density"] == pytest.approx(170604 / (8124 * 112))
    assert "UCI Mushroom" in info["provenance"] and info["status"] == "mirror"


def test_info_of_a_remote_dataset_needs_no_download(datasets):
    run = datasets("info", "url", "--format", "json")
    assert run.returncode == 0, run.stderr
    info = json.loads(run.stdout)
    assert info["status"] == "remote" and "labels" not in info
    assert info["urls"] == [
        "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary/url_combined.bz2"
    ]


def test_fetch_json_copies_into_the_cache(datasets, mirror, tmp_path):
    (link,) = link_datasets(mirror, "a1a")  # a1a.bz2, or the official a1a
    run = datasets("fetch", "a1a", "--format", "json")
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert result["path"] == str(tmp_path / link.name) and result["origin"] == "mirror"
    assert (tmp_path / link.name).is_file()
    listing = {r["name"]: r for r in json.loads(datasets("list", "--format", "json").stdout)}
    assert listing["a1a"]["status"] == "mirror"  # the mirror still comes first


@pytest.mark.parametrize("action", ["info", "fetch"])
def test_unknown_name_exit_2_with_close_matches(datasets, action):
    run = datasets(action, "a9b", "--format", "json")
    assert run.returncode == 2
    assert run.stdout == ""
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "unknown dataset 'a9b'" in lines[0] and "a9a" in lines[0]


def test_unavailable_dataset_is_one_line_exit_1(datasets, tmp_path):
    empty = tmp_path / "no-mirror"
    run = datasets("fetch", "leu_recon", FACEOFF_DATA_MIRROR=str(empty))
    assert run.returncode == 1
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1
    assert f"not in the mirror folder {empty}" in lines[0] and "no download URL" in lines[0]


def test_info_reports_statistics_and_advice(datasets, mirror):
    link_datasets(mirror, "mushrooms")
    run = datasets(
        "info", "mushrooms", "--format", "json", "--loss", "smooth_hinge", "--l2", "1e-3"
    )
    assert run.returncode == 0, run.stderr
    info = json.loads(run.stdout)
    assert info["stats"]["n"] == 8124 and info["stats"]["nnz"] == 170604
    assert info["stats"]["R_ratio"] == pytest.approx(1.0)  # every row has 21 ones
    advice = info["advice"]
    assert advice["l2"] == 1e-3 and advice["winner"] in ("primal_cd", "dual_cd")
    assert advice["ratio"] == pytest.approx(advice["T_P"] / advice["T_D"])


def test_info_rejects_a_bad_l2(datasets, mirror):
    link_datasets(mirror, "mushrooms")  # --l2 is only checked where the data is at hand
    run = datasets("info", "mushrooms", "--l2", "-1")
    assert run.returncode == 2
    assert run.stderr.strip().count("\n") == 0 and "--l2" in run.stderr


def test_solve_accepts_a_dataset_name(mirror, tmp_path):
    link_datasets(mirror, "a1a")
    env = {**os.environ, "FACEOFF_DATA_MIRROR": str(mirror), "FACEOFF_DATA_CACHE": str(tmp_path)}
    args = ["--data", "a1a", "--loss", "logistic", "--l2", "1e-2", "--solver", "dual_cd"]
    args += ["--max-epochs", "5", "--format", "jsonl"]
    run = subprocess.run(
        [sys.executable, "-m", "faceoff.cli.main", "solve", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout.strip().splitlines()[-1])["summary"]
    assert summary["stop_reason"] in ("converged", "max_epochs")
