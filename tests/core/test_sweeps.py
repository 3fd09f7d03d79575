"""core.specs and core.sweeps: a solver setting that does not use the seed runs once per
objective (or once per seed as labelled timing repeats), its jobs store no seed, and an
identical submission with another seed is the same job."""

from __future__ import annotations

import hashlib
import json
from collections import Counter

import pytest

from faceoff.core import jobs, sweeps
from faceoff.core.db import session_scope
from faceoff.core.models import Sweep
from faceoff.core.specs import (
    JobSpec,
    SpecError,
    SweepSpec,
    canonical_job,
    dump_spec,
    expand_sweep,
    jobs_per_solver,
    objective_hash,
    spec_hash,
    sweep_size,
)
from tests.dashboard import factories

OBJECTIVES = {"datasets": ["synthetic-300x40"], "losses": ["logistic"], "l2": [1e-3, 1e-4]}
SWEEP = {**OBJECTIVES, "solvers": ["dual_cd", "lbfgs"], "seeds": [0, 1, 2]}


def _runs(specs: list[JobSpec]) -> Counter:
    return Counter((s.solver, s.seed, s.repeat) for s in specs)


def test_a_deterministic_solver_runs_once_per_objective():
    specs = expand_sweep(SweepSpec(**SWEEP))
    assert _runs(specs) == {
        ("dual_cd", 0, 0): 2,
        ("dual_cd", 1, 0): 2,
        ("dual_cd", 2, 0): 2,
        ("lbfgs", None, 0): 2,
    }
    assert sweep_size(SweepSpec(**SWEEP)) == len(specs) == 8
    assert jobs_per_solver(SweepSpec(**SWEEP)) == {
        "dual_cd": {"jobs": 6, "seeded": 6, "unseeded": 0, "timing_repeats": 0, "skipped": 0},
        "lbfgs": {"jobs": 2, "seeded": 0, "unseeded": 2, "timing_repeats": 0, "skipped": 0},
    }


def test_timing_repeats_are_asked_for_and_labelled():
    sweep = SweepSpec(**SWEEP, timing_repeats=True)
    specs = expand_sweep(sweep)
    lbfgs = _runs(s for s in specs if s.solver == "lbfgs")
    assert lbfgs == {("lbfgs", None, 0): 2, ("lbfgs", None, 1): 2, ("lbfgs", None, 2): 2}
    assert len({spec_hash(s) for s in specs}) == len(specs) == sweep_size(sweep) == 12
    assert jobs_per_solver(sweep)["lbfgs"] == {
        "jobs": 6,
        "seeded": 0,
        "unseeded": 2,
        "timing_repeats": 4,
        "skipped": 0,
    }


def test_the_seed_use_of_a_setting_follows_its_parameters():
    liblinear = {"solver": "sklearn.liblinear", "params": {"formulation": ["dual", "primal"]}}
    dgpd = {"solver": "dgpd", "params": {"variant": ["active_set", "basic"]}}
    sweep = SweepSpec(**{**SWEEP, "solvers": [liblinear, dgpd], "l2": [1e-3]})
    runs = Counter((s.solver, s.params[next(iter(s.params))], s.seed) for s in expand_sweep(sweep))
    assert runs == {
        ("sklearn.liblinear", "dual", 0): 1,
        ("sklearn.liblinear", "dual", 1): 1,
        ("sklearn.liblinear", "dual", 2): 1,
        ("sklearn.liblinear", "primal", None): 1,
        ("dgpd", "active_set", 0): 1,
        ("dgpd", "active_set", 1): 1,
        ("dgpd", "active_set", 2): 1,
        ("dgpd", "basic", None): 1,
    }
    assert jobs_per_solver(sweep)["sklearn.liblinear"] == {
        "jobs": 4,
        "seeded": 3,
        "unseeded": 1,
        "timing_repeats": 0,
        "skipped": 0,
    }


def test_canonical_job_drops_an_unused_seed_and_keeps_old_hashes():
    job = {**OBJECTIVES, "dataset": "a1a", "loss": "logistic", "l2": 1e-4}
    for key in ("datasets", "losses"):
        job.pop(key)
    lbfgs = [canonical_job(JobSpec(**job, solver="lbfgs", seed=s)) for s in (0, 2)]
    assert [s.seed for s in lbfgs] == [None, None] and spec_hash(lbfgs[0]) == spec_hash(lbfgs[1])
    dual = [canonical_job(JobSpec(**job, solver="dual_cd", seed=s)) for s in (0, 2, None)]
    assert [s.seed for s in dual] == [0, 2, 0] and spec_hash(dual[0]) != spec_hash(dual[1])
    assert spec_hash(dual[2]) == spec_hash(dual[0])
    # repeat 0, an unpinned host, a binary problem (no multiclass), no intercept and no
    # held-out metrics (test) and one l1 (no path) are left out of the hash: jobs made
    # before those fields existed keep theirs
    dumped = dual[0].model_dump(mode="json")
    assert dumped["repeat"] == 0 and dumped["host"] is None and dumped["multiclass"] is None
    assert dumped["fit_intercept"] is False and dumped["test"] is None
    assert dumped["path"] is None
    later = ("repeat", "host", "multiclass", "fit_intercept", "test", "path")
    before = {k: v for k, v in dumped.items() if k not in later}
    text = json.dumps(before, sort_keys=True, separators=(",", ":"))
    assert spec_hash(dual[0]) == hashlib.sha256(text.encode()).hexdigest()
    assert spec_hash(dual[0].model_copy(update={"repeat": 1})) != spec_hash(dual[0])


