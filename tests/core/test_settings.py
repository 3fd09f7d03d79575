"""FACEOFF_MAX_NNZ: set in the environment, or sized from the machine's memory."""

from __future__ import annotations

from pathlib import Path

import pytest

from faceoff.core.settings import (
    BASELINE_BYTES,
    JOB_BYTES_PER_NNZ,
    MIN_MAX_NNZ,
    GiB,
    Settings,
    default_max_nnz,
    memory_bytes,
)


def test_the_environment_sets_the_cap(monkeypatch):
    monkeypatch.setenv("FACEOFF_MAX_NNZ", "123456")
    assert Settings().MAX_NNZ == 123456


def test_the_default_is_sized_from_memory_and_concurrency(monkeypatch):
    monkeypatch.delenv("FACEOFF_MAX_NNZ", raising=False)
    monkeypatch.delenv("FACEOFF_WORKER_CONCURRENCY", raising=False)
    assert Settings().MAX_NNZ == default_max_nnz(memory_bytes())
    monkeypatch.setenv("FACEOFF_WORKER_CONCURRENCY", "2")
    assert Settings().MAX_NNZ == default_max_nnz(memory_bytes(), jobs=2)
    # 24 GiB, one job: 23 GiB for the data at 64 bytes a non-zero
    assert default_max_nnz(24 * GiB) == 23 * GiB // 64 == 385_875_968
    assert default_max_nnz(24 * GiB, jobs=4) == 23 * GiB // (4 * 64)
    assert default_max_nnz(512 * 1024**2) == MIN_MAX_NNZ  # a tiny machine: a floor
    assert default_max_nnz(None) == 2**29  # memory unknown: the former constant
    assert (BASELINE_BYTES, JOB_BYTES_PER_NNZ) == (GiB, 64)


def test_memory_is_at_most_the_machines():
    meminfo = Path("/proc/meminfo")
    if not meminfo.exists():
        pytest.skip("no /proc/meminfo")
    total_kib = next(
        int(line.split()[1]) for line in meminfo.read_text().splitlines() if "MemTotal" in line
    )
    found = memory_bytes()
    assert found is not None
    assert 0 < found <= total_kib * 1024 * 1.01  # RAM, or a lower cgroup limit
