"""The coordinate sampler: uniform, importance (alias table) and permutation modes."""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from faceoff.solvers.sampling import Sampler, next_coordinate


@njit
def _draws(sampler, count):
    out = np.empty(count, np.int64)
    draws = sampler.ring[0]
    for k in range(count):
        out[k] = next_coordinate(sampler, draws)[0]
        draws += 1
    sampler.ring[0] = draws
    return out


def draw(sampler: Sampler, count: int) -> np.ndarray:
    return _draws(sampler.state, count)


def test_permutation_visits_every_coordinate_once_per_epoch():
    n = 37
    sampler = Sampler(n, "permutation", seed=1)
    seen = draw(sampler, 5 * n)
    for epoch in range(5):
        assert sorted(seen[epoch * n : (epoch + 1) * n]) == list(range(n))
    assert list(seen[:n]) != list(seen[n : 2 * n])  # a fresh order each epoch


@pytest.mark.parametrize("mode", ["uniform", "importance"])
def test_frequencies_match_probabilities(mode):
    n, count = 20, 400_000
    weights = np.arange(1, n + 1, dtype=float) ** 2 if mode == "importance" else None
    sampler = Sampler(n, mode, seed=2, weights=weights)
    freq = np.bincount(draw(sampler, count), minlength=n) / count
    p = sampler.probabilities
    # 5 standard deviations of a binomial proportion
    assert np.all(np.abs(freq - p) <= 5 * np.sqrt(p * (1 - p) / count))


def test_sequence_does_not_depend_on_chunking():
    one, many = (Sampler(100, "importance", 3, np.linspace(1, 5, 100)) for _ in range(2))
    whole = draw(one, 1000)
    parts = np.concatenate([draw(many, k) for k in (1, 9, 90, 400, 500)])
    np.testing.assert_array_equal(whole, parts)


def test_bad_weights():
    with pytest.raises(ValueError, match="importance weights"):
        Sampler(3, "importance", 0, np.array([1.0, -1.0, 1.0]))
