"""core.features: random features of a registered dataset as a source — stored with their
base, checked against the caps before anything is built, built as data.random_features
builds them, labels and owner taken from the base."""

from __future__ import annotations

import numpy as np
import pytest

from faceoff.core import datasets, features
from faceoff.core.datasets import Caps, DatasetTooLarge, load_matrix
from faceoff.core.db import session_scope
from faceoff.core.models import Dataset, Team
from faceoff.core.specs import SpecError
from faceoff.data.random_features import random_binning_features, random_fourier_features

BASE = {
    "kind": "synthetic",
    "generator": "multiclass",
    "n_samples": 200,
    "n_features": 10,
    "density": 1.0,
    "seed": 0,
    "n_classes": 4,
    "layout": "planted",
}
FOURIER = {"kind": "random_features", "base": "base", "map": "fourier", "n_components": 50}
FOURIER |= {"gamma": 0.5, "seed": 3}
BINNING = {"kind": "random_features", "base": "base", "map": "binning", "n_grids": 8}
BINNING |= {"sigma": 2.0, "seed": 3}
CAPS = Caps(10**6, 10**6, 10**7)


@pytest.fixture(autouse=True)
def data_cache(tmp_path, monkeypatch):
    """A data cache folder of the test's own: built features are stored there."""
    folder = tmp_path / "data-cache"
    monkeypatch.setenv("FACEOFF_DATA_CACHE", str(folder))
    return folder


@pytest.fixture
def base(sqlite_url):
    with session_scope(sqlite_url) as session:
        datasets.register_dataset(session, "base", BASE, team_id=None, caps=CAPS)
        sparse = {**BASE, "density": 0.2}  # 400 non-zeros, 2,000 as a dense array
        datasets.register_dataset(session, "sparse", sparse, team_id=None, caps=CAPS)
    return sqlite_url


@pytest.mark.parametrize("source", [FOURIER, BINNING], ids=["fourier", "binning"])
def test_features_are_registered_with_their_base_and_built_as_data_builds_them(
    base, tmp_path, source
):
    with session_scope(base) as session:
        dataset, created = datasets.register_dataset(
            session, "feats", source, team_id=None, caps=CAPS
        )
        assert created
        stored, labels = dataset.source, dataset.labels
        shape = (dataset.n_samples, dataset.n_features, dataset.nnz)
        again, created = datasets.register_dataset(
            session, "feats", source, team_id=None, caps=CAPS
        )
        assert not created and again.id == dataset.id
    assert stored == {**source, "base_source": BASE, "base_shape": [200, 10]}
    assert labels == {"kind": "classes", "n_classes": 4, "counts": None}
    A, b = load_matrix(stored, tmp_path, CAPS)
    A0, b0 = load_matrix(BASE, tmp_path, CAPS)
    np.testing.assert_array_equal(b, b0)
    if source["map"] == "fourier":
        expected = random_fourier_features(A0, 50, 0.5, seed=3)[0]
        assert shape == (200, 50, 200 * 50)
    else:
        expected = random_binning_features(A0, 8, 2.0, seed=3)[0].toarray()
        assert shape == (200, None, 200 * 8) and A.nnz == 200 * 8
    np.testing.assert_array_equal(A.toarray(), expected)


@pytest.mark.parametrize(
    ("source", "caps", "loc", "words"),
    [
        (FOURIER, Caps(10**6, 10**6, 9_999), ("source", "n_components"), "10000 non-zeros"),
        (FOURIER, Caps(10**6, 49, 10**7), ("source", "n_components"), "50 features"),
        (
            {**BINNING, "n_grids": 20},
            Caps(10**6, 10**6, 3_999),
            ("source", "n_grids"),
            "4000 non-zeros",
        ),
        # binning reads the base as a dense 200 × 10 array
        (
            {**BINNING, "base": "sparse", "n_grids": 1},
            Caps(10**6, 10**6, 1_999),
            ("source", "base"),
            "binning reads 'sparse' as a dense 200 × 10 array: 2000 non-zeros",
        ),
    ],
    ids=["fourier nnz", "fourier features", "binning nnz", "binning base"],
)
def test_features_over_the_caps_are_refused_before_anything_is_built(
    base, tmp_path, monkeypatch, source, caps, loc, words
):
    def never(*_):
        raise AssertionError("built")

    monkeypatch.setattr(features, "build_features", never)
    with session_scope(base) as session, pytest.raises(DatasetTooLarge) as refused:
        datasets.register_dataset(session, "feats", source, team_id=None, caps=caps)
    assert refused.value.loc == loc and words in refused.value.message
    with session_scope(base) as session:  # a worker under smaller caps refuses it too
        stored, _ = features.expand_source(session, source, team_id=None, caps=CAPS)
    with pytest.raises(DatasetTooLarge):
        load_matrix(stored, tmp_path, caps)


