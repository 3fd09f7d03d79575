"""Sweeps: the cartesian product of jobs, submitted at once, and their progress.

A sweep owns its jobs (``Job.sweep_id``), so its progress and results are self-contained:

- submitting a sweep whose canonical spec equals an existing sweep's of the same team returns
  that sweep;
- otherwise each expanded job reuses an identical reusable job of the team only if that job
  belongs to no sweep (it is then adopted: its ``sweep_id`` becomes the new sweep's); an
  identical job of another sweep is not taken away from it, and a new job is created instead.

``force=True`` always creates new jobs (and a new sweep).

A sweep's axes are sets: repeated values (``seeds: [0, 0, 0]``, ``l2: [0.01, 1e-2]``) and
solver settings equal once parsed with their defaults are dropped before it expands, and the
sweep records how many (:func:`faceoff.core.specs.dedupe_sweep`), so no two of its jobs
share a spec hash.

A solver setting that does not use the seed (``SolverSpec.uses_seed``) runs once per
objective, whatever the seeds, unless the sweep asks for ``timing_repeats``
(:func:`faceoff.core.specs.expand_sweep`); :func:`solver_counts` says how many jobs of each
kind a sweep has.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import lru_cache

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from faceoff.core.auth import owned_by
from faceoff.core.datasets import Caps, check_test_split, resolve_dataset
from faceoff.core.db import one_or_not_found, page
from faceoff.core.jobs import (
    REUSABLE,
    check_host,
    check_job_memory,
    check_quotas,
    check_runnable,
    check_stop_limits,
    dataset_shape,
    new_job,
)
from faceoff.core.labels import check_labels
from faceoff.core.models import STATUSES, Job, Sweep
from faceoff.core.settings import Settings
from faceoff.core.specs import (
    SpecError,
    SweepSpec,
    check_text_at,
    dedupe_sweep,
    dump_spec,
    expand_sweep,
    jobs_per_solver,
    least_jobs,
    spec_hash,
    sweep_size,
    unique_settings,
)

# where a sweep's fields are, for core.labels.check_labels: its losses are a list
SWEEP_LOCS = {"loss": ("losses",)}


def _sweep_key(spec: SweepSpec) -> str:
    return json.dumps(dump_spec(spec), sort_keys=True)


def submit_sweep(
    session: Session,
    spec: SweepSpec,
    settings: Settings,
    force: bool = False,
    *,
    team_id: int | None,
    wait_for_host: bool = False,
) -> tuple[Sweep, list[Job], bool]:
    """(sweep, new jobs to enqueue, whether the sweep is new), owned by the team.

    Drops repeated values of its axes and repeated solver settings first
    (:func:`faceoff.core.specs.dedupe_sweep`; the sweep records how many,
    ``Sweep.duplicates_dropped``). Refuses sweeps above ``MAX_SWEEP_JOBS`` before expanding
    them, a host no live worker serves unless ``wait_for_host``
    (:func:`faceoff.core.jobs.check_host`), and a sweep over the team's quotas
    (:func:`faceoff.core.jobs.check_quotas`); deduplicates within the team as in the module
    doc. The caller commits, then enqueues the new jobs.
    """
    spec, dropped = dedupe_sweep(spec)
    waiting = check_host(spec.host, wait_for_host, settings)
    least = least_jobs(spec)  # every setting runs once per objective it takes
    exact = least <= settings.MAX_SWEEP_JOBS  # then its settings may be listed
    size = sweep_size(spec) if exact else least
    if size > settings.MAX_SWEEP_JOBS:
        raise SpecError(
            (),
            f"the sweep expands to {'' if exact else 'at least '}{size} jobs, more "
            f"than this server's limit of {settings.MAX_SWEEP_JOBS}; split it into smaller "
            "sweeps",
        )
    if spec.name is not None:
        check_text_at(spec.name, ("name",))
    check_stop_limits(spec.stop, settings)
    caps = Caps.of(settings)
    if repeated := unique_settings(spec)[1]:  # settings equal once parsed
        dropped["solvers"] = dropped.get("solvers", 0) + repeated
    specs = expand_sweep(spec)
    for solver in dict.fromkeys(job_spec.solver for job_spec in specs):
        check_runnable(solver, settings, ("solvers",))
    key = _sweep_key(spec)
    if not force:
        same_size = select(Sweep).where(Sweep.n_jobs == size, owned_by(Sweep.team_id, team_id))
        for existing in session.scalars(same_size):
            if json.dumps(existing.spec, sort_keys=True) == key:
                return existing, [], False
    datasets = {
        name: resolve_dataset(session, name, ("datasets", i), team_id=team_id, caps=caps)
        for i, name in enumerate(spec.datasets)
    }
    for dataset in datasets.values():
        check_test_split(session, dataset, spec.test, caps, ("test",), team_id=team_id)
    for job_spec in specs:
        dataset = datasets[job_spec.dataset]
        classes = check_labels(dataset, job_spec, settings.MAX_CLASSES, SWEEP_LOCS)
        check_job_memory(job_spec, dataset_shape(dataset), settings, ("solvers",), classes)
    digests = [spec_hash(job_spec) for job_spec in specs]
    standalone: dict[str, Job] = {}
    if not force:
        query = select(Job).where(
            Job.spec_hash.in_(set(digests)),
            Job.status.in_(REUSABLE),
            Job.sweep_id.is_(None),
            owned_by(Job.team_id, team_id),
        )
        for job in session.scalars(query.order_by(Job.id)):
            standalone[job.spec_hash] = job
    new_jobs = sum(1 for digest in digests if digest not in standalone)
    check_quotas(session, settings, team_id, jobs=new_jobs, sweeps=1)
    sweep = Sweep(
        name=spec.name,
        spec=dump_spec(spec),
        n_jobs=size,
        team_id=team_id,
        duplicates_dropped=dropped,
    )
    session.add(sweep)
    created: list[Job] = []
    for job_spec, digest in zip(specs, digests, strict=True):
        if (existing_job := standalone.pop(digest, None)) is not None:
            existing_job.sweep = sweep
            continue
        job = new_job(job_spec, digest, datasets[job_spec.dataset], team_id, sweep, waiting)
        session.add(job)
        created.append(job)
    session.flush()
    return sweep, created, True


def solver_counts(sweep: Sweep) -> dict[str, dict[str, int]] | None:
    """{solver: {"jobs", "seeded", "unseeded", "timing_repeats"}} of a stored sweep
    (:func:`faceoff.core.specs.jobs_per_solver`); None if its spec no longer parses. A sweep
    made before ``timing_repeats`` existed ran every setting once per seed: its spec is read
    with timing repeats.

    They depend on the spec alone (and the catalogue, fixed in a process): the last
    :data:`COUNTS_KEPT` specs' are kept, keyed by the spec's JSON (the sweeps index asks
    for 500 sweeps' at each refresh, and validating a spec and listing its settings took
    0.26 ms a sweep)."""
    counts = _solver_counts(json.dumps(sweep.spec))
    return None if counts is None else {solver: dict(c) for solver, c in counts.items()}


COUNTS_KEPT = 4096  # sweep specs whose solver counts solver_counts keeps


@lru_cache(maxsize=COUNTS_KEPT)
def _solver_counts(spec: str) -> dict[str, dict[str, int]] | None:
    """:func:`solver_counts` of a sweep spec given as JSON (its callers get copies)."""
    stored = {"timing_repeats": True, **json.loads(spec)}
    try:
        return jobs_per_solver(SweepSpec.model_validate(stored))
    except ValueError:
        return None


def get_sweep(session: Session, sweep_id: int, *, team_id: int | None) -> Sweep:
    """A sweep of the team (NotFoundError for another team's)."""
    query = select(Sweep).where(Sweep.id == sweep_id, owned_by(Sweep.team_id, team_id))
    return one_or_not_found(session, query, f"sweep {sweep_id} not found")


def list_sweeps(
    session: Session, limit: int | None, offset: int = 0, *, team_id: int | None
) -> tuple[list[Sweep], int]:
    """The team's sweeps, newest first (``limit`` None: all), and how many in all."""
    query = select(Sweep).where(owned_by(Sweep.team_id, team_id)).order_by(Sweep.id.desc())
    return page(session, query, limit, offset)


def sweep_progress(session: Session, sweep_ids: Iterable[int]) -> dict[int, dict[str, int]]:
    """{sweep id: {status: number of its jobs}} with every status present."""
    ids = list(sweep_ids)
    out = {i: dict.fromkeys(STATUSES, 0) for i in ids}
    rows = session.execute(
        select(Job.sweep_id, Job.status, func.count())
        .where(Job.sweep_id.in_(ids))
        .group_by(Job.sweep_id, Job.status)
    )
    for sweep_id, status, count in rows:
        if sweep_id is not None:  # the query asks for sweeps' jobs only
            out[sweep_id][status] = int(count)
    return out
