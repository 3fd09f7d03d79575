"""The registry of named datasets: what each name is, where its file comes from, its shape.

The entries are data, in ``registry.toml`` beside this module (shipped in the wheel): its
header says what each field means and which two kinds of entries it holds (official LIBSVM
datasets, whose sha256 is unknown and recorded at the first download by
:mod:`faceoff.data.fetch`, and the files of the shared mirror). :func:`load_registry` reads
it once, at import, into :data:`REGISTRY`, checking every field: a malformed entry is a
:class:`RegistryFileError` naming the entry and the field.

A test split is an entry of its own, named by ``DatasetSpec.test`` (``a9a`` → ``a9a.t``).
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, fields
from importlib import resources
from pathlib import Path
from typing import Any

LIBSVM = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/"
TASKS = ("binary", "multiclass", "regression")
_FILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_SHA256 = re.compile(r"[0-9a-f]{64}")


def is_plain_name(name: str) -> bool:
    """Whether ``name`` is a plain file name (letters, digits, ``._-``, no ``..``, not
    hidden), which can never leave the folder it is joined to."""
    return _FILE_NAME.fullmatch(name) is not None and ".." not in name


def check_file_name(file: str) -> str:
    """``file`` if it is a plain file name (:func:`is_plain_name`); ValueError otherwise."""
    if not is_plain_name(file):
        raise ValueError(f"source file {file!r} must be a plain file name, not a path")
    return file


class DatasetError(Exception):
    """A dataset that cannot be found, downloaded, verified or parsed (the message says why)."""


class UnknownDatasetError(DatasetError):
    """A name that is not in the registry; the message lists close matches."""


class DatasetUnavailableError(DatasetError):
    """A registered dataset whose file is in neither the mirror nor the cache and cannot be
    downloaded now (no URL, or the transfer failed); the message says where it looked. A file
    that is found but corrupted, or a download with the wrong sha256, is a plain
    :class:`DatasetError`."""


@dataclass(frozen=True)
class Source:
    """One place a dataset's file can come from.

    Parameters
    ----------
    file : str
        Its name in the mirror and cache folders: a plain file name, never a path.
    sha256 : str or None
        Of the file as stored; None when unknown (then the first download's hash is recorded).
    url : str or None
        Where to download it; None for a file only the mirror has.
    """

    file: str
    sha256: str | None = None
    url: str | None = None

    def __post_init__(self) -> None:
        check_file_name(self.file)
        if self.sha256 is not None and not _SHA256.fullmatch(self.sha256):
            raise ValueError(f"sha256 {self.sha256!r} of {self.file} is not 64 hex digits")


@dataclass(frozen=True)
class DatasetSpec:
    """A named dataset: one svmlight file and what it must parse to.

    Parameters
    ----------
    name : str
        The registry key.
    task : {"binary", "multiclass", "regression"}
    sources : tuple of Source
        Tried in order: every source in the mirror, then in the cache, then the first URL.
    n_samples, n_features : int
        The expected shape; ``n_features`` is passed to the parser so splits align.
    nnz : int or None
        Expected number of stored non-zeros, None when not known.
    test : str or None
        Registry name of the matching test split.
    positive : tuple of float or None
        Classes that become +1 in the usual binary reduction of a multiclass dataset.
    provenance : str
        Where the data comes from and how it differs from the original.
    n_classes : int or None
        K, the classes of a multiclass dataset; None when not known before it is read.
    class_counts : tuple of (label, samples) or None
        The samples of each class in increasing label order (its labels as written in the
        file), where known: a multiclass file of the mirror, from its MANIFEST.
    """

    name: str
    task: str
    sources: tuple[Source, ...]
    n_samples: int
    n_features: int
    nnz: int | None = None
    test: str | None = None
    positive: tuple[float, ...] | None = None
    provenance: str = ""
    n_classes: int | None = None
    class_counts: tuple[tuple[str, int], ...] | None = None

    def __post_init__(self) -> None:
        if self.task not in TASKS:
            raise ValueError(f"task {self.task!r} of {self.name}; accepted: {', '.join(TASKS)}")
        if not self.sources:
            raise ValueError(f"dataset {self.name} has no source")
        if self.n_classes is not None and self.task != "multiclass":
            raise ValueError(f"field 'n_classes' is for a multiclass dataset, not {self.task}")
        if self.class_counts is not None:
            counts = dict(self.class_counts)
            if self.n_classes != len(counts) or sum(counts.values()) != self.n_samples:
                raise ValueError(
                    f"field 'class_counts' holds {len(counts)} classes of "
                    f"{sum(counts.values())} samples, not n_classes = {self.n_classes} of "
                    f"n_samples = {self.n_samples}"
                )

    @property
    def urls(self) -> tuple[str, ...]:
        return tuple(s.url for s in self.sources if s.url)

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "task": self.task,
            "n_samples": self.n_samples,
            "n_features": self.n_features,
            "nnz": self.nnz,
            "test": self.test,
            "positive": list(self.positive) if self.positive else None,
            "files": [s.file for s in self.sources],
            "urls": list(self.urls),
            "sha256": {s.file: s.sha256 for s in self.sources},
            "provenance": self.provenance,
            "n_classes": self.n_classes,
            "class_counts": dict(self.class_counts) if self.class_counts else None,
        }


class RegistryFileError(ValueError):
    """A malformed registry file; the message names the entry, the field and what is accepted."""


_DATASET_FIELDS = tuple(field.name for field in fields(DatasetSpec))
_SOURCE_FIELDS = tuple(field.name for field in fields(Source))
_REQUIRED = object()


def load_registry(path: str | os.PathLike[str] | None = None) -> dict[str, DatasetSpec]:
    """The entries of a registry file by name, in the file's order.

    Parameters
    ----------
    path : path-like, optional
        A TOML file laid out as ``registry.toml`` (default: that file, shipped with the package).

    Raises
    ------
    RegistryFileError
        If the file is not TOML, or an entry has an unknown, missing or invalid field, repeats
        a name or a source file, or names a test split that is not an aligned entry.
    """
    file = resources.files("faceoff.data") / "registry.toml" if path is None else Path(path)
    try:
        with file.open("rb") as f:
            table = tomllib.load(f)
    except tomllib.TOMLDecodeError as exc:
        raise RegistryFileError(f"{file}: not valid TOML: {exc}") from None
    return _registry(table, str(file))


def _registry(table: dict[str, Any], origin: str) -> dict[str, DatasetSpec]:
    _refuse_unknown(table, ("dataset",), origin)
    entries = table.get("dataset")
    if not isinstance(entries, list) or not entries:
        raise RegistryFileError(f"{origin}: no [[dataset]] table")
    registry: dict[str, DatasetSpec] = {}
    owner: dict[str, str] = {}  # source file -> dataset
    for index, raw in enumerate(entries, 1):
        spec = _dataset(raw, origin, index)
        if spec.name in registry:
            raise RegistryFileError(f"{origin}: dataset {spec.name!r} is listed twice")
        for source in spec.sources:
            if source.file in owner:
                raise RegistryFileError(
                    f"{origin}: dataset {spec.name!r}: source file {source.file!r} is already "
                    f"a source of dataset {owner[source.file]!r}"
                )
            owner[source.file] = spec.name
        registry[spec.name] = spec
    for spec in registry.values():
        if spec.test is None:
            continue
        test = registry.get(spec.test)
        if test is None or (test.task, test.n_features) != (spec.task, spec.n_features):
            raise RegistryFileError(
                f"{origin}: dataset {spec.name!r}: field 'test' must name an entry with task "
                f"{spec.task!r} and n_features {spec.n_features}, not {spec.test!r}"
            )
    return registry


def _dataset(raw: object, origin: str, index: int) -> DatasetSpec:
    where = f"{origin}: [[dataset]] #{index}"
    if not isinstance(raw, dict):
        raise RegistryFileError(f"{where} must be a table, not {raw!r}")
    name = _field(raw, "name", where, "a plain name (letters, digits, '._-')", _is_plain)
    where = f"{origin}: dataset {name!r}"
    _refuse_unknown(raw, _DATASET_FIELDS, where)
    sources = _field(raw, "sources", where, "one or more [[dataset.sources]] tables", _is_list)
    counts = _field(raw, "class_counts", where, "a table of label = samples", _is_counts, None)
    fields = dict(
        name=name,
        task=_field(raw, "task", where, f"one of {', '.join(TASKS)}", _is_task),
        sources=tuple(
            _source(source, f"{where}, source #{i}") for i, source in enumerate(sources, 1)
        ),
        n_samples=_field(raw, "n_samples", where, "a positive integer", _is_positive),
        n_features=_field(raw, "n_features", where, "a positive integer", _is_positive),
        nnz=_field(raw, "nnz", where, "a non-negative integer", _is_count, None),
        test=_field(raw, "test", where, "a dataset name", _is_plain, None),
        positive=_positive(
            _field(raw, "positive", where, "a list of class labels", _is_labels, None)
        ),
        provenance=_field(raw, "provenance", where, "a non-empty string", _is_text),
        n_classes=_field(raw, "n_classes", where, "an integer >= 2", _is_classes, None),
        class_counts=None
        if counts is None
        else tuple(sorted(counts.items(), key=lambda c: int(c[0]))),
    )
    try:
        return DatasetSpec(**fields)
    except ValueError as err:  # a rule between fields (DatasetSpec.__post_init__)
        raise RegistryFileError(f"{where}: {err}") from None


def _source(raw: object, where: str) -> Source:
    if not isinstance(raw, dict):
        raise RegistryFileError(f"{where} must be a table, not {raw!r}")
    _refuse_unknown(raw, _SOURCE_FIELDS, where)
    return Source(
        _field(raw, "file", where, "a plain file name (letters, digits, '._-')", _is_plain),
        _field(raw, "sha256", where, "64 lowercase hex digits", _is_sha256, None),
        _field(raw, "url", where, "an https:// URL", _is_url, None),
    )


def _field(
    raw: dict[str, Any],
    key: str,
    where: str,
    expected: str,
    valid: Callable[[Any], bool],
    default: Any = _REQUIRED,
) -> Any:
    """``raw[key]`` if ``valid``, ``default`` if it is absent and optional."""
    if key not in raw:
        if default is _REQUIRED:
            raise RegistryFileError(f"{where}: field {key!r} is missing; expected {expected}")
        return default
    value = raw[key]
    if not valid(value):
        raise RegistryFileError(f"{where}: field {key!r} must be {expected}, not {value!r}")
    return value


def _refuse_unknown(raw: dict[str, Any], fields: tuple[str, ...], where: str) -> None:
    unknown = [key for key in raw if key not in fields]
    if unknown:
        raise RegistryFileError(
            f"{where}: unknown field {', '.join(map(repr, unknown))}; accepted: {', '.join(fields)}"
        )


def _is_positive(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _is_plain(value: object) -> bool:
    return isinstance(value, str) and is_plain_name(value)


def _is_task(value: object) -> bool:
    return isinstance(value, str) and value in TASKS


def _is_text(value: object) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _is_sha256(value: object) -> bool:
    return isinstance(value, str) and _SHA256.fullmatch(value) is not None


def _is_url(value: object) -> bool:
    return isinstance(value, str) and value.startswith("https://") and len(value) > len("https://")


def _is_list(value: object) -> bool:
    return isinstance(value, list) and bool(value)


def _is_labels(value: object) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(x, int | float) and not isinstance(x, bool) for x in value)
    )


def _is_classes(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 2


def _is_counts(value: object) -> bool:
    """A table ``{"1" = 797, "2" = 780, ...}``: integer labels, positive sample counts."""
    return (
        isinstance(value, dict)
        and bool(value)
        and all(re.fullmatch(r"-?[0-9]+", k) for k in value)
        and all(_is_positive(v) for v in value.values())
    )


def _positive(labels: list[float] | None) -> tuple[float, ...] | None:
    return None if labels is None else tuple(float(x) for x in labels)


REGISTRY: dict[str, DatasetSpec] = load_registry()


def unknown_dataset(name: str, names: Iterable[str]) -> UnknownDatasetError:
    """The error for a dataset ``name`` not among ``names``, naming the close ones."""
    close = difflib.get_close_matches(name, list(names), n=5, cutoff=0.6)
    hint = f"did you mean {', '.join(close)}?" if close else "see faceoff datasets list"
    return UnknownDatasetError(f"unknown dataset {name!r}; {hint}")


def get_spec(name: str, registry: Mapping[str, DatasetSpec] | None = None) -> DatasetSpec:
    """The entry called ``name``; :class:`UnknownDatasetError` naming close matches."""
    registry = REGISTRY if registry is None else registry
    if name in registry:
        return registry[name]
    raise unknown_dataset(name, registry)
