"""``worker.run_job``: run one job and stream its convergence trace into the database."""

from __future__ import annotations

import json
import logging
import math
import os
import time
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from celery import Task
from celery.exceptions import Reject, SoftTimeLimitExceeded, TimeLimitExceeded

from faceoff.core.datasets import load_matrix, test_source
from faceoff.core.db import brief, is_unavailable, session_scope
from faceoff.core.jobs import check_job_memory
from faceoff.core.labels import declared_labels
from faceoff.core.lifecycle import Event, transition
from faceoff.core.machine import machine_record
from faceoff.core.models import RUNNING, Job
from faceoff.core.queue import RUN_JOB, overshoot
from faceoff.core.references import content_objective_hash, data_digest, record_reference
from faceoff.core.settings import Settings, get_settings, worker_job_bytes
from faceoff.core.specs import DatasetSplit, JobSpec, RandomSplit, RegistrySplit
from faceoff.data.labels import summarize
from faceoff.data.splits import align_columns, labels_like, random_split
from faceoff.data.transforms import normalize, normalize_like
from faceoff.solvers.catalogue import get_spec
from faceoff.solvers.heldout import HeldOut
from faceoff.solvers.path import solve_path
from faceoff.solvers.problem import Data, Problem
from faceoff.solvers.problem import build_problem as build_solver_problem
from faceoff.solvers.run import solve, warmup
from faceoff.solvers.trace import CANCELLED as STOP_CANCELLED
from faceoff.solvers.trace import DIVERGED, StopRules, TracePoint
from faceoff.worker import runner, store
from faceoff.worker.celery_app import celery_app
from faceoff.worker.reaper import Heartbeat
from faceoff.worker.warmup import check_available

log = logging.getLogger(__name__)

ERROR_CHARS = 4000  # longest error message kept on a job
DIVERGED_ERROR = "diverged: primal or dual not finite"
TIME_LIMIT = "time_limit"  # the stop reason of a run killed for not stopping at its limit


def describe(err: BaseException) -> str:
    """``"Type: message"``, cut to ``ERROR_CHARS``."""
    return f"{type(err).__name__}: {err}"[:ERROR_CHARS]


@lru_cache(maxsize=1)
def _data(source_json: str, upload_dir: str, transform: str) -> tuple[Data, np.ndarray]:
    """(Data, b) of a dataset source with its transform: A in the layouts the kernels
    read, built once for the jobs that follow on the same data (building them costs
    seconds on a large matrix). The last one stays in memory (by rows, and by columns once a
    column method has run on it), the matrix as read does not."""
    A, b = load_matrix(json.loads(source_json), Path(upload_dir))
    return Data(normalize(A, transform)), b


@lru_cache(maxsize=1)
def _random_split(
    source_json: str, upload_dir: str, transform: str, fraction: float, seed: int
) -> tuple[Data, np.ndarray, Data, np.ndarray]:
    """(training Data, training labels as read, test Data, test labels as read) of a seeded
    random hold-out of a dataset's rows (data.splits.random_split): the training rows with
    the transform, the test rows with the same one as fitted on them. Built once for the
    jobs that follow on the same split; the whole dataset is not kept beside it."""
    _data.cache_clear()
    A, b = load_matrix(json.loads(source_json), Path(upload_dir))
    train, test = random_split(A.shape[0], fraction, seed)
    A_train, A_test = A[train], A[test]
    del A
    A_test = normalize_like(A_test, transform, A_train)
    return Data(normalize(A_train, transform)), b[train], Data(A_test), b[test]


@lru_cache(maxsize=1)
def _registry_test(source_json: str, upload_dir: str, transform: str) -> tuple[Data, np.ndarray]:
    """(test Data, test labels as read) of the registry's test split of a dataset
    (core.datasets.test_source), with the training data's columns and transform."""
    source = json.loads(source_json)
    split = test_source(source)
    if split is None:
        raise ValueError(f"dataset source {source_json} has no test split in the registry")
    A_test, b_test = load_matrix(split, Path(upload_dir))
    n_features = _data(source_json, upload_dir, transform)[0].n_features
    A_test = align_columns(A_test, n_features, f"test split {split['name']!r}")
    # the training rows as read, for a transform fitted on them (mean: their R̄)
    reference = load_matrix(source, Path(upload_dir))[0] if transform == "mean" else A_test
    return Data(normalize_like(A_test, transform, reference)), b_test


