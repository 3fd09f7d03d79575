"""Warm up every catalogued solver before the worker takes jobs, where a crash or a hang of
one cannot take the worker with it.

The warm-up (``faceoff.solvers.run.warmup``: imports, Numba compilation into the on-disk
cache, a peer's first calls) runs in a forked child process, one solver after the other,
each within ``WARMUP_TIMEOUT_SECONDS``. A solver whose warm-up raises, crashes its process
(a segfault: the signal is named) or runs out of time (its child is killed) is recorded in
:data:`UNAVAILABLE` with the reason, and a new child warms up the solvers after it (the
first of which then also pays for loading the kernels every solver shares); the
worker then starts and fails that solver's jobs with the reason (GET /solvers and
``faceoff solvers`` show it, from the worker's record in the broker: core.workers). A peer
whose distribution is not installed is recorded with one line naming the distribution and
how to install it (``faceoff-bench[peers]``).

The worker's main process then warms up the solvers that passed, loading what the children
compiled from Numba's on-disk cache (a peer: its defaults only, its library imported and
called once), so every pool process (and every run it forks) inherits them and no job pays
for them (a solver whose warm-up passed in its child is trusted to pass again).
"""

from __future__ import annotations

import logging
import os
import signal
import time
from collections.abc import Iterable
from multiprocessing.connection import Connection, Pipe

from faceoff.worker.runner import signal_name

log = logging.getLogger(__name__)

UNAVAILABLE: dict[str, str] = {}  # solver name → why its warm-up failed


def _warm_child(names: list[str], sender: Connection) -> None:
    """Warm up ``names`` in turn, saying when each starts and how it ended."""
    code = 0
    try:
        from faceoff.solvers.run import MissingPeer, warmup

        for name in names:
            sender.send(("start", name))
            try:
                warmup(name)
            except MissingPeer as err:
                sender.send(("missing", name, str(err)))
            except Exception as err:
                sender.send(("failed", name, f"{type(err).__name__}: {err}"))
            else:
                sender.send(("ok", name, ""))
        sender.close()
    except BaseException:
        code = 1
    finally:
        os._exit(code)


def _warm_in_child(names: list[str], timeout: float) -> tuple[dict[str, str], list[str]]:
    """Warm up ``names`` in one child until one of them crashes or times out: (name →
    failure reason, the names left to warm up after the one that took the child down)."""
    receiver, sender = Pipe(duplex=False)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child never returns
        receiver.close()
        _warm_child(names, sender)
    sender.close()
    failed: dict[str, str] = {}
    current: str | None = None
    began = time.monotonic()
    killed = False
    try:
        while True:
            if current is not None and time.monotonic() - began > timeout:
                os.kill(pid, signal.SIGKILL)
                failed[current] = f"its warm-up did not end within {timeout:g} s (killed)"
                log.error("solver %r is unavailable on this worker: %s", current, failed[current])
                killed = True
                break
            if not receiver.poll(0.1):
                continue
            try:
                message = receiver.recv()
            except (EOFError, OSError):
                break
            kind, name = message[0], message[1]
            if kind == "start":
                current, began = name, time.monotonic()
                continue
            current = None
            if kind == "ok":
                log.info("warmed up solver %r in %.2f s", name, time.monotonic() - began)
            elif kind == "missing":
                failed[name] = message[2]
                log.warning("%s; its jobs will fail", message[2])
            else:
                failed[name] = f"its warm-up failed: {message[2]}"
                log.error("solver %r is unavailable on this worker: %s", name, failed[name])
    finally:
        receiver.close()
        _, status = os.waitpid(pid, 0)
    if current is not None and not killed:
        if os.WIFSIGNALED(status):
            how = f"was killed by signal {signal_name(os.WTERMSIG(status))}"
        else:
            how = f"exited with code {os.waitstatus_to_exitcode(status)}"
        failed[current] = f"its warm-up crashed: the warm-up process {how}"
        log.error("solver %r is unavailable on this worker: %s", current, failed[current])
    left = names[names.index(current) + 1 :] if current is not None else []
    return failed, left


def _load_here(names: list[str]) -> None:
    """Warm up ``names``, whose warm-up a child has run, in this process too: their
    kernels load from Numba's cache, and the pool processes forked later inherit them. A
    peer, whose every choice the child ran, runs with its defaults only: its library is
    imported and called once (its other choices call the same compiled library)."""
    from faceoff.solvers.run import warmup

    for name in names:
        try:
            warmup(name, every_choice=False)
        except Exception as err:
            UNAVAILABLE[name] = f"its warm-up failed: {type(err).__name__}: {err}"
            log.error("solver %r is unavailable on this worker: %s", name, UNAVAILABLE[name])


def wanted(skip: str) -> list[str]:
    """The catalogue's solvers but those of ``skip`` (FACEOFF_WARMUP_SKIP, comma-separated;
    a name that is no solver is logged and ignored)."""
    from faceoff.solvers.catalogue import catalogue

    names = {name.strip() for name in skip.split(",") if name.strip()}
    unknown = sorted(names - set(catalogue()))
    if unknown:
        log.warning("FACEOFF_WARMUP_SKIP names no solver %s: ignored", ", ".join(unknown))
    if names & set(catalogue()):
        log.info("not warmed up at start (FACEOFF_WARMUP_SKIP): %s", ", ".join(sorted(names)))
    return [name for name in catalogue() if name not in names]


def warm_up(names: Iterable[str] | None = None, timeout: float | None = None) -> dict[str, str]:
    """Warm up ``names`` (default: the whole catalogue) in child processes, each within
    ``timeout`` seconds (default ``WARMUP_TIMEOUT_SECONDS``); returns the solvers that are
    unavailable here, with the reason (also kept in :data:`UNAVAILABLE`)."""
    from faceoff.core.settings import get_settings
    from faceoff.solvers.catalogue import catalogue

    timeout = get_settings().WARMUP_TIMEOUT_SECONDS if timeout is None else timeout
    started = time.monotonic()
    wanted = list(names or catalogue())
    left = list(wanted)
    for name in left:
        UNAVAILABLE.pop(name, None)
    while left:
        failed, left = _warm_in_child(left, timeout)
        UNAVAILABLE.update(failed)
    _load_here([name for name in wanted if name not in UNAVAILABLE])
    log.info(
        "warm-up done in %.1f s; unavailable solvers: %s",
        time.monotonic() - started,
        ", ".join(UNAVAILABLE) or "none",
    )
    return dict(UNAVAILABLE)


def check_available(solver: str, host: str) -> None:
    """Raise RuntimeError if ``solver`` is not in this worker's catalogue (a plug-in not
    installed here) or failed its warm-up on this worker (``host``)."""
    from faceoff import __version__
    from faceoff.solvers.catalogue import broken_plugins, catalogue

    if solver not in catalogue():
        broken = {plugin.name: plugin for plugin in broken_plugins()}
        if solver in broken:
            raise RuntimeError(
                f"broken plug-in {solver} on worker {host} "
                f"({broken[solver].distribution}): {broken[solver].error}"
            )
        raise RuntimeError(
            f"plug-in {solver} is not installed on worker {host} (faceoff {__version__}): "
            "install its distribution where the worker runs, then restart the worker"
        )
    if solver in UNAVAILABLE:
        reason = UNAVAILABLE[solver]
        raise RuntimeError(f"solver {solver!r} is not available on worker {host}: {reason}")
