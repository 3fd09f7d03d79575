"""faceoff.data.labels.summarize: what a dataset's labels are, as the service records them."""

from __future__ import annotations

import numpy as np

from faceoff.data.labels import summarize


def test_integer_labels_are_classes_with_their_counts_in_label_order():
    b = np.array([3.0, 1.0, 3.0, -2.0, 1e7, 3.0])
    assert summarize(b) == {
        "kind": "classes",
        "n_classes": 4,
        "counts": {"-2": 1, "1": 1, "3": 3, "10000000": 1},  # every digit of 1e7 kept
    }


def test_a_single_class_and_too_many_classes_are_recorded_as_they_are():
    assert summarize(np.ones(5)) == {"kind": "classes", "n_classes": 1, "counts": {"1": 5}}
    many = summarize(np.arange(50.0), max_counts=10)  # integer targets: K, no huge record
    assert many == {"kind": "classes", "n_classes": 50, "counts": None}


def test_any_label_that_is_not_an_integer_makes_targets():
    assert summarize(np.array([1.0, 2.0, 0.25, 1.5])) == {"kind": "targets", "example": "0.25"}
    assert summarize(np.array([1.0, np.nan]))["kind"] == "targets"
