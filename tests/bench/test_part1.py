"""bench.run_part1's search of our epoch to the target, as a refit peer's budget is searched."""

import math

from bench.run_part1 import PEER_RESOLUTION, narrow_epoch


def _runs(crossing: float, step: float = 0.0):
    """A deterministic solver that reaches the target from epoch ``crossing`` on and stops at
    the first multiple of ``step`` at or past the epoch asked for (0: exactly there)."""
    asked: list[float] = []

    def reaches(epoch: float) -> tuple[float, bool]:
        asked.append(epoch)
        ended = math.ceil(epoch / step) * step if step else epoch
        return ended, ended >= crossing

    return reaches, asked


def test_the_epoch_is_narrowed_to_the_peers_resolution_and_always_reaches():
    reaches, asked = _runs(553.3)
    end = narrow_epoch(reaches, 553.0 / 1.08, 598.0)  # two trace points ~8% apart
    assert 553.3 <= end <= 553.3 * (1 + PEER_RESOLUTION)
    assert 2 <= len(asked) <= 3  # bisection: a few runs, each to a new epoch
    reaches, asked = _runs(590.0, step=1.0)
    end = narrow_epoch(reaches, 553.7, 598.0)
    assert end >= 590.0 and end - 590.0 <= PEER_RESOLUTION * end


def test_a_bracket_already_within_one_epoch_or_the_resolution_runs_nothing():
    for lo, hi in ((5.4, 6.0), (582.0, 598.0)):
        reaches, asked = _runs(lo + 0.1)
        assert narrow_epoch(reaches, lo, hi) == hi and asked == []


def test_a_solver_that_only_stops_at_the_hit_ends_the_search():
    reaches, asked = _runs(550.0, step=598.0)  # every run goes on to 598
    assert narrow_epoch(reaches, 553.0, 598.0) == 598.0 and len(asked) == 1
