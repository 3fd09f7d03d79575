"""core.jobs.check_job_memory counts a job's held-out set beside its working memory: a job
that fits alone is refused when its test rows take it over the limit, the message saying
how many bytes they add, at ``test`` when the job fits without them."""

from __future__ import annotations

import pytest

from faceoff.core.jobs import check_job_memory
from faceoff.core.settings import Settings
from faceoff.core.specs import JobSpec, SpecError, canonical_job
from faceoff.solvers.catalogue import get_spec

SHAPE = (10_000, 500, 200_000)
CAPACITY = {"job_bytes": 2**40, "host": "h", "memory_bytes": 2**41, "concurrency": 1}


def test_the_held_out_set_s_bytes_count_against_the_job_limit():
    spec = canonical_job(
        JobSpec(
            dataset="d",
            loss="logistic",
            l2=1e-3,
            solver="lbfgs",
            test={"split": "random", "fraction": 0.2},
        )
    )
    solver = get_spec("lbfgs")
    working = solver.working_bytes(*SHAPE, solver.load_params(spec.params), spec.penalty)
    settings = Settings(DATABASE_URL="sqlite://", MAX_JOB_BYTES=int(working) + 1000)
    check_job_memory(spec, SHAPE, settings, capacity=CAPACITY)  # alone it fits
    check_job_memory(spec, SHAPE, settings, capacity=CAPACITY, held_out_bytes=1000)
    with pytest.raises(SpecError) as refused:
        check_job_memory(spec, SHAPE, settings, capacity=CAPACITY, held_out_bytes=1001)
    assert refused.value.loc == ("test",)  # it fits without its test set
    assert "a held-out set of 1001 bytes" in refused.value.message
    assert f"needs up to {working + 1001:.0f} bytes" in refused.value.message
    with pytest.raises(SpecError) as refused:  # over the limit without its test set too
        check_job_memory(
            spec,
            SHAPE,
            settings.model_copy(update={"MAX_JOB_BYTES": 1}),
            capacity=CAPACITY,
            held_out_bytes=1001,
        )
    assert refused.value.loc == ("params",)
