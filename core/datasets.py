"""Datasets: where a registered dataset's matrix comes from and loading it, the names teams
register them under, and their statistics.

A dataset's ``source`` is one of

- ``{"kind": "registry", "name": "a9a"}`` — a public dataset of :mod:`faceoff.data.registry`
  (mirror, cache, then download); it is registered only if its file is in the mirror or the
  cache, or its download URL answers (:func:`check_obtainable`), and :func:`availability`
  says which;
- ``{"kind": "upload", "file": "<sha256>.svm", "n_features": 123 | None}`` — an uploaded
  svmlight file kept in the service's upload folder (:mod:`faceoff.core.uploads`);
- ``{"kind": "synthetic", "generator": "classification", "n_samples": ..., "n_features":
  ..., "density": ..., "seed": ...}`` — :mod:`faceoff.data.synthetic`, regenerated identically;
- ``{"kind": "sklearn", "name": "breast_cancer"}`` — shipped with scikit-learn;
- ``{"kind": "random_features", "base": "mnist", "map": "fourier" | "binning", ...}`` —
  random features of another dataset (:mod:`faceoff.core.features`).

A synthetic ``"multiclass"`` generator takes ``n_classes`` (at most ``FACEOFF_MAX_CLASSES``)
and a ``layout``: ``"planted"`` (the argmax of a planted linear model) or ``"clusters"``
(Aloi-like: many balanced classes with few samples each). What a dataset's labels are is
recorded in ``Dataset.labels`` (:mod:`faceoff.core.labels`).

Size caps. Memory is bounded by the caps of :class:`Caps` (``FACEOFF_MAX_SAMPLES``,
``FACEOFF_MAX_FEATURES``, ``FACEOFF_MAX_NNZ``): a source's declared shape is checked when it
is registered (:func:`check_source`, the registry entry's shape, the synthetic parameters, an
upload's declared ``n_features`` and, once parsed, the file's shape), when a job is submitted
(:func:`check_dataset`) and again by :func:`load_matrix` before and after loading, so a
dataset registered under larger caps is refused by the worker too.

Names. Shared datasets (registry, synthetic, scikit-learn) are seen by every team, an upload
only by its team (:func:`faceoff.core.auth.visible_datasets`). A name is unique among the
shared datasets and among each team's uploads, not across teams: a registration conflicts
(409) only with a dataset the caller sees, so no answer tells another team's private names
(:func:`find_dataset`). Public names — the registry's and scikit-learn's, compared
case-insensitively and with file suffixes dropped (``w8a.bz2``) — are reserved for their
public data on every registration path (:func:`check_public_name`), and a public name is
registered on its first use in a job or sweep (:func:`resolve_dataset`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from faceoff.core.auth import owned_by, visible_datasets
from faceoff.core.db import one_or_not_found, page
from faceoff.core.errors import ConflictError, DataUnavailable
from faceoff.core.jsonsafe import json_safe
from faceoff.core.labels import declared_labels, record_labels
from faceoff.core.models import Dataset, Job
from faceoff.core.settings import Settings, get_settings
from faceoff.core.specs import SpecError, check_gamma, check_text_at
from faceoff.data import synthetic
from faceoff.data.cache import load_dataset
from faceoff.data.fetch import availability as obtainable
from faceoff.data.fetch import status as fetch_status
from faceoff.data.labels import MAX_CLASSES
from faceoff.data.registry import (
    REGISTRY,
    DatasetError,
    UnknownDatasetError,
    get_spec,
    unknown_dataset,
)
from faceoff.data.stats import advise, dataset_stats
from faceoff.data.svmlight import read_svmlight
from faceoff.data.transforms import as_csr, standardize
from faceoff.data.transforms import normalize as transform
from faceoff.solvers.vocabulary import smoothness

GENERATORS = ("classification", "regression", "multiclass")
LAYOUTS = {"planted": "multiclass", "clusters": "clusters"}  # data.synthetic's generators
SKLEARN = ("breast_cancer",)
SKLEARN_SHAPE = {"n_samples": 569, "n_features": 30, "nnz": 569 * 30}  # dense, standardized
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._+-]*$"  # a dataset name (safe in paths and URLs)
# file suffixes a look-alike of a public name may add (public_source)
FILE_SUFFIXES = (".bz2", ".gz", ".xz", ".zip", ".svm", ".txt", ".libsvm", ".svmlight")
# each capped field: its setting and what it counts
LIMITS = {
    "n_samples": ("MAX_SAMPLES", "samples"),
    "n_features": ("MAX_FEATURES", "features"),
    "nnz": ("MAX_NNZ", "non-zeros"),
    "n_classes": ("MAX_CLASSES", "classes"),
}
Loc = tuple[str | int, ...]


class DatasetTooLarge(SpecError):
    """A dataset over one of the caps: ``loc`` is the field, the message names the limit."""


@dataclass(frozen=True)
class Caps:
    """The largest dataset the service registers or loads."""

    n_samples: int
    n_features: int
    nnz: int
    nnz_setting: str = "MAX_NNZ"  # the setting the non-zero cap comes from
    n_classes: int = MAX_CLASSES  # classes of a K-class problem

    @classmethod
    def of(cls, settings: Settings) -> Caps:
        return cls(
            settings.MAX_SAMPLES,
            settings.MAX_FEATURES,
            settings.MAX_NNZ,
            n_classes=settings.MAX_CLASSES,
        )

    @classmethod
    def in_process(cls, settings: Settings) -> Caps:
        """The caps of a dataset loaded by the API or the dashboard itself (statistics and
        the advisor): at most ``STATS_MAX_NNZ`` non-zeros, so that no request can make
        those processes hold a worker-sized matrix."""
        if settings.STATS_MAX_NNZ >= settings.MAX_NNZ:
            return cls.of(settings)
        return cls(
            settings.MAX_SAMPLES,
            settings.MAX_FEATURES,
            settings.STATS_MAX_NNZ,
            "STATS_MAX_NNZ",
            settings.MAX_CLASSES,
        )

    def check(self, subject: str, locs: Mapping[str, Loc], **shape: int | None) -> None:
        """DatasetTooLarge at ``locs[field]`` for the first field of ``shape`` (``n_samples``,
        ``n_features``, ``nnz``, ``n_classes``; None: not known) over its cap."""
        for field, value in shape.items():
            cap = getattr(self, field)
            if value is not None and value > cap:
                setting, noun = LIMITS[field]
                setting = self.nnz_setting if field == "nnz" else setting
                raise DatasetTooLarge(
                    locs[field],
                    f"{subject}: {value} {noun}, more than this server's limit of {cap} "
                    f"(FACEOFF_{setting})",
                )


def _every(loc: Loc) -> dict[str, Loc]:
    return dict.fromkeys(LIMITS, loc)


def _check_classes(source: dict[str, Any], caps: Caps, loc: Loc) -> None:
    """A multiclass generator's ``n_classes`` within ``caps`` (DatasetTooLarge)."""
    if source.get("generator") == "multiclass":
        k = int(source["n_classes"])
        caps.check("n_classes", {"n_classes": (*loc, "n_classes")}, n_classes=k)


