"""core.datasets and core.uploads: objectives of a dataset, statistics with and without
storing them, and the names an upload may take."""

from __future__ import annotations

import io

import pytest

from faceoff.core import datasets, uploads
from faceoff.core.datasets import Caps
from faceoff.core.db import read_session, session_scope
from faceoff.core.errors import ConflictError
from faceoff.core.models import Dataset, Job
from faceoff.core.specs import SpecError
from tests.dashboard import factories

SVM = b"1 1:0.5 3:1\n-1 2:1\n1 1:1 2:0.25\n"


def test_objectives_of_a_dataset_are_the_teams(sqlite_url):
    sweep_id, ids = factories.add_sweep(sqlite_url, l2s=(1e-3, 1e-4))
    with session_scope(sqlite_url) as session:
        dataset = session.get(Job, ids[0]).dataset
        assert datasets.dataset_objectives(session, dataset, team_id=None) == [
            {"loss": "logistic", "gamma": 1.0, "l2": l2, "l1": 0.0, "normalize": "none"}
            | {"multiclass": None, "fit_intercept": False}
            for l2 in (1e-4, 1e-3)
        ]
        assert datasets.dataset_objectives(session, dataset, team_id=7) == []


def test_statistics_are_stored_only_when_asked(sqlite_url, tmp_path):
    dataset_id = factories.add_dataset(sqlite_url)
    where = {"upload_dir": tmp_path, "caps": Caps(10**6, 10**6, 10**7)}
    with read_session(sqlite_url) as session:  # the dashboard's: it cannot write
        dataset = datasets.get_dataset(session, dataset_id, team_id=None)
        read = datasets.dataset_statistics(session, dataset, "logistic", 1e-3, **where, store=False)
    assert read["stats"]["n"] == 300 and read["stats"]["d"] == 40
    assert read["advice"]["loss"] == "logistic" and read["advice"]["smoothness"] == 0.25
    with session_scope(sqlite_url) as session:
        dataset = session.get(Dataset, dataset_id)
        assert dataset.stats is None and dataset.nnz is None
        stored = datasets.dataset_statistics(session, dataset, "logistic", 1e-3, **where)
    assert stored == read
    with session_scope(sqlite_url) as session:
        dataset = session.get(Dataset, dataset_id)
        assert dataset.stats == read["stats"] and dataset.nnz == read["stats"]["nnz"]
        scaled = datasets.dataset_statistics(
            session, dataset, "squared", 1e-3, 1.0, "rows", **where
        )
    assert scaled["stats"]["R"] == pytest.approx(1.0) and scaled["advice"]["smoothness"] == 1.0


def test_an_l1_objective_gets_no_advice_but_a_reason(sqlite_url, tmp_path):
    """The advisor's analysis needs l2 > 0: a Lasso objective (l2 = 0) on the dataset page
    gets a SpecError at l2 saying so (shown as the reason), never a ValueError (a 500)."""
    dataset_id = factories.add_dataset(sqlite_url)
    where = {"upload_dir": tmp_path, "caps": Caps(10**6, 10**6, 10**7)}
    with read_session(sqlite_url) as session:
        dataset = datasets.get_dataset(session, dataset_id, team_id=None)
        with pytest.raises(SpecError) as caught:
            datasets.dataset_statistics(session, dataset, "squared", 0.0, **where, store=False)
    assert caught.value.loc == ("l2",) and "needs l2 > 0" in str(caught.value)


@pytest.mark.parametrize(
    ("name", "filename", "expected"),
    [
        ("mine", "whatever.svm", "mine"),
        (None, "../a9a copy.txt.bz2", "a9a_copy"),
        (None, "C:\\data\\news.svmlight", "news"),
    ],
)
def test_an_upload_is_named_or_named_after_its_file(name, filename, expected):
    assert uploads.upload_name(name, filename) == expected


def test_an_upload_without_a_usable_name_is_refused():
    with pytest.raises(SpecError, match="no dataset name can be made from '...svm'") as err:
        uploads.upload_name(None, "...svm")
    assert err.value.loc == ("name",)


def test_an_upload_may_not_take_a_public_name(sqlite_url, settings_for):
    settings = settings_for(sqlite_url)
    with session_scope(sqlite_url) as session:
        for name in ("a9a", "A9A", "breast_cancer"):
            with pytest.raises(ConflictError, match="reserved for the public dataset"):
                uploads.upload_dataset(
                    session, io.BytesIO(SVM), "x.svm", name, None, settings, team_id=None
                )
        assert not settings.upload_dir.exists() or not any(settings.upload_dir.iterdir())
        dataset, created = uploads.upload_dataset(
            session, io.BytesIO(SVM), "tiny.svm", None, None, settings, team_id=None
        )
    assert created and dataset.name == "tiny" and dataset.n_samples == 3
    assert [p.name for p in settings.upload_dir.iterdir()] == [dataset.source["file"]]