@lru_cache(maxsize=1)
def _dataset_test(
    source_json: str, test_json: str, upload_dir: str, transform: str
) -> tuple[Data, np.ndarray]:
    """(test Data, test labels as read) of another dataset used as the test set, with the
    training data's columns (data.splits.align_columns: ValueError if it has more) and
    transform."""
    A_test, b_test = load_matrix(json.loads(test_json), Path(upload_dir))
    n_features = _data(source_json, upload_dir, transform)[0].n_features
    A_test = align_columns(A_test, n_features, "the test dataset")
    reference = (
        load_matrix(json.loads(source_json), Path(upload_dir))[0] if transform == "mean" else A_test
    )
    return Data(normalize_like(A_test, transform, reference)), b_test


def _training(spec: JobSpec, source_json: str, upload_dir: str) -> tuple[Data, np.ndarray]:
    """(Data, labels as read) the job's solver trains on: the dataset's rows, or those a
    random hold-out leaves. Only the data of the job's kind stays cached."""
    if not isinstance(spec.test, RegistrySplit):
        _registry_test.cache_clear()
    if not isinstance(spec.test, DatasetSplit):
        _dataset_test.cache_clear()
    if isinstance(spec.test, RandomSplit):
        split = spec.test
        data, b, _, _ = _random_split(
            source_json, upload_dir, spec.normalize, split.fraction, split.seed
        )
        return data, b
    _random_split.cache_clear()
    return _data(source_json, upload_dir, spec.normalize)


def build_heldout(
    spec: JobSpec,
    source: dict,
    upload_dir: Path,
    problem: Problem,
    test_source: dict | None = None,
) -> HeldOut | None:
    """The held-out metrics of the job's ``test`` (solvers.heldout.HeldOut, a Recorder's
    ``observe``) for its ``problem`` (:func:`build_problem`'s), None without one; a test
    dataset's source is ``test_source``. The test labels are mapped as the training labels
    were (data.splits.labels_like)."""
    if spec.test is None:
        return None
    source_json = json.dumps(source, sort_keys=True)
    if isinstance(spec.test, RandomSplit):
        split = spec.test
        _, b_train, test, b_test = _random_split(
            source_json, str(upload_dir), spec.normalize, split.fraction, split.seed
        )
    elif isinstance(spec.test, DatasetSplit):
        if test_source is None:
            raise ValueError(
                f"test dataset {spec.test.dataset!r} is no longer registered for this team"
            )
        b_train = _data(source_json, str(upload_dir), spec.normalize)[1]
        test_json = json.dumps(test_source, sort_keys=True)
        test, b_test = _dataset_test(source_json, test_json, str(upload_dir), spec.normalize)
    else:
        b_train = _data(source_json, str(upload_dir), spec.normalize)[1]
        test, b_test = _registry_test(source_json, str(upload_dir), spec.normalize)
    binary = problem.loss.needs_binary_labels
    labels = labels_like(b_test, b_train, binary, spec.positive)
    return HeldOut(test, labels, problem.loss, problem.intercept)


def _own_capacity(settings: Settings) -> dict | None:
    """What a job of this worker may take (as it recorded at start: core.health), None when
    this machine's memory is unknown."""
    memory = settings.worker_memory
    job_bytes = worker_job_bytes(memory, settings.WORKER_CONCURRENCY)
    if job_bytes is None:
        return None
    return {
        "host": machine_record()["host"],
        "memory_bytes": memory,
        "concurrency": settings.WORKER_CONCURRENCY,
        "job_bytes": job_bytes,
    }


PATH_PLACEHOLDER = 1.0  # a path job's problem's l1 until its first λ replaces it
_DIGESTS: dict[tuple, str] = {}  # data digest of each (source, transforms, label mapping)
_MAX_DIGESTS = 256