def check_source(source: dict[str, Any], caps: Caps, loc: Loc = ("source",)) -> None:
    """Refuse a source whose declared shape exceeds ``caps`` (DatasetTooLarge), or a
    synthetic one that would hold no non-zero (SpecError), before anything is loaded.

    ``loc`` is where the source is in the request; an upload's declared ``n_features`` is
    the form field ``("n_features",)``. Raises ``faceoff.data.registry.UnknownDatasetError`` for an
    unknown registry name.
    """
    kind = source.get("kind")
    if kind == "registry":
        entry = get_spec(source["name"])
        shape = {"n_samples": entry.n_samples, "n_features": entry.n_features, "nnz": entry.nnz}
        caps.check(f"dataset {entry.name!r}", _every((*loc, "name")), **shape)
    elif kind == "synthetic":
        n, d, nnz = synthetic_shape(source)
        locs = {field: (*loc, field) for field in ("n_samples", "n_features")}
        caps.check("synthetic source", locs, n_samples=n, n_features=d)
        if nnz < 1:
            expected = n * d * float(source["density"])
            raise SpecError(
                (*loc, "density"),
                f"n_samples·n_features·density = {expected:.3g} rounds to no non-zero; "
                "raise density (at least one non-zero is needed)",
            )
        product = "n_samples·n_features·density"
        caps.check(product, {"nnz": (*loc, "density")}, nnz=nnz)
        _check_classes(source, caps, loc)
    elif kind == "upload":
        caps.check(
            "n_features", {"n_features": ("n_features",)}, n_features=source.get("n_features")
        )
    elif kind == "sklearn":
        caps.check(f"dataset {source['name']!r}", _every((*loc, "name")), **SKLEARN_SHAPE)
    elif kind == "random_features":
        # import cycle: core.features builds on this module
        from faceoff.core.features import check_features

        check_features(source, caps, loc)


