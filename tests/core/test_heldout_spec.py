"""core.specs: JobSpec.test, held-out metrics of a registry or seeded random test split.

Validated strictly (a 422 at the field), stored and hashed only when given (so every
spec and hash made before it existed stays the same), and part of the objective hash only
when it is a random hold-out (the solver then trains on the other rows).
"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from faceoff.core.specs import (
    JobSpec,
    SweepSpec,
    canonical_job,
    dump_spec,
    expand_sweep,
    objective_hash,
    spec_hash,
)
from tests.core.test_sweeps import MAIN_HASHES, MAIN_SWEEP_HASHES

JOB = {"dataset": "a9a", "loss": "logistic", "l2": 1e-4, "solver": "lbfgs"}
RANDOM = {"split": "random", "fraction": 0.2, "seed": 0}


def refused(test, loc: tuple, words: str) -> None:
    with pytest.raises(ValidationError) as caught:
        JobSpec(**JOB, test=test)
    (error,) = caught.value.errors()
    assert error["loc"] == loc, error
    assert words in error["msg"], error["msg"]


@pytest.mark.parametrize(
    ("test", "loc", "words"),
    [
        ({**RANDOM, "fraction": 0.0}, ("test", "random", "fraction"), "greater than 0"),
        ({**RANDOM, "fraction": 0.95}, ("test", "random", "fraction"), "less than or equal"),
        ({**RANDOM, "fraction": "0.2"}, ("test", "random", "fraction"), "valid number"),
        ({**RANDOM, "fraction": float("nan")}, ("test", "random", "fraction"), "finite"),
        ({"split": "random", "seed": 0}, ("test", "random", "fraction"), "required"),
        ({**RANDOM, "seed": 1.0}, ("test", "random", "seed"), "valid integer"),
        ({**RANDOM, "seed": True}, ("test", "random", "seed"), "valid integer"),
        ({**RANDOM, "seed": "3"}, ("test", "random", "seed"), "valid integer"),
        ({**RANDOM, "seed": -1}, ("test", "random", "seed"), "greater than or equal to 0"),
        ({**RANDOM, "seed": 2**31}, ("test", "random", "seed"), "less than or equal"),
        ({**RANDOM, "rows": 5}, ("test", "random", "rows"), "Extra inputs"),
        ({"split": "registry", "fraction": 0.2}, ("test", "registry", "fraction"), "Extra"),
        ({"split": "holdout"}, ("test",), "'registry', 'random'"),
        ({"fraction": 0.2}, ("test",), "split"),
        ("registry", ("test",), "dictionary"),
    ],
)
def test_an_invalid_test_split_is_refused_at_its_field(test, loc, words):
    refused(test, loc, words)


def test_held_out_metrics_are_for_binary_and_regression_problems():
    with pytest.raises(ValidationError) as caught:
        JobSpec(**JOB, multiclass="ovr", test={"split": "registry"})
    (error,) = caught.value.errors()
    assert error["loc"] == ("test",) and "not multiclass 'ovr'" in error["msg"]


def test_valid_splits_parse_and_the_seed_defaults_to_zero():
    assert JobSpec(**JOB, test={"split": "random", "fraction": 0.9}).test.seed == 0
    assert JobSpec(**JOB, test={"split": "random", "fraction": 1e-3}).test.fraction == 1e-3
    assert JobSpec(**JOB, test={"split": "registry"}).test.split == "registry"


@pytest.mark.parametrize(("fields", "digest", "objective"), MAIN_HASHES)
def test_a_spec_without_test_keeps_its_stored_form_and_hashes(fields, digest, objective):
    for spec in (JobSpec(**fields), JobSpec(**fields, test=None)):
        spec = canonical_job(spec)
        assert "test" not in dump_spec(spec)
        assert (spec_hash(spec), objective_hash(spec)) == (digest, objective)


def test_a_random_hold_out_is_another_objective_the_registry_split_is_not():
    plain = canonical_job(JobSpec(**JOB))
    registry = canonical_job(JobSpec(**JOB, test={"split": "registry"}))
    held = canonical_job(JobSpec(**JOB, test=RANDOM))
    other_seed = canonical_job(JobSpec(**JOB, test={**RANDOM, "seed": 1}))
    other_fraction = canonical_job(JobSpec(**JOB, test={**RANDOM, "fraction": 0.3}))
    assert dump_spec(registry)["test"] == {"split": "registry"}
    assert dump_spec(held)["test"] == RANDOM
    # another job each (its trace has other extras) ...
    specs = (plain, registry, held, other_seed, other_fraction)
    assert len({spec_hash(spec) for spec in specs}) == 5
    # ... the registry split on the objective of the whole dataset, a hold-out on its own
    assert objective_hash(registry) == objective_hash(plain)
    assert len({objective_hash(spec) for spec in (plain, held, other_seed, other_fraction)}) == 4
    # a stored spec reads back as the same job
    again = JobSpec.model_validate(dump_spec(held))
    assert (spec_hash(again), objective_hash(again)) == (spec_hash(held), objective_hash(held))


SWEEP = {"datasets": ["a9a"], "losses": ["logistic"], "l2": [1e-4], "solvers": ["lbfgs", "saga"]}


def test_a_sweep_gives_its_test_to_every_job_and_hashes_them_as_jobs():
    sweep = SweepSpec(**SWEEP, test=RANDOM)
    assert dump_spec(sweep)["test"] == RANDOM
    expanded = expand_sweep(sweep)
    assert [job.solver for job in expanded] == ["lbfgs", "saga"]
    for job in expanded:
        alone = canonical_job(JobSpec(**JOB | {"solver": job.solver}, test=RANDOM))
        assert dump_spec(job)["test"] == RANDOM
        assert (spec_hash(job), objective_hash(job)) == (spec_hash(alone), objective_hash(alone))


def test_a_sweep_without_test_keeps_its_stored_form_and_job_hashes():
    dual_cd = {"solver": "dual_cd", "params": dict(MAIN_HASHES[0][0]["params"])}
    sweep = SweepSpec(**SWEEP | {"solvers": [dual_cd, "lbfgs"]}, seeds=[0, 1], test=None)
    assert "test" not in dump_spec(sweep)
    assert [spec_hash(job) for job in expand_sweep(sweep)] == MAIN_SWEEP_HASHES


def test_a_k_class_sweep_with_test_is_refused_at_test():
    with pytest.raises(ValidationError) as caught:
        SweepSpec(**SWEEP, multiclass=["ovr"], test={"split": "registry"})
    (error,) = caught.value.errors()
    assert error["loc"] == ("test",) and "not multiclass" in error["msg"]


def test_an_invalid_sweep_split_is_refused_at_its_field():
    with pytest.raises(ValidationError) as caught:
        SweepSpec(**SWEEP, test={**RANDOM, "fraction": 0.95})
    (error,) = caught.value.errors()
    assert error["loc"] == ("test", "random", "fraction"), error