def test_submit_sweep_creates_one_deterministic_job_per_objective(database_url, settings_for):
    factories.add_dataset(database_url)
    settings = settings_for(database_url)
    with session_scope(database_url) as session:
        sweep, created, new = sweeps.submit_sweep(
            session, SweepSpec(**SWEEP), settings, team_id=None
        )
        assert new and sweep.n_jobs == len(created) == 8
        assert Counter(job.solver for job in created) == {"dual_cd": 6, "lbfgs": 2}
        assert {job.spec["seed"] for job in created if job.solver == "lbfgs"} == {None}
        assert sweeps.solver_counts(sweep)["lbfgs"]["unseeded"] == 2
        # a standalone lbfgs job with any seed is the sweep's job of that objective
        lbfgs = next(job for job in created if job.solver == "lbfgs")
        again, made = jobs.submit_job(
            session,
            JobSpec(**{**lbfgs.spec, "seed": 7}),
            settings,
            team_id=None,
        )
        assert not made and again.id == lbfgs.id
        repeats, _, _ = sweeps.submit_sweep(
            session, SweepSpec(**SWEEP, timing_repeats=True), settings, team_id=None
        )
        assert repeats.id != sweep.id and repeats.n_jobs == 12


def test_a_sweep_made_before_timing_repeats_counts_its_reruns():
    legacy = {**SWEEP, "l2": [1e-3]}  # stored without timing_repeats: every seed ran
    counts = sweeps.solver_counts(Sweep(spec=legacy, n_jobs=6))
    assert counts == {
        "dual_cd": {"jobs": 3, "seeded": 3, "unseeded": 0, "timing_repeats": 0, "skipped": 0},
        "lbfgs": {"jobs": 3, "seeded": 0, "unseeded": 1, "timing_repeats": 2, "skipped": 0},
    }
    assert sweeps.solver_counts(Sweep(spec={"broken": True}, n_jobs=0)) is None


def test_solver_counts_are_derived_once_a_spec_and_handed_out_as_copies(monkeypatch):
    """The sweeps index asks for 500 sweeps' counts at each refresh (issue 33): a spec's
    counts are derived once (COUNTS_KEPT specs kept), whatever sweep holds it; another spec
    gets its own; what a caller does to its counts never reaches the next caller."""
    derived = []

    def counting(spec: SweepSpec) -> dict:
        derived.append(spec)
        return jobs_per_solver(spec)

    monkeypatch.setattr(sweeps, "jobs_per_solver", counting)
    sweeps._solver_counts.cache_clear()
    spec = {**SWEEP, "l2": [1e-4, 1e-5], "timing_repeats": False}
    want = jobs_per_solver(SweepSpec(**spec))
    first = sweeps.solver_counts(Sweep(id=1, spec=spec))
    assert first == want and len(derived) == 1
    first["lbfgs"]["jobs"] = -1
    first.pop("dual_cd")
    assert sweeps.solver_counts(Sweep(id=2, spec=json.loads(json.dumps(spec)))) == want
    assert len(derived) == 1
    other = sweeps.solver_counts(Sweep(id=1, spec={**spec, "seeds": [0]}))
    assert len(derived) == 2 and other["dual_cd"]["seeded"] == 2 != want["dual_cd"]["seeded"]
    assert sweeps.solver_counts(Sweep(id=3, spec={"broken": True})) is None
    assert sweeps._solver_counts.cache_info().maxsize == sweeps.COUNTS_KEPT
    sweeps._solver_counts.cache_clear()


def test_the_size_limit_counts_deterministic_solvers_once(database_url, settings_for):
    factories.add_dataset(database_url)
    settings = settings_for(database_url, MAX_SWEEP_JOBS=8)
    with session_scope(database_url) as session:
        _, created, _ = sweeps.submit_sweep(session, SweepSpec(**SWEEP), settings, team_id=None)
        assert len(created) == 8
        with pytest.raises(SpecError, match="expands to 12 jobs"):
            sweeps.submit_sweep(
                session, SweepSpec(**SWEEP, timing_repeats=True), settings, team_id=None
            )
        huge = {"solver": "spdc", "params": {"batch_size": list(range(1, 1001))}}
        with pytest.raises(SpecError, match="at least 2000 jobs"):
            sweeps.submit_sweep(
                session, SweepSpec(**{**SWEEP, "solvers": [huge]}), settings, team_id=None
            )