def synthetic_shape(source: dict[str, Any]) -> tuple[int, int, int]:
    """(n_samples, n_features, expected nnz) of a synthetic source."""
    n, d = int(source["n_samples"]), int(source["n_features"])
    return n, d, round(n * d * float(source["density"]))


def check_dataset(dataset: Dataset, caps: Caps, loc: Loc) -> None:
    """Refuse a registered dataset whose recorded shape exceeds ``caps``, e.g. one
    registered before the caps were lowered (DatasetTooLarge at ``loc``)."""
    shape = {field: getattr(dataset, field) for field in ("n_samples", "n_features", "nnz")}
    caps.check(f"dataset {dataset.name!r}", _every(loc), **shape)


def check_matrix(A: sp.spmatrix, caps: Caps, subject: str, loc: Loc = ()) -> None:
    """Refuse a loaded matrix over ``caps`` (DatasetTooLarge at ``loc``)."""
    n, d = A.shape
    caps.check(subject, _every(loc), n_samples=n, n_features=d, nnz=int(A.nnz))


def load_matrix(
    source: dict[str, Any], upload_dir: Path, caps: Caps | None = None
) -> tuple[sp.csr_matrix, np.ndarray]:
    """(A, b) of a dataset source: A as CSR float64, b as stored (labels or targets).

    The source's declared shape is checked against ``caps`` (default: those of the
    environment's settings) before loading, and the loaded matrix after. Raises
    ``faceoff.data.registry.DatasetError``, ``ValueError`` for a malformed source or
    :class:`DatasetTooLarge` (a ValueError), with a message a person can act on.
    """
    caps = caps or Caps.of(get_settings())
    check_source(source, caps)
    A, b = _load(source, upload_dir)
    check_matrix(A, caps, "the data")
    return A, b


def _load(source: dict[str, Any], upload_dir: Path) -> tuple[sp.csr_matrix, np.ndarray]:
    kind = source.get("kind")
    if kind == "registry":
        A, b, _ = load_dataset(source["name"], progress=False)
        return A, b
    if kind == "upload":
        path = (upload_dir / source["file"]).resolve()
        if path.parent != upload_dir.resolve():
            raise ValueError(f"upload file name {source['file']!r} leaves the upload folder")
        A, b = read_svmlight(path, n_features=source.get("n_features"))
        return sp.csr_matrix(A, dtype=np.float64), b
    if kind == "synthetic":
        if source["generator"] not in GENERATORS:
            raise ValueError(f"unknown generator {source['generator']!r}; accepted: {GENERATORS}")
        shape = (int(source["n_samples"]), int(source["n_features"]), float(source["density"]))
        if source["generator"] == "multiclass":
            make = getattr(synthetic, LAYOUTS[source.get("layout", "planted")])
            A, b = make(*shape, n_classes=int(source["n_classes"]), seed=int(source["seed"]))
        else:
            make = getattr(synthetic, source["generator"])
            A, b = make(*shape, seed=int(source.get("seed", 0)))
        return as_csr(A), np.asarray(b, dtype=np.float64)
    if kind == "sklearn":
        if source["name"] != "breast_cancer":
            raise ValueError(
                f"unknown scikit-learn dataset {source['name']!r}; accepted: {SKLEARN}"
            )
        # scikit-learn (a second to import) only for its datasets
        from sklearn.datasets import load_breast_cancer

        X, y = load_breast_cancer(return_X_y=True)
        return sp.csr_matrix(standardize(X)), np.where(y == 1, 1.0, -1.0)
    if kind == "random_features":
        # import cycle, as above
        from faceoff.core.features import load_features

        return load_features(source, lambda base: _load(base, upload_dir))
    raise ValueError(f"unknown dataset source kind {kind!r}")


