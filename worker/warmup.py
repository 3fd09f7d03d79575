"""Compile every catalogued solver's kernels before the worker takes jobs.

A solver whose warm-up fails (its module does not import, or its kernels do not compile)
is logged and recorded in :data:`UNAVAILABLE`; the worker starts anyway and fails that
solver's jobs with the reason. A peer whose distribution is not installed is recorded with
one line naming the distribution and how to install it (``faceoff-bench[peers]``). Peers are
warmed up like kernels: their imports and first calls are paid here, not by a job.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable

from faceoff.solvers.catalogue import catalogue
from faceoff.solvers.run import MissingPeer, warmup

log = logging.getLogger(__name__)

UNAVAILABLE: dict[str, str] = {}  # solver name → why its warm-up failed


def warm_up(names: Iterable[str] | None = None) -> dict[str, str]:
    """Run ``faceoff.solvers.run.warmup`` for ``names`` (default: the whole catalogue); returns the
    solvers that failed, with the reason."""
    started = time.perf_counter()
    for name in list(names or catalogue()):
        began = time.perf_counter()
        try:
            warmup(name)
        except MissingPeer as err:
            UNAVAILABLE[name] = str(err)
            log.warning("%s; its jobs will fail", err)
        except Exception as err:
            UNAVAILABLE[name] = f"{type(err).__name__}: {err}"
            log.exception("warm-up of solver %r failed; its jobs will fail", name)
        else:
            UNAVAILABLE.pop(name, None)
            log.info("warmed up solver %r in %.2f s", name, time.perf_counter() - began)
    log.info(
        "warm-up done in %.1f s; unavailable solvers: %s",
        time.perf_counter() - started,
        ", ".join(UNAVAILABLE) or "none",
    )
    return dict(UNAVAILABLE)


def check_available(solver: str) -> None:
    """Raise RuntimeError if ``solver`` failed its warm-up on this worker."""
    if solver in UNAVAILABLE:
        raise RuntimeError(
            f"solver {solver!r} is not available on this worker: its warm-up failed with "
            f"{UNAVAILABLE[solver]}"
        )
