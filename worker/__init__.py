"""The Celery worker: runs solver jobs and streams their traces into the database.

Start it with the service's environment (``FACEOFF_DATABASE_URL``, ``FACEOFF_BROKER_URL``,
``FACEOFF_QUEUE``, ``FACEOFF_HOME``)::

    celery -A faceoff.worker.celery_app worker -Q $FACEOFF_QUEUE -c N --loglevel=info
    python -m faceoff.worker        # the same, N = $FACEOFF_WORKER_CONCURRENCY (default 1)

Use the prefork pool (the default): time limits need it. The worker reads its settings
when it starts, not when its modules are imported; it then sets Numba's cache folder and
warms up every solver in child processes, each within ``WARMUP_TIMEOUT_SECONDS``
(:mod:`faceoff.worker.warmup`): a solver whose warm-up fails, crashes or hangs is
unavailable on this worker, the others are served. The main process then loads the
kernels of the others from Numba's cache, so every pool process inherits them and no job
pays for JIT compilation.

Delivery and failures (:mod:`faceoff.worker.tasks`, :mod:`faceoff.worker.store`):

- A task is acknowledged when it ends (``acks_late``); every outcome, including a solver
  error, is written on the job and the task returns normally, so it is never retried.
- Each run happens in a child process of the pool process (:mod:`faceoff.worker.runner`),
  which streams its trace points, keeps its heartbeat and ends it for sure: at a cancel
  (0.75 s after asking it to stop: the job is ``cancelled``, its points kept), at
  ``core.queue.kill_after(max_seconds)`` of budget (``failed``, stop reason ``time_limit``),
  and a run killed by a signal fails its job naming the signal.
- Wall-time limits come with the task (:func:`faceoff.core.queue.enqueue` with the job's
  max_seconds; without them only the hard limit of ``MAX_JOB_SECONDS`` applies). The soft
  limit fails the job with "time limit exceeded"; the hard limit kills the pool process (and
  its run with it), and the main process then fails the job (``JobTask.on_failure``).
- A job is claimed by one atomic UPDATE of its status from queued to running, so any number
  of deliveries of its message run it once. A running job's worker refreshes its
  ``heartbeat_at`` every few seconds; the reaper in every worker's main process
  (:mod:`faceoff.worker.reaper`) requeues and re-sends a job silent for
  ``HEARTBEAT_TIMEOUT_SECONDS``
  (its pool process or its whole worker was killed), which then runs again from seq 0 (runs
  are deterministic by seed); the lost run writes nothing more. After ``store.MAX_ATTEMPTS``
  lost runs the job fails instead. The reaper also re-sends every queued job when Redis
  has restarted empty.
- While the database is unavailable the run goes on: trace points stay buffered and are
  written when it is back, heartbeats and cancel checks are skipped, and the claim and the
  job's end are retried for ``DB_RETRY_SECONDS``.
- Cancellation (``jobs.cancel_requested``) is read by the supervisor at most every 0.25 s;
  the run honours it between blocks of the solver's kernel, or is killed.
"""
