"""What the pages show, read through the service layer (faceoff.core) as plain dicts.

Every read opens a read-only session (:func:`faceoff.core.db.read_session`: it refuses to
flush and is rolled back), so the dashboard never writes. Every read is for one viewer's
``team_id`` (None with authentication off): its jobs and sweeps, the shared datasets and
its uploads (core.auth); reference optima are shared. Traces are downsampled by core
(:func:`faceoff.core.jobs.trace_columns`): a figure's points of a job are those of
``GET /api/v1/jobs/{id}/trace?max_points=MAX_POINTS``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from faceoff.core import datasets, jobs, paths, references, summaries, sweeps
from faceoff.core.datasets import Caps
from faceoff.core.db import read_session
from faceoff.core.errors import NotFoundError
from faceoff.core.jobs import JobFilter, JobRecord
from faceoff.core.models import QUEUED, RUNNING, SUCCEEDED, TERMINAL, waiting_reason

MAX_POINTS = 500  # per job and figure
ACTIVE = (QUEUED, RUNNING)
TRACE_FIELDS = ("seq", "iteration", "epoch", "time_s", "primal", "gap", "test")
JOBS_SHOWN = 1000  # the newest jobs of the runs table
SWEEPS_SHOWN = 500  # the newest sweeps of the sweeps index
DATASETS_SHOWN = 1000  # the datasets index


def progress(epoch: float | None, time_s: float | None, stop: dict[str, Any]) -> float:
    """Fraction of the epoch or time budget used, whichever is larger (0 to 1)."""
    fractions = [0.0]
    if epoch is not None and stop.get("max_epochs"):
        fractions.append(epoch / stop["max_epochs"])
    if time_s is not None and stop.get("max_seconds"):
        fractions.append(time_s / stop["max_seconds"])
    return min(1.0, max(fractions))


def _classes(labels: dict[str, Any] | None) -> int | None:
    """K of a dataset's labels (core.labels), None when they are not classes or unknown."""
    return labels["n_classes"] if labels and labels.get("kind") == "classes" else None


def job_row(record: JobRecord) -> dict[str, Any]:
    """A job (a row of :func:`faceoff.core.jobs.job_records`) as the tables and figures use
    it; ``auto``: what its solver's auto parameters chose (the job's own column, never its
    trace)."""
    job = record._mapping  # by key: a Row's attributes cost more than the rest of this
    spec = job["spec"]
    return {
        "id": job["id"],
        "sweep_id": job["sweep_id"],
        "dataset_id": job["dataset_id"],
        "dataset": job["dataset"],
        "solver": job["solver"],
        "params": spec.get("params", {}),
        "auto": job["auto"] or {},
        "seed": spec.get("seed", 0),  # None: the solver uses no seed (core.specs)
        "repeat": spec.get("repeat", 0),  # k ≥ 1: a timing repeat
        "loss": job["loss"],
        "gamma": spec.get("gamma", 1.0),
        "l1": spec.get("l1", 0.0),
        "l2": spec.get("l2"),
        "normalize": spec.get("normalize", "none"),
        "multiclass": spec.get("multiclass"),  # None: binary or regression (core.specs)
        "fit_intercept": spec.get("fit_intercept", False),
        "path": spec.get("path"),  # None: one l1; else the λ grid (core.specs.PathSpec)
        "n_classes": _classes(job["dataset_labels"]),
        "objective_hash": job["objective_hash"],
        "status": job["status"],
        "waiting": waiting_reason(job["status"], job["waiting_for_host"]),  # "waiting for host H"
        "stop_reason": job["stop_reason"],
        "n_points": job["n_points"],
        "epoch": job["epoch"],
        "time_s": job["time_s"],
        "primal": job["primal"],
        "gap": job["gap"],
        "trace_mode": job["trace_mode"],
        "wall_s": job["wall_s"],
        "machine": job["machine"],
        "concurrency": job["concurrency"],
        "concurrency_max": job["concurrency_max"],
        "load_start": job["load_start"],
        "load_end": job["load_end"],
        "progress": progress(job["epoch"], job["time_s"], spec.get("stop", {})),
        "created_at": job["created_at"],
    }


def list_jobs(
    url: str, where: JobFilter, limit: int = JOBS_SHOWN, *, team_id: int | None
) -> tuple[list[dict[str, Any]], int]:
    """The team's newest ``limit`` jobs matching ``where`` and the number of all of them."""
    with read_session(url) as session:
        found, count = jobs.job_records(session, where, limit, team_id=team_id)
        return [job_row(job) for job in found], count


