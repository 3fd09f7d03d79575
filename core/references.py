"""Reference optima P*: the best certified primal value of each objective, keyed by the
content of the objective's data.

A job's spec names a dataset, but a name says nothing certain about the matrix behind it.
The worker therefore hashes the data it actually solves on (:func:`data_digest`: the CSR
matrix and the labels after the spec's transforms and label mapping) and keys the objective
by that digest and the loss and penalty weights (:func:`content_objective_hash`). Two jobs
share a P* exactly when they minimize the same function of the same numbers, whatever their
datasets are called, and no registration can make two different matrices share one.

Every succeeded job offers its final (P, gap) to :func:`record_reference`; a high-precision
job (:func:`reference_job_spec`) certifies one on request. References are shared by every
team: P* is a property of the objective. What would identify another team's private data —
the certifying job and the data's digest — is left out when a team reads them
(:func:`as_read_by`).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from sqlalchemy import or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from faceoff.core import summaries
from faceoff.core.auth import owned_by
from faceoff.core.db import one_or_not_found, page
from faceoff.core.models import SUCCEEDED, Dataset, Job, Reference, utcnow
from faceoff.core.specs import JobSpec, ObjectiveSpec
from faceoff.solvers.vocabulary import get_loss

DIGEST_VERSION = b"faceoff-data-v1"
_CHUNK = 1 << 20  # elements cast at a time, so hashing never copies a whole index array
# a reference optimum replaces another at an equal gap if its gap is within this of |P|
REFERENCE_RTOL = 1e-9


def _update(h: Any, values: np.ndarray, dtype: type) -> None:
    """Feed ``values`` as little-endian ``dtype`` to ``h``, preceded by their count."""
    values = np.asarray(values).ravel()
    h.update(np.int64(values.size).tobytes())
    target = np.dtype(dtype).newbyteorder("<")
    if values.dtype == target and values.flags.c_contiguous:
        h.update(memoryview(values.data).cast("B"))
        return
    buffer = np.empty(min(values.size, _CHUNK), dtype=target)  # one cast buffer, reused
    for start in range(0, values.size, _CHUNK):
        chunk = buffer[: min(_CHUNK, values.size - start)]
        chunk[...] = values[start : start + _CHUNK]
        h.update(memoryview(chunk.data).cast("B"))


def data_digest(A: sp.csr_matrix, b: np.ndarray) -> str:
    """sha256 of a problem's data: shape, CSR structure and values of ``A`` and labels ``b``.

    Equal matrices stored in canonical CSR (sorted indices, no duplicates; a non-canonical
    matrix is canonicalized first) and equal labels give equal digests, whatever their
    index dtypes; any different value, position or shape gives a different one.
    """
    A = sp.csr_matrix(A, dtype=np.float64)
    if not A.has_canonical_format:
        A = A.copy()
        A.sum_duplicates()
    h = hashlib.sha256(DIGEST_VERSION)
    _update(h, np.asarray(A.shape), np.int64)
    _update(h, A.indptr, np.int64)
    _update(h, A.indices, np.int64)
    _update(h, A.data, np.float64)
    _update(h, b, np.float64)
    return h.hexdigest()


def content_objective(
    data_hash: str,
    loss: str,
    gamma: float,
    l1: float,
    l2: float,
    multiclass: str | None = None,
    intercept: bool = False,
    path: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """What identifies the objective: the data's digest, the loss and the penalty weights
    (γ only for a loss that γ changes, the smoothed hinge), the K-class form of a K-class
    problem, the intercept of one that fits it and the λ grid of a path (only then, so that
    the other objectives keep their keys)."""
    identity: dict[str, Any] = {
        "data_hash": data_hash,
        "loss": loss,
        "gamma": float(gamma) if get_loss(loss).smoothed else None,
        "l1": float(l1),
        "l2": float(l2),
    }
    if multiclass is not None:
        identity["multiclass"] = multiclass
    if intercept:
        identity["fit_intercept"] = True
    if path is not None:
        identity["path"] = path
    return identity


def objective_key(objective: dict[str, Any]) -> str:
    """sha256 of a :func:`content_objective`."""
    text = json.dumps(objective, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


def content_objective_hash(
    data_hash: str,
    loss: str,
    gamma: float,
    l1: float,
    l2: float,
    multiclass: str | None = None,
    intercept: bool = False,
    path: dict[str, Any] | None = None,
) -> str:
    """The key of the objective's reference P* (and of a job's ``objective_hash`` once a
    worker has built its problem; a path's has no P*, its λs' gaps certify it)."""
    return objective_key(
        content_objective(data_hash, loss, gamma, l1, l2, multiclass, intercept, path)
    )


# ---------------------------------------------------------------- the references resource


def reference_job_spec(
    objective: ObjectiveSpec, solver: str, max_seconds: float, max_epochs: float
) -> JobSpec:
    """The high-precision job that certifies P* of ``objective``."""
    return JobSpec(
        **objective.model_dump(),
        solver=solver,
        stop={"tol": 1e-13, "max_seconds": max_seconds, "max_epochs": max_epochs},
    )


def get_reference(session: Session, digest: str) -> Reference:
    """The reference of a content-keyed objective hash (a job's ``objective_hash`` once a
    worker has run it)."""
    return one_or_not_found(
        session,
        select(Reference).where(Reference.objective_hash == digest),
        f"no reference optimum for objective {digest}; a job's objective_hash keys its "
        "reference once a worker has run the job (it then hashes the job's data), and "
        "POST /api/v1/references computes one",
    )


@dataclass(frozen=True)
class ReferenceFilter:
    """Filters of :func:`list_references`; None means any."""

    objective_hash: str | None = None
    dataset: str | None = None  # a name the team can see
    loss: str | None = None
    penalty: str | None = None  # "l2" (l1 = 0), "elastic_net" (both > 0), "l1" (l2 = 0)
    l1: float | None = None
    l2: float | None = None


def list_references(
    session: Session,
    where: ReferenceFilter,
    limit: int | None,
    offset: int = 0,
    *,
    team_id: int | None,
) -> tuple[list[Reference], int]:
    """The matching references, newest first, and how many match in all.

    Every team reads every reference (P* is a property of the objective). ``dataset``
    matches the references that name it (shared datasets only) and those of the data the
    team's own jobs on a dataset of that name solved, so a team finds its uploads' optima
    without another team's names being shown or matched.
    """
    objective = Reference.objective
    query = select(Reference)
    if where.objective_hash is not None:
        query = query.where(Reference.objective_hash == where.objective_hash)
    if where.loss is not None:
        query = query.where(objective["loss"].as_string() == where.loss)
    if where.penalty is not None:
        l1, l2 = objective["l1"].as_float(), objective["l2"].as_float()
        query = query.where(
            {"l2": l1 == 0, "elastic_net": (l1 > 0) & (l2 > 0), "l1": l2 == 0}[where.penalty]
        )
    for key in ("l1", "l2"):
        value = getattr(where, key)
        if value is not None:
            query = query.where(objective[key].as_float() == float(value))
    if where.dataset is not None:
        digests = (
            select(Job.data_hash)
            .join(Job.dataset)
            .where(Dataset.name == where.dataset, owned_by(Job.team_id, team_id))
            .where(Job.data_hash.is_not(None))
        )
        query = query.where(
            or_(
                objective["dataset"].as_string() == where.dataset,
                objective["data_hash"].as_string().in_(digests),
            )
        )
    return page(session, query.order_by(Reference.id.desc()), limit, offset)


REFERENCE_FIELDS = ("id", "objective_hash", "objective", "primal", "gap", "job_id", "created_at")


def as_read_by(
    session: Session, found: Iterable[Reference], *, team_id: int | None
) -> list[dict[str, Any]]:
    """The references as the team reads them: every field, except that a reference certified
    on a private dataset (its objective names no dataset, see :func:`reference_objective`)
    shows its ``job_id`` and the objective's ``data_hash`` only to the team whose job
    certified it. P*, the gap, the loss and the weights are everyone's; which job of which
    team, and a digest that identifies another team's data, are not."""
    found = list(found)
    private = {r.job_id for r in found if r.job_id is not None and "dataset" not in r.objective}
    own: set[int] = set()
    if private:
        query = select(Job.id).where(Job.id.in_(private), owned_by(Job.team_id, team_id))
        own = set(session.scalars(query))
    rows = []
    for reference in found:
        row = {field: getattr(reference, field) for field in REFERENCE_FIELDS}
        if "dataset" not in reference.objective and reference.job_id not in own:
            row["job_id"] = None
            row["objective"] = {k: v for k, v in reference.objective.items() if k != "data_hash"}
        rows.append(row)
    return rows


