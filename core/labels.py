"""What a dataset's labels are, and which problems they can make.

``Dataset.labels`` records :func:`faceoff.data.labels.summarize` of a dataset's labels:
``{"kind": "classes", "n_classes": K, "counts": {label: samples} | None}`` for integer
labels, ``{"kind": "targets", ...}`` otherwise. It is set

- at registration, where the source says it without reading the data
  (:func:`declared_labels`: a registry entry's task and class count, a generator's, a
  scikit-learn set's), from the parsed file for an upload, and from the base dataset for
  random features;
- when the data is first read otherwise (:func:`record_labels`: the worker, the statistics).

A submission is checked against it (:func:`check_labels`) so that a job its data cannot
make is refused with a 422 naming the field and the reason, and nothing is stored: a
K-class form on targets, on a single class or on more classes than ``FACEOFF_MAX_CLASSES``;
a classification loss on targets, on one class, or on K > 2 classes without ``positive``
(no silent binarization); ``positive`` classes the data does not have. Labels not known yet
are checked by the worker when it builds the problem (``data.labels``), as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from faceoff.core.models import Dataset
from faceoff.core.specs import ObjectiveSpec, SpecError
from faceoff.data.labels import summarize
from faceoff.data.registry import REGISTRY
from faceoff.solvers.vocabulary import get_loss

Loc = tuple[str | int, ...]
# breast_cancer's 569 samples: 212 malignant (−1), 357 benign (+1)
SKLEARN_LABELS = {
    "breast_cancer": {"kind": "classes", "n_classes": 2, "counts": {"-1": 212, "1": 357}}
}


def declared_labels(source: Mapping[str, Any]) -> dict[str, Any] | None:
    """The labels a source says it has without reading its data; None when only reading
    tells (an upload before it is parsed, a multiclass registry entry without
    ``n_classes``, random features: their base's)."""
    kind = source.get("kind")
    if kind == "registry":
        entry = REGISTRY.get(source["name"])
        if entry is None:
            return None
        if entry.task == "regression":
            return {"kind": "targets"}
        if entry.task == "binary":
            return {"kind": "classes", "n_classes": 2, "counts": None}
        if entry.n_classes is None:
            return None
        counts = dict(entry.class_counts) if entry.class_counts else None
        return {"kind": "classes", "n_classes": entry.n_classes, "counts": counts}
    if kind == "synthetic":
        return _synthetic_labels(source)
    if kind == "sklearn":
        return SKLEARN_LABELS.get(source["name"])
    return None


def _synthetic_labels(source: Mapping[str, Any]) -> dict[str, Any] | None:
    generator = source.get("generator")
    if generator == "regression":
        return {"kind": "targets"}
    if generator == "classification":  # labels ±1; both occur but for degenerate data
        return {"kind": "classes", "n_classes": 2, "counts": None}
    if generator == "multiclass":  # every class occurs (data.synthetic)
        n, k = int(source["n_samples"]), int(source["n_classes"])
        counts = None
        if source.get("layout") == "clusters":  # ⌊n/K⌋ or ⌈n/K⌉ each, the first n mod K more
            counts = {str(c): n // k + (c < n % k) for c in range(k)}
        return {"kind": "classes", "n_classes": k, "counts": counts}
    return None


def labels_of(dataset: Dataset) -> dict[str, Any] | None:
    """The dataset's labels record, filled from its source when that says (a dataset
    registered before labels were recorded); None while only reading the data tells."""
    if dataset.labels is None:
        declared = declared_labels(dataset.source)
        if declared is not None:
            dataset.labels = declared
    return dataset.labels


def record_labels(dataset: Dataset, b: np.ndarray) -> dict[str, Any]:
    """Record the labels ``b`` of the dataset's data as read, unless already known (a
    registry entry's task outranks what its values look like: integer targets stay
    targets); returns the record."""
    labels = labels_of(dataset)
    if labels is None:
        labels = dataset.labels = summarize(b)
    return labels


def check_labels(
    dataset: Dataset,
    spec: ObjectiveSpec,
    max_classes: int,
    locs: Mapping[str, Loc] | None = None,
) -> int:
    """K of ``spec``'s objective on ``dataset`` (1 unless K-class); SpecError when the
    dataset's labels cannot make it (see the module doc), at ``locs[field]`` for the field
    at fault (``multiclass``, ``loss`` or ``positive``; default: the field itself)."""
    labels = labels_of(dataset)
    if labels is None:
        return 1  # not read yet: the worker checks
    where: dict[str, Loc] = {field: (field,) for field in ("multiclass", "loss", "positive")}
    where.update(locs or {})
    name = dataset.name
    if spec.multiclass is not None:
        form = f"multiclass {spec.multiclass!r}"
        if labels["kind"] != "classes":
            raise SpecError(
                where["multiclass"],
                f"{form} needs integer class labels, but dataset {name!r} holds regression "
                f"targets{_why_targets(labels)}; drop multiclass, or choose a classification "
                "dataset",
            )
        k = int(labels["n_classes"])
        if k < 2:
            raise SpecError(
                where["multiclass"],
                f"{form} needs at least 2 classes, but dataset {name!r} has a single class "
                f"({_counts_text(labels)}); choose a dataset with several classes",
            )
        if k > max_classes:
            raise SpecError(
                where["multiclass"],
                f"{form}: dataset {name!r} has {k} classes, more than this server's limit of "
                f"{max_classes} (FACEOFF_MAX_CLASSES)",
            )
        return k
    if spec.positive is not None:
        _check_positive(labels, name, spec.positive, where["positive"])
    elif get_loss(spec.loss).needs_binary_labels:
        _check_two_classes(labels, name, spec.loss, where)
    return 1


def _check_two_classes(
    labels: Mapping[str, Any], name: str, loss: str, where: Mapping[str, Loc]
) -> None:
    """A classification loss on the labels as read: exactly two classes."""
    if labels["kind"] != "classes":
        raise SpecError(
            where["loss"],
            f"loss {loss!r} needs two label classes, but dataset {name!r} holds regression "
            f"targets{_why_targets(labels)}; use the squared loss",
        )
    k = int(labels["n_classes"])
    if k == 1:
        raise SpecError(
            where["loss"],
            f"loss {loss!r} needs two label classes, but dataset {name!r} has a single class "
            f"({_counts_text(labels)})",
        )
    if k > 2:
        raise SpecError(
            where["positive"],
            f"dataset {name!r} has {k} classes and loss {loss!r} two: give positive (the "
            "classes that become +1, the rest -1) for a binary problem, or multiclass (ovr or "
            "multinomial) for a K-class one",
        )


def _check_positive(labels: Mapping[str, Any], name: str, positive: list[float], loc: Loc) -> None:
    """Every ``positive`` class occurs in the data, and some class stays −1."""
    counts = labels.get("counts")
    if labels["kind"] != "classes" or counts is None:
        return  # targets may still hold the values: the worker checks
    classes = {float(label) for label in counts}
    missing = sorted(set(positive) - classes)
    if missing:
        raise SpecError(
            loc,
            f"class {missing[0]:g} of positive does not occur in dataset {name!r}, whose "
            f"labels are {_counts_text(labels)}",
        )
    if classes <= set(positive):
        raise SpecError(
            loc,
            f"positive covers every class of dataset {name!r} ({_counts_text(labels)}); leave "
            "at least one class to become -1",
        )


def _why_targets(labels: Mapping[str, Any]) -> str:
    example = labels.get("example")
    return f" (label {example} is not an integer)" if example is not None else ""


def _counts_text(labels: Mapping[str, Any], limit: int = 8) -> str:
    """``label 1: 50 samples`` or ``20 classes: 1 (797), 2 (780), ...``."""
    counts = labels.get("counts")
    k = labels.get("n_classes")
    if not counts:
        return f"{k} classes"
    if len(counts) == 1:
        ((label, samples),) = counts.items()
        return f"label {label}: {samples} samples"
    shown = ", ".join(f"{label} ({samples})" for label, samples in list(counts.items())[:limit])
    return f"{k} classes: {shown}{', ...' if len(counts) > limit else ''}"


def advice_scope(multiclass: str | None, n_classes: int | None = None) -> str:
    """What the advisor's numbers (data.stats.advise) mean for a K-class objective, as
    data.stats' module doc derives it; empty for a binary or regression one."""
    k = f"K = {n_classes}" if n_classes else "K"
    count = str(n_classes) if n_classes else "K"
    if multiclass == "ovr":
        return (
            f"One-vs-rest ({k}): C_P, C_D, κ and T_P/T_D apply per class — each of the "
            f"{count} binary problems shares A, β and λ, so the predicted ratio is the "
            f"objective's and each side's work is {count} times a binary problem's."
        )
    if multiclass == "multinomial":
        return (
            f"Multinomial ({k}): the loss couples the K classes of a sample, outside the "
            "Faceoff analysis (separable losses); the numbers, for its logistic loss, are "
            "only a guide."
        )
    return ""
