"""The chunked driver: run a jitted kernel in chunks on a log-spaced epoch grid.

Between chunks the :class:`~solvers.trace.Recorder` stops the clock, evaluates and records
a trace point and checks the stop rules. Chunks end on a geometric grid of epochs
(``points_per_decade`` points per decade, so a run records about 100–1000 points; a point
whose evaluation would take too large a share of the work is skipped, ``Recorder.due``), and
a chunk is itself cut into blocks of at most ~``block_seconds`` of solver time so that
``max_seconds`` and ``should_stop()`` are honoured within one block.
"""

from __future__ import annotations

import math
import time
from typing import Protocol

import numpy as np

from faceoff.solvers.trace import Recorder

COARSE_POINTS_PER_DECADE = 10  # grid points always evaluated (Recorder.due): 30 in 3 decades
# a batch method (one update is a full iteration: an epoch or more, so its grid is coarse
# already) has every point of its grid evaluated until it has this many
MIN_POINTS = 30


class ChunkedMethod(Protocol):
    """What the driver needs from an iterative method.

    ``n_coords`` coordinates make one coordinate epoch (n for dual methods, d for primal
    ones, 1 for batch methods whose "update" is a full iteration); ``nnz_per_update`` is
    the expected number of non-zeros one update visits, used only to size chunks.
    """

    n_coords: int
    nnz_per_update: float

    def run(self, n_updates: int) -> int:
        """Do ``n_updates`` updates in place; return the non-zeros visited."""

    def iterate(self) -> dict:
        """The current iterate: ``{"x": ...}`` for primal methods, ``{"y": ...}`` for dual
        ones, with ``"x"`` too if they keep x = ∇g*(−Aᵀy/n) (a point then costs one pass
        over the data, not two)."""

    def extras(self) -> dict:
        """Solver-specific values for the trace point."""


class _HasX(Protocol):
    @property
    def x(self) -> np.ndarray: ...


class PrimalMethod:
    """Default :class:`ChunkedMethod` parts for methods that iterate on x (an attribute or a
    property ``x``)."""

    def iterate(self: _HasX) -> dict:
        return {"x": self.x}

    def extras(self) -> dict:
        return {}


def run_chunked(
    method: ChunkedMethod,
    recorder: Recorder,
    nnz: int,
    points_per_decade: int = 30,
    first_epoch: float = 0.01,
    block_seconds: float = 0.25,
) -> str:
    """Run ``method`` until a stop rule fires; returns the stop reason.

    Parameters
    ----------
    method : ChunkedMethod
    recorder : Recorder
    nnz : int
        nnz(A); epochs are non-zeros visited / nnz.
    """
    ratio = 10.0 ** (1.0 / points_per_decade)
    coarse_every = max(1, round(points_per_decade / COARSE_POINTS_PER_DECADE))
    batch = method.n_coords == 1  # an update is a full iteration
    nnz = max(int(nnz), 1)
    max_visits = recorder.stop.max_epochs * nnz
    per_update = max(float(method.nnz_per_update), 1e-12)
    iteration = 0
    visited = 0
    seconds_per_update = None

    def extras() -> dict:
        return {"coord_epochs": iteration / method.n_coords, **method.extras()}

    reason = recorder.checkpoint(0, 0.0, **method.iterate(), extras=extras())
    next_epoch = first_epoch
    grid_index = 0  # of next_epoch on the grid
    while reason is None:
        goal = min(next_epoch * nnz, max_visits)
        todo = max(1, math.ceil((goal - visited) / per_update))
        stopped = None  # a stop reason that needs no evaluation (Recorder.interrupted)
        while todo > 0:
            block = todo
            if seconds_per_update is not None:
                remaining = recorder.stop.max_seconds - recorder.elapsed()
                budget = max(min(block_seconds, remaining), 0.0)
                block = int(min(todo, max(1, budget / seconds_per_update)))
            started = time.perf_counter()
            visited += method.run(block)
            spent = time.perf_counter() - started
            seconds_per_update = max(spent / block, 1e-10)
            iteration += block
            todo -= block
            stopped = recorder.interrupted()
            if stopped is not None:
                break
        epoch = visited / nnz
        # a point on the grid, unless evaluating it would take too large a share of the time
        # (Recorder.due); the point a stop rule needs always
        final = visited >= max_visits * (1 - 1e-12) or stopped is not None
        coarse = grid_index % coarse_every == 0 or (batch and len(recorder.points) < MIN_POINTS)
        if final or recorder.due(epoch, coarse):
            reason = recorder.checkpoint(iteration, epoch, **method.iterate(), extras=extras())
        # the grid advances from the goal even when a chunk visited fewer non-zeros than
        # planned (sampled coordinates without any): one trace point per decade fraction,
        # never one per step
        next_epoch = max(epoch, next_epoch) * ratio
        grid_index += 1
    return reason