def get_references(session: Session, digests: Iterable[str]) -> dict[str, Reference]:
    """{objective hash: its reference} of those of ``digests`` that have one."""
    wanted = set(digests)
    if not wanted:
        return {}
    query = select(Reference).where(Reference.objective_hash.in_(wanted))
    return {reference.objective_hash: reference for reference in session.scalars(query)}


def _better(primal: float, gap: float, reference: Reference) -> bool:
    if gap < reference.gap:
        return True
    return gap <= REFERENCE_RTOL * max(1.0, abs(primal)) and primal < reference.primal


def reference_objective(job: Job) -> tuple[str, dict[str, Any]]:
    """(content key, description) of the objective a job with ``data_hash`` solved.

    The description names the dataset only if it is shared with every team: a reference is
    read by everyone, and must not tell another team's private dataset names.
    """
    if job.data_hash is None:
        raise ValueError(f"job {job.id} has no data hash yet: no worker has built its problem")
    spec = job.spec
    identity = content_objective(
        job.data_hash,
        spec["loss"],
        spec["gamma"],
        spec["l1"],
        spec["l2"],
        spec.get("multiclass"),
        bool(spec.get("fit_intercept", False)),
        spec.get("path"),
    )
    key = objective_key(identity)
    described = {**identity, "normalize": spec["normalize"], "positive": spec["positive"]}
    if job.dataset.team_id is None:
        described["dataset"] = job.dataset.name
    return key, described