def build_problem(spec: JobSpec, source: dict, upload_dir: Path) -> tuple[Problem, str]:
    """The job's Problem (solvers.problem.build_problem: the dataset — the rows a random
    hold-out leaves — with the spec's transforms, labels, loss and penalty) and the digest
    of its final matrix and labels (core.references.data_digest, cached per source, split,
    transforms and label mapping)."""
    source_json = json.dumps(source, sort_keys=True)
    data, b = _training(spec, source_json, str(upload_dir))
    problem = build_solver_problem(
        data,
        b,
        spec.loss,
        spec.gamma,
        PATH_PLACEHOLDER if spec.path is not None else spec.l1,  # each λ replaces it
        spec.l2,
        "none",
        spec.positive,
        spec.multiclass,
        get_settings().MAX_CLASSES,
        spec.fit_intercept,
    )
    positive = None if spec.positive is None else tuple(spec.positive)
    binary = problem.loss.needs_binary_labels
    # the labels' form: ±1, targets, or class indices (any K-class form: the same digest)
    labels = "classes" if spec.multiclass is not None else binary
    # the rows trained on: a random hold-out's, or the dataset's (the registry's test split
    # leaves them all)
    rows = spec.test.model_dump_json() if isinstance(spec.test, RandomSplit) else None
    key = (source_json, str(upload_dir), spec.normalize, positive, labels, rows)
    if key not in _DIGESTS:
        if len(_DIGESTS) >= _MAX_DIGESTS:
            _DIGESTS.clear()
        _DIGESTS[key] = data_digest(problem.data.csr_matrix, problem.b)
    return problem, _DIGESTS[key]


class TraceWriter:
    """``on_point`` callback: buffers trace points and writes them when ``batch_points`` are
    waiting or ``batch_seconds`` have passed since the last write (checked at each point, so
    a point waits at most that long or until the next one).

    While the database is unavailable the points stay buffered and the write is tried again
    at a later point, after a backoff that doubles up to ``store.MAX_BACKOFF_SECONDS``: the
    solver runs on, and no point is lost or written twice. A point whose primal, dual or
    gap is not finite (the last point of a diverged run) is not stored: SQLite cannot hold
    NaN in a required column.
    """

    def __init__(self, url: str, claim: store.Claim, batch_points: int, batch_seconds: float):
        self.url = url
        self.claim = claim
        self.batch_points = batch_points
        self.batch_seconds = batch_seconds
        self.buffer: list[TracePoint] = []
        self.superseded = False
        self._written_at = -math.inf
        self._retry_at = -math.inf
        self._backoff = 0.0

    def __call__(self, point: TracePoint) -> None:
        if not all(map(math.isfinite, (point.primal, point.dual, point.gap))):
            return
        self.buffer.append(point)
        now = time.monotonic()
        due = len(self.buffer) >= self.batch_points or now - self._written_at >= self.batch_seconds
        if due and now >= self._retry_at:
            try:
                self.flush()
            except Exception as err:
                if not is_unavailable(err):
                    raise
                self._backoff = min(max(0.1, 2 * self._backoff), store.MAX_BACKOFF_SECONDS)
                self._retry_at = now + self._backoff
                log.warning(
                    "job %d: %d trace points kept until the database is back: %s",
                    self.claim.job_id,
                    len(self.buffer),
                    brief(err),
                )

    def flush(self) -> None:
        """Write the buffered points (none if the run has been superseded); on an error
        they stay buffered."""
        if self.buffer and not self.superseded:
            self.superseded = not store.save_batch(self.url, self.claim, self.buffer)
        self.buffer = []
        self._written_at = time.monotonic()
        self._backoff = 0.0


class JobTask(Task):
    """Fails the job when its task ends without doing so: after a hard time limit the pool
    process is killed and this runs in the worker's main process."""

    def on_failure(
        self, exc: BaseException, task_id: str, args: Any, kwargs: Any, einfo: Any
    ) -> None:
        job_id = args[0]
        if isinstance(exc, TimeLimitExceeded):
            error = (
                f"hard time limit exceeded ({exc.args[0]:g} s): the run did not stop in time, "
                "so its process was killed"
            )
        else:
            error = describe(exc)
        if store.fail_running_job(get_settings().database_url, job_id, error):
            log.error("job %d failed: %s", job_id, error)