# ---------------------------------------------------------------- the datasets resource


def get_dataset(session: Session, dataset_id: int, *, team_id: int | None) -> Dataset:
    """A dataset the team may use (NotFoundError for another team's upload)."""
    query = select(Dataset).where(Dataset.id == dataset_id, visible_datasets(team_id))
    return one_or_not_found(session, query, f"dataset {dataset_id} not found")


def list_datasets(
    session: Session, limit: int | None, offset: int = 0, *, team_id: int | None
) -> tuple[list[Dataset], int]:
    """The datasets the team may use, by id (``limit`` None: all), and how many in all."""
    query = select(Dataset).where(visible_datasets(team_id)).order_by(Dataset.id)
    return page(session, query, limit, offset)


def unregistered_public_names(session: Session) -> list[str]:
    """The public dataset names (registry and scikit-learn) no dataset is registered under
    yet: each is registered on its first use."""
    shared = select(Dataset.name).where(Dataset.team_id.is_(None))
    taken = {name.casefold() for name in session.scalars(shared)}
    return sorted(name for key, name in _public_names().items() if key not in taken)


def dataset_objectives(
    session: Session, dataset: Dataset, *, team_id: int | None
) -> list[dict[str, Any]]:
    """The objectives (loss, gamma, l2, l1, normalize, multiclass, fit_intercept) the
    team's jobs on ``dataset`` minimize, sorted by loss, gamma, l2, l1, normalization,
    K-class form (binary first) and intercept (without first)."""
    keys = ("loss", "gamma", "l2", "l1", "normalize", "multiclass", "fit_intercept")
    defaults = {"gamma": 1.0, "l1": 0.0, "normalize": "none", "fit_intercept": False}
    specs = session.scalars(
        select(Job.spec).where(Job.dataset_id == dataset.id, owned_by(Job.team_id, team_id))
    )
    found = {tuple(spec.get(k, defaults.get(k)) for k in keys) for spec in specs}
    ordered = sorted(found, key=lambda objective: tuple("" if v is None else v for v in objective))
    return [dict(zip(keys, objective, strict=True)) for objective in ordered]


def name_taken(existing: Dataset) -> ConflictError:
    """The error for a dataset name in use by a dataset the caller sees."""
    return ConflictError(
        f"dataset name {existing.name!r} is taken (id {existing.id}, source "
        f"{existing.source}); choose another name"
    )


def find_dataset(session: Session, name: str, *, team_id: int | None) -> Dataset | None:
    """The dataset ``name`` the team sees: its own upload of that name, else the shared one.

    A name is unique among the shared datasets and among each team's uploads (core.models),
    never across teams: another team's upload is not found, so no answer tells that it
    exists. A team's upload shadows a shared dataset registered under its name later.
    """
    query = select(Dataset).where(Dataset.name == name, visible_datasets(team_id))
    return session.scalars(query.order_by(Dataset.team_id.is_(None))).first()


def add_dataset(session: Session, dataset: Dataset) -> tuple[Dataset, bool]:
    """Insert ``dataset``: (it, True); if another request inserted the same name in the same
    scope first (shared, or the same team's), (that one, False) when its source is the same,
    ConflictError otherwise."""
    try:
        with session.begin_nested():
            session.add(dataset)
    except IntegrityError:
        scope = (
            Dataset.team_id.is_(None)
            if dataset.team_id is None
            else Dataset.team_id == dataset.team_id
        )
        query = select(Dataset).where(Dataset.name == dataset.name, scope)
        existing = session.scalars(query).one()
        if existing.source != dataset.source:
            raise name_taken(existing) from None
        return existing, False
    return dataset, True


@lru_cache(maxsize=1)
def _public_names() -> dict[str, str]:
    """{casefolded name: public name} of every public dataset: the registry's and the
    datasets shipped with scikit-learn."""
    return {name.casefold(): name for name in (*REGISTRY, *SKLEARN)}