def filter_options(url: str, *, team_id: int | None) -> dict[str, list[Any]]:
    """What the team's jobs table can be filtered by: sweeps and datasets as (id, label),
    and the solvers, losses and statuses present."""
    with read_session(url) as session:
        found_sweeps, _ = sweeps.list_sweeps(session, None, team_id=team_id)
        found_datasets, _ = datasets.list_datasets(session, None, team_id=team_id)
        facets = jobs.job_facets(session, team_id=team_id)
        return {
            "sweep": [(s.id, f"#{s.id} {s.name}" if s.name else f"#{s.id}") for s in found_sweeps],
            "dataset": sorted(((d.id, d.name) for d in found_datasets), key=lambda d: d[1]),
            **facets,
        }


def job_traces(
    url: str, where: JobFilter, max_points: int | None = MAX_POINTS, *, team_id: int | None
) -> tuple[list[dict[str, Any]], dict[str, dict[str, float]]]:
    """The team's job rows (oldest first) with their ``trace`` (columns of TRACE_FIELDS,
    at most ``max_points`` points; None: all), and the references P* they need."""
    with read_session(url) as session:
        found, _ = jobs.job_records(session, where, None, team_id=team_id)
        found.reverse()  # oldest first
        traces = jobs.trace_columns(session, found, TRACE_FIELDS, max_points)
        optima = references.get_references(session, {job.objective_hash for job in found})
        rows = [{**job_row(job), "trace": traces[job.id]} for job in found]
        refs = {key: {"primal": r.primal, "gap": r.gap} for key, r in optima.items()}
    return rows, refs


def job_paths(
    url: str, where: JobFilter, *, team_id: int | None
) -> tuple[list[dict[str, Any]], int]:
    """The team's path job rows matching ``where`` (oldest first), each with ``steps`` (one
    row per λ solved: core.paths), ``lambda_max``, ``n_lambdas`` and ``tol``; and how many
    of the matching jobs are not path jobs (not shown)."""
    with read_session(url) as session:
        found, _ = jobs.job_records(session, where, None, team_id=team_id)
        found.reverse()  # oldest first
        rows = [job_row(job) for job in found]
        spec_of = {job.id: job.spec for job in found}
        chosen = [row for row in rows if row["path"] is not None]
        read = paths.job_paths(session, [row["id"] for row in chosen])
        for row in chosen:
            row["lambda_max"], row["steps"] = read[row["id"]]
            row["n_lambdas"] = paths.grid_size(row["path"])
            row["tol"] = float(spec_of[row["id"]].get("stop", {}).get("tol", 0.0))
    return chosen, len(rows) - len(chosen)


def job_times(
    url: str,
    where: JobFilter,
    eps: float,
    criterion: str,
    xs: Sequence[str],
    *,
    team_id: int | None,
) -> tuple[list[dict[str, Any]], dict[str, dict[str, float]]]:
    """The team's job rows matching ``where`` (oldest first), each with ``to_eps``: {x: its
    time to ε under ``criterion``} for each of ``xs`` (core.summaries.times_to_eps: from
    the trace summaries, the same values as from the traces), and the references P* they
    need."""
    with read_session(url) as session:
        found, _ = jobs.job_records(session, where, None, team_id=team_id)
        found.reverse()  # oldest first
        optima = references.get_references(session, {job.objective_hash for job in found})
        refs = {key: {"primal": r.primal, "gap": r.gap} for key, r in optima.items()}
        times = summaries.times_to_eps(session, found, criterion, eps, xs, refs)
        rows = [{**job_row(job), "to_eps": times[job.id]} for job in found]
    return rows, refs


def job_settle_times(
    url: str, where: JobFilter, name: str, delta: float, xs: Sequence[str], *, team_id: int | None
) -> list[dict[str, Any]]:
    """The team's job rows matching ``where`` (oldest first), each with ``settle``: whether
    its trace has held-out measure ``name`` (``held_out``) and {x: its time to settle within
    ``delta``} (core.summaries.times_to_settle, from the whole trace). Only succeeded jobs'
    traces are read (any other has no final value: ``held_out`` None, no times)."""
    with read_session(url) as session:
        found, _ = jobs.job_records(session, where, None, team_id=team_id)
        found.reverse()  # oldest first
        done = [job for job in found if job.status == SUCCEEDED]
        times = summaries.times_to_settle(session, done, name, delta, xs)
        unread = {"held_out": None, **dict.fromkeys(xs)}
        return [{**job_row(job), "settle": times.get(job.id, unread)} for job in found]


