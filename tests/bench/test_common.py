"""The benchmarks' shared library: tables, datasets from the mirror, no script imports another.

The benchmarks read the mirror only (their results name the mirror's files and hashes), so
their dataset tests need the mirror's files themselves (tests/datasets.py's local_file)."""

import ast
from pathlib import Path

import numpy as np
import pytest

from bench import common
from bench.common import DATASETS, BenchDataset, load, md_table, read_dataset, write_results
from tests.datasets import local_file

BENCH = Path(__file__).resolve().parents[2] / "bench"


def imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, as dotted names (``from bench import x`` gives bench.x)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = "bench" if node.level else node.module or ""
            if node.level and node.module:
                base = f"bench.{node.module}"
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def test_imported_modules_sees_every_import_form(tmp_path):
    source = tmp_path / "x.py"
    source.write_text(
        "import bench.run_a\nfrom bench.run_b import f\nfrom bench import run_c\n"
        "from .run_d import g\nfrom . import run_e\n"
    )
    found = imported_modules(source)
    for name in ("run_a", "run_b", "run_c", "run_d", "run_e"):
        assert f"bench.{name}" in found


def test_no_bench_module_imports_a_script():
    """Scripts (bench/run_*.py) share bench.common, figures, peers and service_stack only."""
    scripts = {f"bench.{p.stem}" for p in BENCH.glob("run_*.py")}
    assert len(scripts) >= 7
    offenders = {
        p.name: sorted(imported_modules(p) & scripts)
        for p in sorted(BENCH.glob("*.py"))
        if imported_modules(p) & scripts
    }
    assert offenders == {}


def test_md_table_checks_row_widths():
    assert md_table(["a", "b"], [["1", "2"]]) == ["| a | b |", "|---|---|", "| 1 | 2 |"]
    with pytest.raises(ValueError, match="2 cells"):
        md_table(["a"], [["1", "2"]])


@pytest.fixture
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FACEOFF_DATA_CACHE", str(tmp_path / "cache"))


def test_write_results_writes_the_lines_under_bench_results(tmp_path, monkeypatch):
    monkeypatch.setattr(common, "REPO", tmp_path)
    path = write_results("x.md", ["# title", "", "| a |"])
    assert path == tmp_path / "bench" / "results" / "x.md"
    assert path.read_text() == "# title\n\n| a |\n"


def test_load_reads_the_registered_mirror_file(own_cache):
    local_file("a9a.bz2")  # skipped (CI: failed) without the mirror
    loaded = load(DATASETS["a9a"])
    info = loaded.info
    assert (info["file"], info["n_samples"], info["n_features"], info["nnz"]) == (
        "a9a.bz2",
        32561,
        123,
        451592,
    )
    assert info["sha256"].startswith("1dcb2b4aedea")  # the registry's (MANIFEST) hash
    assert set(np.unique(loaded.b)) == {-1.0, 1.0}


def test_read_dataset_makes_labels_and_unit_rows(own_cache):
    local_file("rcv1_small_vw.bz2")
    A, b, file, _ = read_dataset("rcv1_small_vw", positive=None, normalization="rows")
    assert file == "rcv1_small_vw.bz2"
    norms = np.sqrt(np.asarray(A.multiply(A).sum(axis=1)).ravel())
    assert np.allclose(norms[norms > 0], 1.0)
    assert set(np.unique(b)) == {-1.0, 1.0}


def test_a_file_missing_from_the_mirror_stops_with_its_name(own_cache, tmp_path, monkeypatch):
    monkeypatch.setenv("FACEOFF_DATA_MIRROR", str(tmp_path / "empty"))
    with pytest.raises(SystemExit, match=r"dataset file a9a\.bz2 .*not found in .*empty"):
        load(BenchDataset("a9a", "a9a"))