def _without_file_suffix(key: str) -> str | None:
    """``key`` less one of FILE_SUFFIXES at its end, None if it has none."""
    for suffix in FILE_SUFFIXES:
        if key.endswith(suffix) and len(key) > len(suffix):
            return key[: -len(suffix)]
    return None


@lru_cache(maxsize=1)
def _look_alikes() -> dict[str, str]:
    """{casefolded name: public name}: the public names, and the names of the registry's
    files (``rcv1_train.binary.bz2``), each also without its file suffixes."""
    found = dict(_public_names())
    for name, entry in REGISTRY.items():
        for source in entry.sources:
            key: str | None = source.file.casefold()
            while key is not None:
                found.setdefault(key, name)
                key = _without_file_suffix(key)
    return found


def public_source(name: str) -> dict[str, Any] | None:
    """The source a dataset called ``name`` must have: that of the public dataset whose
    name it is or looks like — compared case-insensitively, and with file suffixes dropped
    (``W8A``, ``w8a.bz2``, ``a9a.t.bz2``, ``rcv1_train.binary`` are the registry's w8a,
    a9a.t, rcv1.binary), so no look-alike can pass for it; None for a name free to use."""
    key: str | None = name.casefold()
    while key is not None:
        public = _look_alikes().get(key)
        if public is not None:
            return {"kind": "sklearn" if public in SKLEARN else "registry", "name": public}
        key = _without_file_suffix(key)
    return None


def check_public_name(name: str, source: dict[str, Any]) -> None:
    """ConflictError unless ``name`` is free or ``source`` is its public dataset's.

    Public names are reserved on every registration path (a registration of any source
    kind, an upload, the first use of a name in a job or sweep), so a name every team
    relies on always means the public data.
    """
    public = public_source(name)
    if public is not None and source != public:
        raise ConflictError(
            f"name {name!r} is reserved for the public dataset {public['name']!r} (source "
            f"{json.dumps(public)}); choose another name"
        )


def _public_dataset(source: dict[str, Any], name: str) -> Dataset:
    """The Dataset of a public ``source`` (UnknownDatasetError for an unknown registry
    name), registered as ``name``."""
    if source["kind"] == "sklearn":  # breast_cancer, standardized (dense)
        return Dataset(name=name, source=source, labels=declared_labels(source), **SKLEARN_SHAPE)
    entry = get_spec(source["name"])
    public = {"kind": "registry", "name": entry.name}
    return Dataset(
        name=name,
        source=public,
        n_samples=entry.n_samples,
        n_features=entry.n_features,
        nnz=entry.nnz,
        labels=declared_labels(public),
    )


# what a dataset's file state is called where a person reads it (GET /datasets, its page)
AVAILABILITY = {
    "mirror": "in the mirror folder",
    "cached": "in the cache",
    "remote": "downloaded on first use (not in the mirror or the cache yet)",
    "upload": "uploaded",
    "synthetic": "generated when used",
    "sklearn": "shipped with scikit-learn",
    "random_features": "built from its base dataset when used",
}


def availability(source: Mapping[str, Any]) -> str:
    """Where a dataset's data comes from, as this process sees it (:data:`AVAILABILITY`):
    for a registry dataset, whether its file is in the mirror, in the cache, or still to
    be downloaded on first use; "unknown" for a source this version does not know."""
    kind = source.get("kind")
    if kind != "registry":
        return AVAILABILITY.get(str(kind), "unknown")

    try:
        return AVAILABILITY[fetch_status(get_spec(source["name"]))]
    except (DatasetError, KeyError):
        return "unknown"


def check_obtainable(dataset: Dataset, loc: Loc) -> None:
    """SpecError at ``loc`` when ``dataset`` comes from the registry and its file is in
    neither the mirror nor the cache and its download URL does not answer (a short
    timeout), naming the dataset and how to provide the file: better refused now than
    failing at job time. A file that is here, or can be downloaded, passes."""
    if dataset.source.get("kind") != "registry":
        return

    try:
        obtainable(get_spec(dataset.source["name"]))
    except DatasetError as err:
        raise SpecError(loc, str(err)) from None