# spec and objective hashes of binary and regression jobs, computed on main before the
# K-class service work (79a4fb5; the same before the K-class core, 13ca1d3): this work
# must leave every one of them as it was. Issue 34 made `auto` the default of dual_cd's
# sampling, accelerate and shrinking: a spec that gives main's defaults explicitly (as
# every stored dual_cd job does: canonical specs store every parameter) keeps main's hash,
# while one that omits them now means auto and hashes as NEW_DEFAULT_HASHES say
MAIN_DUAL_CD = {"sampling": "uniform", "step": "exact", "accelerate": "none", "shrinking": "off"}
MAIN_HASHES = [
    (
        {"dataset": "a9a", "loss": "logistic", "l2": 1e-4, "solver": "dual_cd"}
        | {"params": MAIN_DUAL_CD},
        "130d89f01320a30e3be2a03da697879d39a4275099a088be1b2be92b969fab13",
        "e25566ebec79d5a5c07feeda85f9c1361225942aa21f6d9245c42ef1c18b1459",
    ),
    (
        {"dataset": "news20", "positive": [1, 2, 3], "normalize": "rows"}
        | {"loss": "smooth_hinge", "gamma": 0.5, "l2": 1e-5, "l1": 1e-6}
        | {"solver": "spdc", "params": {"batch_size": 8}, "seed": 3},
        "fc9b318a7d8b8d9c5b8bb11c29713042fe28585b34f8c056bc721e54219a7808",
        "d350ee4744310769b21f8489de49656cb2fa05b534567bb630d8f6b4dbfbb140",
    ),
    (
        {"dataset": "breast_cancer", "loss": "squared", "l2": 1e-2, "solver": "lbfgs"}
        | {"host": "node-1"},
        "0ddfe4f964775319d71134dce01327bc4545451b20b3dcdced85d2a6209a7be0",
        "8fbcc82a5437da5bc86ae3d1a30a7ad5a0242e5671933cd1aa25fdd964186947",
    ),
]
MAIN_SWEEP_HASHES = [
    "130d89f01320a30e3be2a03da697879d39a4275099a088be1b2be92b969fab13",
    "c934cbe2ac9c830059bfb534fc98d158c6463c6b85886c8f771b40a4c7a8f9ba",
    "f31ed126f6676425c92a047b711e4f32042d7b9ad35a43f4852851a900b760fd",
]


@pytest.mark.parametrize(("fields", "digest", "objective"), MAIN_HASHES)
def test_binary_and_regression_hashes_are_main_s(fields, digest, objective):
    spec = canonical_job(JobSpec(**fields))
    assert (spec_hash(spec), objective_hash(spec)) == (digest, objective)
    assert "multiclass" not in dump_spec(spec)
    if fields["loss"] == "logistic":  # a K-class form is another job and objective
        lbfgs = {**fields, "solver": "lbfgs", "params": {}}
        binary = spec_hash(canonical_job(JobSpec(**lbfgs)))
        for form in ("ovr", "multinomial"):
            k_class = canonical_job(JobSpec(**lbfgs, multiclass=form))
            assert spec_hash(k_class) != binary and objective_hash(k_class) != objective


def test_a_binary_sweep_s_jobs_and_spec_are_main_s():
    dual_cd = {"solver": "dual_cd", "params": MAIN_DUAL_CD}  # main's defaults, explicitly
    sweep = SweepSpec(
        datasets=["a9a"], losses=["logistic"], l2=[1e-4], solvers=[dual_cd, "lbfgs"], seeds=[0, 1]
    )
    assert [spec_hash(job) for job in expand_sweep(sweep)] == MAIN_SWEEP_HASHES
    assert "multiclass" not in dump_spec(sweep)


# issue 34: dual_cd with its parameters omitted (auto), seeds 0 and 1 of the sweep above
NEW_DEFAULT_HASHES = [
    "4de6a17ca730e577c3820fcc4640e1dc9c85c2b985b3234c0ff8498310dea840",
    "241e3b3fbdaa5d1abe6e42fd82f8bec85fc549b19bca07bc9727ee487abc035b",
]


def test_omitted_params_are_auto_and_hash_apart_from_main_s_defaults():
    """A dual_cd job that omits its parameters runs auto: another run than main's uniform
    passes, so another hash (a stored job of main's defaults is never reused for it),
    stable from now on; lbfgs, whose parameters did not change, keeps main's hashes."""
    sweep = SweepSpec(
        datasets=["a9a"], losses=["logistic"], l2=[1e-4], solvers=["dual_cd", "lbfgs"], seeds=[0, 1]
    )
    jobs = expand_sweep(sweep)
    assert [job.params for job in jobs[:2]] == [
        {"sampling": "auto", "step": "exact", "accelerate": "auto", "shrinking": "auto"}
    ] * 2
    hashes = [spec_hash(job) for job in jobs]
    assert hashes[:2] == NEW_DEFAULT_HASHES and hashes[2] == MAIN_SWEEP_HASHES[2]