def test_a_base_must_be_usable(base):
    with session_scope(base) as session:
        with pytest.raises(SpecError) as unknown:
            datasets.register_dataset(
                session, "f", {**FOURIER, "base": "nope"}, team_id=None, caps=CAPS
            )
        assert unknown.value.loc == ("source", "base")
        datasets.register_dataset(session, "f", FOURIER, team_id=None, caps=CAPS)
        with pytest.raises(SpecError, match="itself random features of 'base'"):
            datasets.register_dataset(
                session, "ff", {**FOURIER, "base": "f"}, team_id=None, caps=CAPS
            )


def test_features_of_an_upload_are_its_team_s(sqlite_url):
    upload = {"kind": "upload", "file": "x.svm", "n_features": None}
    with session_scope(sqlite_url) as session:
        team = Team(name="t")
        session.add(team)
        session.flush()
        team_id = team.id
        session.add(Dataset(name="mine", source=upload, team_id=team_id, n_samples=3, n_features=2))
    with session_scope(sqlite_url) as session:
        source = {**FOURIER, "base": "mine"}
        with pytest.raises(SpecError):  # another team cannot see the upload
            datasets.register_dataset(session, "f", source, team_id=None, caps=CAPS)
        dataset, _ = datasets.register_dataset(session, "f", source, team_id=team_id, caps=CAPS)
        assert dataset.team_id == team_id and dataset.source["base_source"] == upload


def _stored(source: dict) -> dict:
    return {**source, "base_source": BASE, "base_shape": [200, 10]}


@pytest.fixture
def builds(monkeypatch):
    """The sources core.features.build_features was called with."""
    calls: list[dict] = []
    build = features.build_features

    def counted(A, source):
        calls.append(source)
        return build(A, source)

    monkeypatch.setattr(features, "build_features", counted)
    return calls


@pytest.mark.parametrize("source", [FOURIER, BINNING], ids=["fourier", "binning"])
def test_features_are_built_once_a_machine_then_read(tmp_path, data_cache, builds, source):
    A, b = load_matrix(_stored(source), tmp_path, CAPS)
    again, b_again = load_matrix(_stored(source), tmp_path, CAPS)
    assert len(builds) == 1
    assert (A != again).nnz == 0 and A.shape == again.shape
    np.testing.assert_array_equal(b, b_again)
    files = sorted(p.name for p in (data_cache / "built").glob("*.npz"))
    assert files == [f"{features.features_key(_stored(source))}.npz"]


@pytest.mark.parametrize(
    "change", [{"seed": 4}, {"sigma": 3.0}, {"n_grids": 9}, {"base_source": {**BASE, "seed": 1}}]
)
def test_another_seed_parameter_or_base_is_another_file(tmp_path, data_cache, builds, change):
    stored = _stored(BINNING)
    changed = {**stored, **change}
    A, _ = load_matrix(stored, tmp_path, CAPS)
    B, _ = load_matrix(changed, tmp_path, CAPS)
    assert len(builds) == 2 and features.features_key(stored) != features.features_key(changed)
    assert A.shape != B.shape or (A != B).nnz > 0
    assert len(list((data_cache / "built").glob("*.npz"))) == 2
    load_matrix(changed, tmp_path, CAPS)
    assert len(builds) == 2


def test_the_key_names_the_code_and_the_base_data_not_the_dataset_name(monkeypatch):
    """Same features under another dataset name: one file; another builder's code or
    another registry file: another file."""
    stored = _stored(BINNING)
    key = features.features_key(stored)
    assert features.features_key({**stored, "base": "renamed"}) == key
    assert features.features_key({**stored, "n_grids": 8.0}) == key  # as the builder reads it
    monkeypatch.setattr(features, "_code_version", lambda: "another builder")
    assert features.features_key(stored) != key
    monkeypatch.undo()
    registry = {**stored, "base_source": {"kind": "registry", "name": "mnist_test.scale"}}
    monkeypatch.setattr(features, "_base_data", lambda base: "sha256 of one file")
    one = features.features_key(registry)
    monkeypatch.setattr(features, "_base_data", lambda base: "sha256 of another")
    assert features.features_key(registry) != one
