"""The test set-up itself (tests/datasets.py): on a fresh clone with no dataset mirror beside
it, no download cache and no network, ``pytest tests/data`` passes with the tests that read
real LIBSVM files skipped and named in one summary line; with the mirror they run; from the
download cache they run; under ``CI`` they fail; and a test's dataset is downloaded, or its
download failure remembered, as Faceoff downloads."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import xml.etree.ElementTree as ET
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from faceoff.data.registry import DatasetError, DatasetSpec, Source
from tests import datasets
from tests.data.test_fetch import N_FEATURES, N_SAMPLES, NNZ, PAYLOAD, SHA, Handler
from tests.datasets import REPO, NotAtHand, dataset_file, local_file, mirror_folder, summary

UNREACHABLE = "http://127.0.0.1:9"  # the discard port: every download fails at once


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """A copy of the repository's files (tracked or new, as they are in the work tree) in a
    folder with no ``../shared`` beside it: what a fresh clone is."""
    if not (REPO / ".git").exists():
        pytest.skip("not a git work tree: nothing to clone")
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split("\0")
    copy = tmp_path_factory.mktemp("fresh") / "faceoff"
    for name in filter(None, listed):
        if (REPO / name).is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, copy / name)
    assert not (copy.parent / "shared").exists()
    return copy


def makefile_mirror(clone: Path) -> str:
    """FACEOFF_DATA_MIRROR as the clone's Makefile sets it when the caller does not."""
    env = {k: v for k, v in os.environ.items() if k not in ("FACEOFF_DATA_MIRROR", "MAKEFLAGS")}
    shown = subprocess.run(
        ["make", "-s", "--no-print-directory", "-f", "Makefile", "-f", "-", "show"],
        cwd=clone,
        input="show:\n\t@echo $(FACEOFF_DATA_MIRROR)\n",
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return shown.stdout.strip()


def run_pytest(clone: Path, tmp: Path, *args: str, **env_changes: str):
    """``python -m pytest ARGS`` in the clone, serially, downloads failing at once; returns
    (the completed process, {node id: "passed" | "skipped" | "failed"})."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PYTEST_", "FACEOFF_DATA_")) and key.lower() != "ci"
        if not key.lower().endswith("_proxy")
    }
    env.update(https_proxy=UNREACHABLE, FACEOFF_DATA_CACHE=str(tmp / "cache"), **env_changes)
    report = tmp / "report.xml"
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "0", "-q"]
    run = subprocess.run(
        [*command, f"--junitxml={report}", *args],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    outcomes = {}
    for case in ET.parse(report).iter("testcase"):
        node = f"{case.get('classname', '').replace('.', '/')}.py::{case.get('name')}"
        kinds = {child.tag for child in case}
        outcomes[node] = (
            "failed"
            if kinds & {"failure", "error"}
            else "skipped"
            if "skipped" in kinds
            else "passed"
        )
    return run, outcomes


def skip_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("SKIPPED")]


@pytest.mark.slow
def test_a_fresh_clone_offline_skips_the_real_file_tests_in_one_line(clone, tmp_path):
    no_mirror = makefile_mirror(clone)
    assert no_mirror == str(clone.parent / "shared" / "datasets")  # the default, not there
    (tmp_path / "cache").mkdir()
    run, outcomes = run_pytest(clone, tmp_path, "tests/data", FACEOFF_DATA_MIRROR=no_mirror)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    skipped = sorted(node for node, outcome in outcomes.items() if outcome == "skipped")
    assert "failed" not in outcomes.values()
    (line,) = skip_lines(run.stdout)  # one line for every skip, naming what was missing
    assert line.startswith(f"SKIPPED [{len(skipped)}] tests/datasets.py:")
    assert f"FACEOFF_DATA_MIRROR={no_mirror} is not a folder" in line
    assert "downloading from the LIBSVM site failed: URLError" in line
    assert "3 datasets (" in line and "): a1a, mushrooms, splice;" in line
    for file in ("MANIFEST.tsv", "a1a.bz2", "rcv1_small_vw.bz2", "w8a.bz2"):
        assert file in line
    assert "Set FACEOFF_DATA_MIRROR to a copy of the project's dataset mirror" in line
    assert str(tmp_path / "cache") in line
    assert list((tmp_path / "cache").iterdir()) == []  # nothing half-downloaded
    for node in (
        "tests/data/test_svmlight.py::test_reads_a1a",
        "tests/data/test_registry.py::test_every_manifest_file_is_registered_with_its_sha256_"
        "and_shape",
        "tests/data/test_registry.py::test_a_registered_file_has_its_sha256_and_shape[a9a.bz2]",
        "tests/data/test_registry.py::test_memory_keeps_older_datasets_only_within_its_byte_budget",
    ):
        assert outcomes[node] == "skipped", node
    assert outcomes["tests/data/test_svmlight.py::test_plain_and_bz2_agree"] == "passed"

    # with the mirror, the very tests that were skipped run, and pass
    mirror = mirror_folder() or local_file("MANIFEST.tsv").parent  # skip (CI: fail) without
    run, outcomes = run_pytest(clone, tmp_path, *skipped, FACEOFF_DATA_MIRROR=str(mirror))
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert outcomes == dict.fromkeys(skipped, "passed")
    assert skip_lines(run.stdout) == []


@pytest.mark.slow
def test_files_in_the_download_cache_are_used_and_ci_fails_without_them(clone, tmp_path):
    source = mirror_folder() or local_file("a1a.bz2").parent
    (tmp_path / "cache").mkdir()
    for file in ("a1a.bz2", "mushrooms.bz2"):
        shutil.copy(source / file, tmp_path / "cache" / file)
    svmlight = "tests/data/test_svmlight.py"
    run, outcomes = run_pytest(clone, tmp_path, svmlight)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert set(outcomes.values()) == {"passed"} and skip_lines(run.stdout) == []

    for file in ("a1a.bz2", "mushrooms.bz2"):
        (tmp_path / "cache" / file).unlink()
    run, outcomes = run_pytest(clone, tmp_path, svmlight, "-k", "a1a or labels", CI="true")
    assert run.returncode == 1
    assert sorted(outcomes.values()) == ["failed", "failed"]
    assert "real LIBSVM data not at hand" in run.stdout and "CI is set" in run.stdout


# ------------------------------------------------------------ the mechanism, in this process


@pytest.fixture(scope="module")
def server():
    """tests/data/test_fetch.py's HTTP server on 127.0.0.1 (PAYLOAD at /tiny.bz2)."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """No mirror, an empty cache, no memory of earlier look-ups, not CI; ``offer(name, url,
    sha256)`` registers a tiny dataset for :func:`dataset_file`."""
    monkeypatch.setenv("FACEOFF_DATA_MIRROR", str(tmp_path / "no-mirror"))
    monkeypatch.setenv("FACEOFF_DATA_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setattr(datasets, "_found", {})
    monkeypatch.setattr(datasets, "_unavailable", {})
    monkeypatch.setattr(datasets, "_download_failure", "")
    registry: dict[str, DatasetSpec] = {}
    monkeypatch.setattr(datasets, "get_spec", registry.__getitem__)
    Handler.requests.clear()

    def offer(name: str, url: str | None, sha256: str | None = SHA) -> None:
        source = Source(f"{name}.bz2", sha256, url)
        registry[name] = DatasetSpec(name, "binary", (source,), N_SAMPLES, N_FEATURES, NNZ)

    return offer


def test_a_dataset_is_downloaded_once_then_read_from_the_cache(fresh, server, tmp_path):
    fresh("tiny", f"{server}/tiny.bz2")
    path = dataset_file("tiny")
    assert path == tmp_path / "cache" / "tiny.bz2" and path.read_bytes() == PAYLOAD
    datasets._found.clear()
    assert dataset_file("tiny") == path and len(Handler.requests) == 1  # from the cache


def test_after_a_failed_download_no_other_is_tried(fresh, server):
    fresh("gone", f"{UNREACHABLE}/gone.bz2")
    fresh("tiny", f"{server}/tiny.bz2")
    fresh("only-mirror", None)
    with pytest.raises(NotAtHand) as skipped:
        dataset_file("gone")
    ((name, kind, why),) = skipped.value.needs
    assert (name, kind) == ("gone", "download") and why.endswith("(3 attempts)")
    with pytest.raises(NotAtHand) as skipped:  # both named at once
        datasets.dataset_files("tiny", "only-mirror")
    assert skipped.value.needs == [("tiny", "download", why), ("only-mirror.bz2", "mirror", "")]
    assert Handler.requests == []  # an offline machine waits for one download only
    line = summary(skipped.value.needs)
    assert "1 dataset (downloading from the LIBSVM site failed: " in line
    assert "): tiny; 1 file only the mirror holds: only-mirror.bz2." in line


def test_a_wrong_download_fails_rather_than_skips(fresh, server, monkeypatch):
    fresh("tiny", f"{server}/tiny.bz2", sha256="0" * 64)
    with pytest.raises(DatasetError, match="expected 0{64}") as refused:
        dataset_file("tiny")
    assert not isinstance(refused.value, pytest.skip.Exception)
    monkeypatch.setenv("CI", "1")
    fresh("only-mirror", None)
    with pytest.raises(pytest.fail.Exception, match="only-mirror.bz2.*CI is set"):
        dataset_file("only-mirror")