def test_source(source: Mapping[str, Any]) -> dict[str, Any] | None:
    """The source of the registry's test split of a dataset's ``source`` (``a9a`` →
    ``a9a.t``), None when it has none (a registry entry without ``test``, any other kind)."""
    if source.get("kind") != "registry":
        return None
    try:
        test = get_spec(source["name"]).test
    except (DatasetError, KeyError):
        return None
    return None if test is None else {"kind": "registry", "name": test}


def check_test_split(
    session: Session,
    dataset: Dataset,
    split: Any,
    caps: Caps,
    loc: Loc,
    *,
    team_id: int | None,
) -> None:
    """SpecError at ``loc`` when a job asks for the registry's test split (``split``: a
    job spec's ``test``) of ``dataset`` and it has none, or its file cannot be had
    (:func:`check_obtainable`); DatasetTooLarge when its shape is over ``caps``. A test
    dataset (``{"split": "dataset"}``) must be one the team may use
    (:func:`resolve_dataset`) with no more features than ``dataset`` where both are known
    (else the worker refuses it with the same words: data.splits.align_columns)."""
    kind = getattr(split, "split", None)
    if kind == "dataset":
        where = (*loc, "dataset")
        test = resolve_dataset(session, split.dataset, where, team_id=team_id, caps=caps)
        if test.n_features and dataset.n_features and test.n_features > dataset.n_features:
            raise SpecError(
                where,
                f"test dataset {test.name!r} has {test.n_features} features, more than the "
                f"{dataset.n_features} of {dataset.name!r}: the model has no coefficient for "
                f"the others; give a test set with at most {dataset.n_features} features",
            )
        return
    if kind != "registry":
        return
    source = test_source(dataset.source)
    if source is None:
        having = ", ".join(sorted(name for name, entry in REGISTRY.items() if entry.test))
        raise SpecError(
            loc,
            f"dataset {dataset.name!r} has no test split in the registry (source "
            f"{json.dumps(dataset.source, sort_keys=True)}); use a random hold-out, "
            '{"split": "random", "fraction": 0.2, "seed": 0}, or a dataset with one: '
            f"{having}",
        )
    check_source(source, caps, (*loc, "split"))
    try:
        obtainable(get_spec(source["name"]))
    except DatasetError as err:
        raise SpecError(loc, f"the test split of {dataset.name!r}: {err}") from None


def resolve_dataset(
    session: Session, name: str, loc: Loc, *, team_id: int | None, caps: Caps
) -> Dataset:
    """The dataset ``name`` the team may use; a public name is registered, with its public
    source, on first use.

    SpecError at ``loc`` for any other name, or for a public dataset whose file cannot be
    had (:func:`check_obtainable`), DatasetTooLarge for a shape over ``caps`` (also one
    registered under larger caps).
    """
    check_text_at(name, loc)
    dataset = find_dataset(session, name, team_id=team_id)
    if dataset is not None:
        check_dataset(dataset, caps, loc)
        return dataset
    public = public_source(name)
    if public is None or public["name"] != name:  # the error names the public names close to it
        raise SpecError(
            loc,
            f"{unknown_dataset(name, _public_names().values())}; use a registered dataset "
            "(GET /api/v1/datasets) or a public name (faceoff datasets list)",
        )
    dataset = _public_dataset(public, name)
    check_dataset(dataset, caps, loc)
    check_obtainable(dataset, loc)
    return add_dataset(session, dataset)[0]


def register_dataset(
    session: Session, name: str, source: dict[str, Any], *, team_id: int | None, caps: Caps
) -> tuple[Dataset, bool]:
    """Register ``name`` for a validated registry, synthetic, scikit-learn or random
    features ``source`` (shared by every team, but features of an upload, which are the
    upload's team's; ``team_id`` is the caller's).

    Returns (dataset, created); registering the same name and source again returns the
    existing dataset, a name the team sees with another source (a shared dataset, or the
    team's own upload) raises ConflictError; another team's upload of that name is neither
    seen nor told. Nothing is loaded: a registry name is checked against the registry,
    shapes and labels come from the source (a base dataset for features), and the shape
    against ``caps`` (DatasetTooLarge); a registry file that is neither in the mirror nor in
    the cache and cannot be downloaded is refused (:func:`check_obtainable`).
    """
    check_text_at(name, ("name",))
    check_public_name(name, source)
    source, dataset = _new_dataset(session, name, source, team_id=team_id, caps=caps)
    existing = find_dataset(session, name, team_id=team_id)
    if existing is not None:
        if existing.source != source or existing.team_id != dataset.team_id:
            raise name_taken(existing)
        return existing, False
    check_source(source, caps)
    check_obtainable(dataset, ("source", "name"))
    return add_dataset(session, dataset)