# its queue and the hard limit of a message without limits are the app's (worker_config)
@celery_app.task(name=RUN_JOB, bind=True, base=JobTask)
def run_job(self: JobTask, job_id: int) -> None:
    """Run job ``job_id`` (re-read from the database) and record its trace and outcome.

    Every failure ends the job ``failed`` with the error and returns normally, so the task
    is never retried. Database writes are retried for ``DB_RETRY_SECONDS`` while the
    database is unavailable; a job that cannot be claimed in that time has its message
    requeued, one whose end cannot be written stays running and the reaper reruns it.
    """
    settings = get_settings()
    machine = machine_record()
    url, host = settings.database_url, f"{machine['host']}:{os.getpid()}"
    try:
        claim = store.retrying(
            lambda: store.claim_job(url, job_id, host, machine),
            settings.DB_RETRY_SECONDS,
            f"job {job_id}",
        )
    except Exception as err:
        if not is_unavailable(err):
            raise
        raise Reject(
            f"job {job_id} not claimed, database unavailable: {brief(err)}", requeue=True
        ) from err
    if claim is None:
        return
    log.info("job %d: attempt %d, %s", job_id, claim.attempt, claim.spec.get("solver"))
    writer = TraceWriter(url, claim, settings.TRACE_BATCH_POINTS, settings.TRACE_BATCH_SECONDS)
    with Heartbeat(settings, claim):
        end = _run(self, claim, settings, writer)
        points = [] if writer.superseded else writer.buffer
        try:
            finished = store.retrying(
                lambda: store.finish_job(
                    url,
                    claim,
                    end.event,
                    end.reason,
                    end.error,
                    points,
                    end.identity,
                    end.wall_s,
                    end.coefficients,
                ),
                settings.DB_RETRY_SECONDS,
                f"job {job_id}",
            )
        except Exception:
            log.exception("job %d: its end was not written; the reaper will rerun it", job_id)
            return
    if not finished:
        log.warning("job %d: attempt %d was superseded; outcome dropped", job_id, claim.attempt)
        return
    log.info(
        "job %d %s (%s)%s",
        job_id,
        transition(RUNNING, end.event).target,
        end.reason,
        f": {end.error}" if end.error else "",
    )
    if end.event is Event.SUCCEED:
        _record_reference(url, job_id)


class End(NamedTuple):
    """How a run ended, as :func:`store.finish_job` writes it: the event that ends it
    (succeed, fail or halt), stop reason, error, the identity of the job once known, and
    the wall time the run cost when the solver returned, and its final iterate when the
    run sent it."""

    event: Event
    reason: str | None
    error: str | None
    identity: store.Identity | None = None
    wall_s: float | None = None
    coefficients: store.Coefficients | None = None


def _run(task: JobTask, claim: store.Claim, settings: Settings, writer: TraceWriter) -> End:
    """How solving the claimed job ended; the trace points still in ``writer``'s buffer
    are written with the job's end."""
    identity = None
    try:
        check_available(str(claim.spec.get("solver")), claim.machine_host or "?")
        spec = JobSpec.model_validate(claim.spec)
        _record_dataset(settings, claim, spec.normalize)
        problem, data_hash = build_problem(spec, claim.source, settings.upload_dir)
        heldout = build_heldout(spec, claim.source, settings.upload_dir, problem, claim.test_source)
        shape = (problem.data.n_samples, problem.data.n_features, problem.data.nnz)
        # before the method allocates its own
        check_job_memory(
            spec,
            shape,
            settings,
            classes=problem.n_classes,
            capacity=_own_capacity(settings),
            held_out_bytes=heldout.nbytes if heldout is not None else 0,
        )
        identity = store.Identity(
            data_hash,
            content_objective_hash(
                data_hash,
                spec.loss,
                spec.gamma,
                spec.l1,
                spec.l2,
                spec.multiclass,
                spec.fit_intercept,
                None if spec.path is None else spec.path.model_dump(),
            ),
            get_spec(spec.solver).trace_mode,
        )
        _show_identity(settings.database_url, claim, identity)
        end = _solve(spec, problem, claim, settings, writer, heldout)
        return end._replace(identity=identity)
    except SoftTimeLimitExceeded:
        soft = task.request.timelimit[1]
        return End(
            Event.FAIL,
            None,
            f"time limit exceeded: the job ran past its soft limit of {soft:g} s "
            "(max_seconds of solver time, plus the evaluation and set-up allowance)",
            identity,
        )
    except Exception as err:
        log.exception("job %d failed", claim.job_id)
        return End(Event.FAIL, None, describe(err), identity)


_RECORDED: set[str] = set()  # the datasets whose labels and shape this process recorded


def _record_dataset(settings: Settings, claim: store.Claim, transform: str) -> None:
    """Record what the labels and the shape of the claimed job's dataset are, if no one has
    yet (core.labels; the API then checks the jobs that follow against them). Never fails
    the job: a write that fails is logged and tried again by a later job."""
    if claim.dataset in _RECORDED:
        return
    source_json = json.dumps(claim.source, sort_keys=True)
    data, b = _data(source_json, str(settings.upload_dir), transform)  # the job's, cached
    labels = declared_labels(claim.source) or summarize(b)  # a registry task outranks values
    shape = (data.n_samples, data.n_features, data.nnz)
    try:
        store.record_dataset(settings.database_url, claim.dataset, labels, shape)
    except Exception as err:
        log.warning("job %d: %s not recorded: %s", claim.job_id, claim.dataset, err)
        return
    _RECORDED.add(claim.dataset)