def record_reference(session: Session, job: Job) -> Reference | None:
    """Keep P* of the job's objective if this succeeded job certifies it better.

    The objective is keyed by content: the digest of the data the worker solved on
    (``job.data_hash``), the loss and the weights; a job without a digest records nothing.
    Better: a smaller final gap, or a gap ≤ 1e-9·max(1, |P|) and a lower P. Upserts the
    Reference (flushes; the caller commits) and returns it, or None when the job does not
    improve it. The worker calls this when a job succeeds. The summaries of the
    objective's jobs follow the new P* (core.summaries.on_new_optimum).
    """
    primal, gap = job.primal, job.gap
    if job.status != SUCCEEDED or primal is None or gap is None or job.data_hash is None:
        return None
    if job.spec.get("path") is not None:  # its last point is one λ's of many
        return None
    if not (math.isfinite(primal) and math.isfinite(gap)) or gap < 0:
        return None
    key, objective = reference_objective(job)
    for _ in range(2):  # a concurrent insert of the same objective: retry as an update
        reference = session.scalars(
            select(Reference).where(Reference.objective_hash == key)
        ).one_or_none()
        if reference is not None:
            if not _better(primal, gap, reference):
                return None
            reference.primal, reference.gap, reference.job_id = primal, gap, job.id
            reference.objective, reference.created_at = objective, utcnow()
            session.flush()
            summaries.on_new_optimum(session, key)
            return reference
        reference = Reference(
            objective_hash=key, objective=objective, primal=primal, gap=gap, job_id=job.id
        )
        try:
            with session.begin_nested():
                session.add(reference)
        except IntegrityError:
            continue
        summaries.on_new_optimum(session, key)
        return reference
    return None
