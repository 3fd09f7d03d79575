"""Coordinate sampling for the randomized kernels: a seeded generator and Walker's alias table.

The generator (xorshift64*) lives in a one-element uint64 array that the kernels advance
in place, so a run is deterministic for a given seed however its work is split into chunks.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_MASK64 = (1 << 64) - 1


def make_rng_state(seed: int) -> np.ndarray:
    """A non-zero xorshift state derived from ``seed`` by splitmix64."""
    z = (int(seed) + 0x9E3779B97F4A7C15) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    z ^= z >> 31
    return np.array([z or 1], dtype=np.uint64)


@njit(cache=True)
def next_uniform(state):
    """A float in [0, 1) with 53 random bits; advances ``state``."""
    x = state[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    state[0] = x
    return float((x * np.uint64(2685821657736338717)) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


class AliasTable:
    """Walker's alias table for O(1) sampling from probabilities ``p`` (Vose's construction).

    ``uniform`` is set when p is uniform; kernels then skip the table.
    """

    def __init__(self, weights: np.ndarray) -> None:
        w = np.asarray(weights, dtype=np.float64)
        if w.ndim != 1 or w.size == 0 or np.any(w < 0) or not np.isfinite(w).all() or w.sum() <= 0:
            raise ValueError("sampling weights must be a non-empty vector of finite values >= 0")
        n = w.size
        self.probabilities = w / w.sum()
        self.uniform = bool(np.all(w == w[0]))
        scaled = self.probabilities * n
        prob = np.ones(n)
        alias = np.arange(n, dtype=np.int64)
        small = [i for i in range(n) if scaled[i] < 1.0]
        large = [i for i in range(n) if scaled[i] >= 1.0]
        while small and large:
            s, g = small.pop(), large.pop()
            prob[s] = scaled[s]
            alias[s] = g
            scaled[g] = scaled[g] + scaled[s] - 1.0
            (small if scaled[g] < 1.0 else large).append(g)
        self.prob = prob
        self.alias = alias

    @classmethod
    def uniform_over(cls, n: int) -> AliasTable:
        return cls(np.ones(n))


@njit(cache=True)
def sample_index(state, uniform, prob, alias):
    """Draw a coordinate: uniform over len(prob), or from the alias table."""
    n = prob.shape[0]
    u = next_uniform(state) * n
    i = int(u)
    if i >= n:
        i = n - 1
    if uniform:
        return i
    if u - i < prob[i]:
        return i
    return alias[i]


LOOKAHEAD = 8  # draws kept ahead of the current step, for prefetching


class Sampler:
    """A seeded coordinate sampler that draws ``LOOKAHEAD`` steps ahead.

    Kernels call :func:`next_coordinate` with ``(rng_state, ring, uniform, prob, alias)``;
    it returns the coordinate for this step, the one ``LOOKAHEAD`` steps ahead and the one
    half-way, so a kernel can prefetch. The ring lives here, so the sequence of
    coordinates does not depend on how a run is split into chunks.
    """

    def __init__(self, weights: np.ndarray, seed: int) -> None:
        self.table = AliasTable(weights)
        self.rng_state = make_rng_state(seed)
        self.ring = np.zeros(LOOKAHEAD + 1, dtype=np.int64)  # ring[0]: cursor
        _fill_ring(self.rng_state, self.ring, self.table.uniform, self.table.prob, self.table.alias)

    @property
    def probabilities(self) -> np.ndarray:
        return self.table.probabilities

    def args(self) -> tuple:
        """The arguments kernels pass on to :func:`next_coordinate`."""
        t = self.table
        return self.rng_state, self.ring, t.uniform, t.prob, t.alias


@njit(cache=True)
def _fill_ring(state, ring, uniform, prob, alias):
    ring[0] = 0
    for k in range(1, ring.shape[0]):
        ring[k] = sample_index(state, uniform, prob, alias)


@njit(cache=True)
def next_coordinate(state, ring, uniform, prob, alias):
    """(current, LOOKAHEAD ahead, LOOKAHEAD/2 ahead) coordinates; advances the ring."""
    size = ring.shape[0] - 1
    slot = ring[0]
    current = ring[1 + slot]
    ahead = sample_index(state, uniform, prob, alias)
    ring[1 + slot] = ahead
    slot = slot + 1
    if slot == size:
        slot = 0
    ring[0] = slot
    half = slot + size // 2
    if half >= size:
        half -= size
    return current, ahead, ring[1 + half]
