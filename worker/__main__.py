"""``python -m faceoff.worker [celery worker options]``: the worker on ``$FACEOFF_QUEUE`` with
``$FACEOFF_WORKER_CONCURRENCY`` pool processes (default 1), logging at info."""

from __future__ import annotations

import sys

from faceoff.core.settings import get_settings
from faceoff.worker.celery_app import celery_app


def main(argv: list[str] | None = None) -> None:
    settings = get_settings()
    celery_app.worker_main(
        [
            "worker",
            "-Q",
            settings.QUEUE,
            "-c",
            str(settings.WORKER_CONCURRENCY),
            "--loglevel=info",
            *(sys.argv[1:] if argv is None else argv),
        ]
    )


if __name__ == "__main__":
    main()