def sweep_summary(url: str, sweep_id: int, *, team_id: int | None) -> dict[str, Any] | None:
    """A sweep's id, name, spec and the number of its jobs of each status it has; None if
    the team has no such sweep."""
    with read_session(url) as session:
        try:
            sweep = sweeps.get_sweep(session, sweep_id, team_id=team_id)
        except NotFoundError:
            return None
        counts = sweeps.sweep_progress(session, [sweep.id])[sweep.id]
        present = {status: n for status, n in counts.items() if n}
        return {"id": sweep.id, "name": sweep.name, "spec": sweep.spec, "counts": present}


def sweep_index(
    url: str, limit: int = SWEEPS_SHOWN, *, team_id: int | None
) -> tuple[list[dict[str, Any]], int]:
    """The team's newest ``limit`` sweeps (those GET /api/v1/sweeps lists) with their
    progress, and how many it has in all."""
    with read_session(url) as session:
        found, count = sweeps.list_sweeps(session, limit, team_id=team_id)
        progress = sweeps.sweep_progress(session, [s.id for s in found])
        out = []
        for sweep in found:
            spec, counts = sweep.spec, progress[sweep.id]
            out.append(
                {
                    "id": sweep.id,
                    "name": sweep.name,
                    "created_at": sweep.created_at,
                    "n_jobs": sweep.n_jobs,
                    "done": sum(counts[status] for status in TERMINAL),
                    "counts": {status: n for status, n in counts.items() if n},
                    "datasets": spec.get("datasets", []),
                    "losses": spec.get("losses", []),
                    "n_objectives": math.prod(
                        len(spec.get(key) or [0])
                        for key in ("datasets", "losses", "multiclass", "l2", "l1")
                    ),
                    "solvers": sorted(sweeps.solver_counts(sweep) or {}),
                }
            )
        return out, count


def dataset_index(
    url: str, limit: int = DATASETS_SHOWN, *, team_id: int | None
) -> tuple[list[dict[str, Any]], int, list[str]]:
    """The datasets the team may use (those GET /api/v1/datasets lists: the shared ones and
    its uploads), how many in all, and the public names not registered yet."""
    with read_session(url) as session:
        found, count = datasets.list_datasets(session, limit, team_id=team_id)
        out = [
            {
                "id": d.id,
                "name": d.name,
                "kind": d.source.get("kind", ""),
                "availability": datasets.availability(d.source),
                "shared": d.team_id is None,
                "n_samples": d.n_samples,
                "n_features": d.n_features,
                "nnz": d.nnz,
                "n_classes": _classes(d.labels),
                "created_at": d.created_at,
            }
            for d in found
        ]
        return out, count, datasets.unregistered_public_names(session)


def dataset_summary(url: str, dataset_id: int, *, team_id: int | None) -> dict[str, Any] | None:
    """A dataset's fields and the objectives the team's jobs on it minimize; None if the
    team may not see it."""
    with read_session(url) as session:
        try:
            dataset = datasets.get_dataset(session, dataset_id, team_id=team_id)
        except NotFoundError:
            return None
        return {
            "id": dataset.id,
            "name": dataset.name,
            "source": dataset.source,
            "n_samples": dataset.n_samples,
            "n_features": dataset.n_features,
            "nnz": dataset.nnz,
            "sha256": dataset.sha256,
            "availability": datasets.availability(dataset.source),
            "stats": dataset.stats,
            "labels": dataset.labels,
            "objectives": datasets.dataset_objectives(session, dataset, team_id=team_id),
        }


@lru_cache(maxsize=8)
def dataset_statistics(
    url: str,
    dataset_id: int,
    objective: tuple[str, float, float, str],  # loss, l2, gamma, normalize
    upload_dir: Path,
    caps: Caps,
    *,
    team_id: int | None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(statistics, advice) of a dataset the team may see for the objective:
    :func:`faceoff.core.datasets.dataset_statistics`, which loads the data (DatasetError,
    ValueError or OSError when it cannot), without storing anything. The last few are
    kept."""
    with read_session(url) as session:
        dataset = datasets.get_dataset(session, dataset_id, team_id=team_id)
        result = datasets.dataset_statistics(
            session, dataset, *objective, upload_dir=upload_dir, caps=caps, store=False
        )
    return result["stats"], result["advice"]


def active(rows: Sequence[dict[str, Any]]) -> bool:
    """Whether any of the jobs is queued or running (its view should refresh)."""
    return any(r["status"] in ACTIVE for r in rows)
