"""core.references: reading the stored optima P* of many objectives at once."""

from __future__ import annotations

import pytest

from faceoff.core.db import read_session
from faceoff.core.errors import NotFoundError
from faceoff.core.models import Job
from faceoff.core.references import get_reference, get_references
from tests.dashboard import factories


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
