"""core.references: recording a succeeded job's certificate as the optimum P* of its
objective, and reading the stored optima of many objectives at once."""

from __future__ import annotations

import pytest

from faceoff.core.datasets import Caps, resolve_dataset
from faceoff.core.db import read_session, session_scope
from faceoff.core.errors import NotFoundError
from faceoff.core.models import SUCCEEDED, Job
from faceoff.core.references import get_reference, get_references, record_reference
from faceoff.core.settings import Settings
from tests.dashboard import factories

SPEC = {"dataset": "a1a", "loss": "logistic", "l2": 1e-4, "solver": "dual_cd"}


def test_references_of_the_objectives_that_have_one(database_url):
    _, ids = factories.add_sweep(database_url, l2s=(1e-3, 1e-4))
    _, without = factories.add_sweep(database_url, reference=False, dataset_name="other")
    with read_session(database_url) as session:
        found = get_references(session, ["f" * 64, *(f"{i:064x}" for i in ids)])
        assert found == {}
        digests = {session.get(Job, i).objective_hash for i in ids + without}
        found = get_references(session, digests)
        assert len(found) == 2 and all(r.primal == factories.P_STAR for r in found.values())
        assert get_references(session, []) == {}
        assert get_reference(session, next(iter(found))).gap == 1e-13
        with pytest.raises(NotFoundError, match="no reference optimum"):
            get_reference(session, "f" * 64)


def _succeeded_job(session, primal: float, gap: float, objective: str = "f" * 64) -> Job:
    job = Job(
        dataset=resolve_dataset(
            session, "a1a", ("dataset",), team_id=None, caps=Caps.of(Settings())
        ),
        spec={**SPEC, "normalize": "none", "positive": None, "gamma": 1.0, "l1": 0.0},
        spec_hash="0" * 64,
        objective_hash=objective,
        data_hash="d" * 64,
        solver="dual_cd",
        loss="logistic",
        status=SUCCEEDED,
        primal=primal,
        gap=gap,
    )
    session.add(job)
    session.flush()
    return job


def test_record_reference_keeps_the_best_certificate(database_url):
    with session_scope(database_url) as session:
        first = record_reference(session, _succeeded_job(session, 1.0, 1e-6))
        assert (first.primal, first.gap) == (1.0, 1e-6)
        assert first.objective["l2"] == 1e-4 and "solver" not in first.objective
        assert record_reference(session, _succeeded_job(session, 0.9, 1e-5)) is None
        better = _succeeded_job(session, 1.0 - 1e-7, 1e-8)
        assert record_reference(session, better).job_id == better.id
        tie = _succeeded_job(session, 1.0 - 2e-7, 1e-8)  # same gap, above 1e-9·|P|
        assert record_reference(session, tie) is None
        lower = _succeeded_job(session, 1.0 - 3e-7, 1e-10)
        assert record_reference(session, lower).primal == 1.0 - 3e-7
        certified_lower = _succeeded_job(session, 1.0 - 4e-7, 5e-10)  # gap ≤ 1e-9, lower P
        assert record_reference(session, certified_lower).job_id == certified_lower.id
        failed = _succeeded_job(session, 0.0, 0.0)
        failed.status = "failed"
        assert record_reference(session, failed) is None
        unhashed = _succeeded_job(session, 0.0, 0.0)  # no digest of its data: no P*
        unhashed.data_hash = None
        assert record_reference(session, unhashed) is None
        nan = _succeeded_job(session, float("nan"), 0.0)
        assert record_reference(session, nan) is None