def _new_dataset(
    session: Session, name: str, source: dict[str, Any], *, team_id: int | None, caps: Caps
) -> tuple[dict[str, Any], Dataset]:
    """(the source as stored, a new Dataset of it named ``name``, not added)."""
    if source["kind"] == "synthetic":
        check_source(source, caps)  # n_classes within the cap before its counts are made
        n, d, nnz = synthetic_shape(source)
        labels = declared_labels(source)
        shape = {"n_samples": n, "n_features": d, "nnz": nnz}
        return source, Dataset(name=name, source=source, labels=labels, **shape)
    if source["kind"] == "random_features":
        # import cycle, as above
        from faceoff.core.features import expand_source, feature_shape

        source, base = expand_source(session, source, team_id=team_id, caps=caps)
        rows, columns, values = feature_shape(source)  # columns None: known once built
        features = Dataset(name=name, source=source, n_samples=rows, n_features=columns, nnz=values)
        features.team_id, features.labels = base.team_id, base.labels
        return source, features
    try:
        return source, _public_dataset(source, name)
    except UnknownDatasetError as err:
        raise SpecError(("source", "name"), str(err)) from None


def dataset_statistics(
    session: Session,
    dataset: Dataset,
    loss: str,
    l2: float,
    gamma: float = 1.0,
    normalize: str = "none",
    *,
    upload_dir: Path,
    caps: Caps,
    store: bool = True,
) -> dict[str, Any]:
    """``{"stats": data.stats.dataset_stats, "advice": data.stats.advise}`` of a dataset,
    loaded within ``caps`` (uploads from ``upload_dir``).

    The statistics of the untransformed data are cached in ``Dataset.stats`` (and fill in
    its shape; with ``store``, committed: a read-only caller passes ``store=False``); the
    advice depends on the loss and l2 and is computed each time. Raises DataUnavailable
    when the data cannot be loaded or exceeds the caps. Memory is O(nnz + n_samples) beyond
    the matrix, whatever its declared number of features. SpecError at ``("gamma",)`` for a
    γ outside [GAMMA_MIN, GAMMA_MAX] (core.specs), before anything is loaded.
    """
    try:
        check_gamma(gamma)
    except ValueError as err:
        raise SpecError(("gamma",), str(err)) from None
    if not l2 > 0:  # the Lasso's objectives (l2 = 0) are shown on the dataset page too
        raise SpecError(
            ("l2",),
            "the advisor compares primal and dual coordinate descent, whose analysis needs "
            "l2 > 0 (Faceoff eqs. (12)–(15)); with l2 = 0 only primal methods apply",
        )
    try:
        A, b = load_matrix(dataset.source, upload_dir, caps)
        A = transform(A, normalize)
    except (DatasetError, OSError, ValueError) as err:
        message = f"dataset {dataset.id} ({dataset.name}) cannot be loaded: {err}"
        raise DataUnavailable(message) from None
    if store and dataset.labels is None:
        record_labels(dataset, b)
        session.commit()
    if normalize == "none" and dataset.stats is not None:
        stats = dataset.stats
    else:
        stats = json_safe(dataset_stats(A, b))
        if normalize == "none" and store:
            dataset.stats = stats
            dataset.n_samples, dataset.n_features = stats["n"], stats["d"]
            dataset.nnz = stats["nnz"]
            session.commit()
    advice = json_safe(advise(A, smoothness(loss, gamma), l2))
    return {"stats": stats, "advice": {"loss": loss, "gamma": gamma, **advice}}
