"""The Celery worker: runs solver jobs and streams their traces into the database.

Start it with the service's environment (``FACEOFF_DATABASE_URL``, ``FACEOFF_BROKER_URL``,
``FACEOFF_QUEUE``, ``FACEOFF_HOME``)::

    celery -A worker.celery_app worker -Q $FACEOFF_QUEUE -c N --loglevel=info
    python -m worker        # the same, N = $FACEOFF_WORKER_CONCURRENCY (default 1)

Use the prefork pool (the default): time limits need it. At start the worker compiles every
solver's kernels (:mod:`worker.warmup`), so no job pays for JIT compilation.

Delivery and failures (:mod:`worker.tasks`, :mod:`worker.store`):

- A task is acknowledged when it ends (``acks_late``); every outcome, including a solver
  error, is written on the job and the task returns normally, so it is never retried.
- Time limits come with the task (:func:`core.queue.enqueue` with the job's max_seconds;
  without them only the hard limit of ``MAX_JOB_SECONDS`` applies). The soft limit raises
  in the run, which fails the job with "time limit exceeded"; the hard limit kills the pool
  process, and the main process then fails the job (``JobTask.on_failure``).
- A pool process lost otherwise (killed, out of memory) has its task requeued
  (``reject_on_worker_lost``); the redelivered run deletes the earlier trace points and runs
  again from seq 0 (runs are deterministic by seed). After ``store.MAX_ATTEMPTS`` lost
  runs the job fails instead. Redis redelivers a task whose worker vanished without
  requeueing it (the whole worker killed) after the visibility timeout, set longer than
  the longest job.
- Cancellation (``jobs.cancel_requested``) is read at most every 0.25 s and honoured
  between blocks of the solver's kernel.
"""