def _show_identity(url: str, claim: store.Claim, identity: store.Identity) -> None:
    """Write the job's data digest, content objective hash and trace mode before it runs,
    so that its live trace meets its reference P* and shows how it is made; while the
    database is unavailable they are written with the job's end instead."""
    try:
        store.set_identity(url, claim, identity)
    except Exception as err:
        if not is_unavailable(err):
            raise
        log.warning("job %d: data digest kept for the job's end: %s", claim.job_id, brief(err))


def _solve(
    spec: JobSpec,
    problem: Problem,
    claim: store.Claim,
    settings: Settings,
    writer: TraceWriter,
    heldout: HeldOut | None = None,
) -> End:
    """Run the job's solver in a supervised child process (worker.runner): how it ended
    (the identity is the caller's to add). ``heldout``: the metrics each trace point gets
    (off the clock; the child reads the test set the parent built, not a copy)."""
    warmup(spec.solver)  # inherited from the main process: a no-op unless it was not
    # the canonical parameters the API checked: typed again, not checked again
    params = get_spec(spec.solver).load_params(spec.params)
    limits = spec.stop

    def run(
        send: Callable[[Any], None], should_stop: Callable[[], bool], record: np.ndarray
    ) -> tuple[str, float, np.ndarray]:
        stop = StopRules(
            max_epochs=limits.max_epochs,
            max_seconds=limits.max_seconds,
            tol=limits.tol,
            should_stop=should_stop,
        )
        hooks: dict[str, Any] = {"on_point": send, "shared": record, "observe": heldout}
        if spec.path is not None:  # one problem, its l1 replaced at each λ
            began = time.perf_counter()
            grid = spec.path
            path = solve_path(
                problem, spec.solver, grid.lambdas, params, stop, spec.solver_seed, **hooks,
                n_lambdas=grid.n_lambdas, ratio=grid.ratio,
            )  # fmt: skip
            return path.stop_reason, time.perf_counter() - began, path.x
        result = solve(problem, spec.solver, params, stop, spec.solver_seed, **hooks)
        return result.stop_reason, result.wall_s, result.x

    check = store.CancelCheck(settings.database_url, claim)
    outcome = runner.supervise(run, writer, check, limits.max_seconds)
    # the final iterate, if the run returned it (also when it was killed just after)
    x = None if outcome.x is None else store.Coefficients(outcome.x, problem.classes)
    if outcome.ended == "cancelled":
        return End(Event.HALT, STOP_CANCELLED, None, coefficients=x)
    if outcome.ended == "time_limit":
        error = (
            f"the solver did not stop at its time limit of {limits.max_seconds:g} s: its "
            f"process was killed after {outcome.budget:.1f} s (the limit plus half the "
            f"allowance of {overshoot(limits.max_seconds):g} s); the trace points "
            "recorded until then are kept"
        )
        return End(Event.FAIL, TIME_LIMIT, error, coefficients=x)
    if outcome.error is not None:
        if outcome.traceback:
            log.error("job %d: the solver raised\n%s", claim.job_id, outcome.traceback)
        return End(Event.FAIL, None, outcome.error[:ERROR_CHARS])
    reason = str(outcome.reason)  # a run that returned has one
    event, failure = _outcome(reason)
    return End(event, reason, failure, None, outcome.wall_s, x)


def _outcome(reason: str) -> tuple[Event, str | None]:
    """(the event that ends the run, error) of a run that stopped for ``reason``."""
    if reason == DIVERGED:
        return Event.FAIL, DIVERGED_ERROR
    if reason == STOP_CANCELLED:
        return Event.HALT, None
    return Event.SUCCEED, None


def _record_reference(url: str, job_id: int) -> None:
    """Offer the succeeded job's final point as the certified P* of its objective."""
    try:
        with session_scope(url) as session:
            job = session.get(Job, job_id)
            reference = None if job is None else record_reference(session, job)
    except Exception:
        log.exception("job %d: recording its reference optimum failed", job_id)
        return
    if reference is not None:
        log.info("job %d is the reference optimum of its objective", job_id)
