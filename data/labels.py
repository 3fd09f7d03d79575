"""Labels for a loss: ±1 classes for classification, targets as they are for regression.

The rule for classification losses (logistic, smoothed hinge), which need b ∈ {−1, +1}:

- with ``positive`` (a list of class values): those classes become +1, all others −1;
- otherwise the labels must take exactly two values: the larger becomes +1, the smaller −1
  (so 0/1, 1/2 and −1/+1 files all work); more than two values (multiclass) is an error
  that asks for ``positive`` (``--positive`` on the command line).

Regression losses (squared) use the labels as they are, unless ``positive`` is given.

A K-class problem (``multiclass`` "ovr" or "multinomial") keeps the labels as read: they must
be integers (1, 2.0 and −3 are; 1.5 is not) taking between 2 and ``max_classes`` values, and
:func:`class_indices` maps them, in increasing order, to the class indices 0..K−1 that the
kernels read. ``positive`` stays the explicit way to make a binary problem out of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


class LabelError(ValueError):
    """Labels that cannot be used with the requested loss."""


def prepare_labels(
    b: np.ndarray, binary: bool, positive: Sequence[float] | None = None
) -> np.ndarray:
    """The label vector a problem uses.

    Parameters
    ----------
    b : array, shape (n_samples,)
        Labels as read from the data.
    binary : bool
        True for a classification loss (``Loss.needs_binary_labels``).
    positive : sequence of float, optional
        Classes that become +1 (the rest −1); allowed for any loss.

    Returns
    -------
    array, shape (n_samples,), float64
    """
    b = np.asarray(b, dtype=np.float64)
    if positive is not None:
        return one_vs_rest(b, positive)
    if not binary:
        return b
    values = np.unique(b)
    if len(values) != 2:
        raise LabelError(
            f"a classification loss needs two label classes, found {describe(values)}; "
            "pass --positive with the classes that become +1 (the rest become -1), "
            f"e.g. --positive {_fmt(values[-1])}, or --multiclass ovr|multinomial for the "
            "K-class problem"
        )
    return np.where(b == values[1], 1.0, -1.0)


def one_vs_rest(b: np.ndarray, positive: Sequence[float]) -> np.ndarray:
    """+1 where bᵢ is one of ``positive``, −1 elsewhere; both classes must occur."""
    b = np.asarray(b, dtype=np.float64)
    wanted = np.unique(np.asarray(positive, dtype=np.float64))
    values = np.unique(b)
    missing = np.setdiff1d(wanted, values)
    if len(missing):
        raise LabelError(
            f"--positive class {_fmt(missing[0])} does not occur in the labels, "
            f"which take {describe(values)}"
        )
    is_positive = np.isin(b, wanted)
    if is_positive.all():
        raise LabelError(
            f"--positive covers every label ({describe(values)}); leave at least one class "
            "to become -1"
        )
    return np.where(is_positive, 1.0, -1.0)


MAX_CLASSES = 10_000  # the default cap on K (``FACEOFF_MAX_CLASSES``)


def class_indices(b: np.ndarray, max_classes: int = MAX_CLASSES) -> tuple[np.ndarray, np.ndarray]:
    """(the class index 0..K−1 of every sample, int64; the K class values, increasing).

    LabelError when a label is not an integer, when fewer than 2 classes occur, or when
    more than ``max_classes`` do."""
    b = np.asarray(b, dtype=np.float64)
    if b.ndim != 1:
        raise LabelError(f"labels must be one value a sample, got shape {b.shape}")
    finite = np.isfinite(b)
    integral = finite & (b == np.round(b))
    if not integral.all():
        bad = b[~integral][0]
        raise LabelError(
            f"a multiclass problem needs integer class labels, found {bad:g}; give a "
            "classification file, or drop multiclass for a regression loss"
        )
    classes, index = np.unique(b, return_inverse=True)
    if len(classes) < 2:
        raise LabelError(
            f"a multiclass problem needs at least 2 classes, the labels take {describe(classes)}"
        )
    if len(classes) > max_classes:
        raise LabelError(
            f"the labels take {len(classes)} classes, above the limit of {max_classes} "
            "(FACEOFF_MAX_CLASSES)"
        )
    return index.astype(np.int64).ravel(), classes


def class_counts(b: np.ndarray, limit: int = MAX_CLASSES) -> dict[str, int] | None:
    """{label: number of samples} of integer labels taking 2 to ``limit`` values, in
    increasing label order; None for labels that are not classes (regression targets)."""
    try:
        index, classes = class_indices(b, limit)
    except LabelError:
        return None
    counts = np.bincount(index, minlength=len(classes))
    return {_fmt(value): int(count) for value, count in zip(classes, counts, strict=True)}


def summarize(b: np.ndarray, max_counts: int = MAX_CLASSES) -> dict[str, Any]:
    """What labels are, as a dataset records them (the service's ``datasets.labels``).

    Integer labels are classes: ``{"kind": "classes", "n_classes": K, "counts": {label:
    samples}}``, labels in increasing order (``counts`` None above ``max_counts`` classes,
    so a file of integer targets never makes a huge record); any other label makes them
    targets: ``{"kind": "targets", "example": the first label that is not an integer}``.
    K counts every value, so 1 (a single class) and K above ``FACEOFF_MAX_CLASSES`` are
    recorded as they are and refused where a K-class problem is asked for.
    """
    b = np.asarray(b, dtype=np.float64).ravel()
    integral = np.isfinite(b) & (b == np.round(b))
    if not integral.all():
        return {"kind": "targets", "example": _fmt(b[~integral][0])}
    classes, counts = np.unique(b, return_counts=True)
    shown = None
    if len(classes) <= max_counts:
        shown = {_label(v): int(c) for v, c in zip(classes, counts, strict=True)}
    return {"kind": "classes", "n_classes": len(classes), "counts": shown}


def _label(value: float) -> str:
    """An integer label as text, every digit kept (``f"{1e7:g}"`` would be ``1e+07``)."""
    return str(int(value))


def describe(values: np.ndarray, limit: int = 8) -> str:
    """``"3 values: 1, 2, 3"``, the list cut after ``limit`` values."""
    shown = ", ".join(_fmt(v) for v in values[:limit])
    more = ", ..." if len(values) > limit else ""
    count = "1 value" if len(values) == 1 else f"{len(values)} values"
    return f"{count}: {shown}{more}"


def _fmt(value: float) -> str:
    return f"{value:g}"
