"""``python -m faceoff.worker [celery worker options]``: the worker on ``$FACEOFF_QUEUE`` with
``$FACEOFF_WORKER_CONCURRENCY`` pool processes (default 1), logging at info."""

from __future__ import annotations

import os
import sys

from faceoff.worker.celery_app import celery_app


def main(argv: list[str] | None = None) -> None:
    celery_app.worker_main(
        [
            "worker",
            "-Q",
            celery_app.conf.task_default_queue,
            "-c",
            os.environ.get("FACEOFF_WORKER_CONCURRENCY", "1"),
            "--loglevel=info",
            *(sys.argv[1:] if argv is None else argv),
        ]
    )


if __name__ == "__main__":
    main()
