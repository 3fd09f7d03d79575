"""data.cache.built_matrix: a built matrix is stored once per machine and read back
checked — a damaged file is rebuilt, never trusted, and concurrent builders neither build
twice nor leave a partial file."""

from __future__ import annotations

import multiprocessing
import os
import time
from contextlib import nullcontext
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from faceoff.data import cache as data_cache
from faceoff.data.cache import BUILT, built_matrix

KEY = "features-binning-0123abcd"


def _matrix(seed: int = 0) -> tuple[sp.csr_matrix, np.ndarray]:
    rng = np.random.default_rng(seed)
    A = sp.random(300, 2000, density=0.05, format="csr", random_state=rng)
    return A, rng.integers(0, 5, 300).astype(np.float64)


class Builder:
    """``build`` for built_matrix that counts its calls."""

    def __init__(self, seed: int = 0) -> None:
        self.calls = 0
        self.seed = seed

    def __call__(self) -> tuple[sp.csr_matrix, np.ndarray]:
        self.calls += 1
        return _matrix(self.seed)


def _same(got: tuple[sp.csr_matrix, np.ndarray], want: tuple[sp.csr_matrix, np.ndarray]):
    assert got[0].shape == want[0].shape
    assert (got[0] != want[0]).nnz == 0
    np.testing.assert_array_equal(got[1], want[1])


def test_built_once_then_read(tmp_path):
    build = Builder()
    first = built_matrix(KEY, build, cache=tmp_path)
    second = built_matrix(KEY, build, cache=tmp_path)
    assert build.calls == 1
    _same(first, _matrix())
    _same(second, _matrix())
    assert (tmp_path / BUILT / f"{KEY}.npz").is_file()
    assert sorted(p.name for p in (tmp_path / BUILT).iterdir()) == [f".{KEY}.lock", f"{KEY}.npz"]


def _flip_middle(path: Path) -> None:
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    path.write_bytes(bytes(raw))


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size * 2 // 3])


def _empty(path: Path) -> None:
    path.write_bytes(b"")


def _other_key(path: Path) -> None:  # a file of another key, renamed
    built_matrix("other", Builder(seed=1), cache=path.parent.parent)
    os.replace(path.parent / "other.npz", path)


@pytest.mark.parametrize("damage", [_flip_middle, _truncate, _empty, _other_key])
def test_a_damaged_file_is_rebuilt_not_trusted(tmp_path, damage, caplog):
    build = Builder()
    built_matrix(KEY, build, cache=tmp_path)
    path = tmp_path / BUILT / f"{KEY}.npz"
    damage(path)
    _same(built_matrix(KEY, build, cache=tmp_path), _matrix())
    assert build.calls == 2
    assert "rebuilding" in caplog.text and str(path) in caplog.text
    _same(built_matrix(KEY, build, cache=tmp_path), _matrix())  # the file is whole again
    assert build.calls == 2


@pytest.mark.parametrize("key", ["", "../up", "a/b", ".hidden"])
def test_keys_are_plain_file_names(tmp_path, key):
    with pytest.raises(ValueError, match="plain file name"):
        built_matrix(key, Builder(), cache=tmp_path)


def _build_slowly(cache: str, marks: str, lock: bool, seconds: float) -> None:
    """A process's call: its build leaves a file in ``marks`` and takes ``seconds``."""

    def build():
        Path(marks, f"{os.getpid()}-{time.monotonic_ns()}").touch()
        time.sleep(seconds)
        return _matrix()

    if not lock:
        data_cache._exclusive = lambda _: nullcontext()  # this child only
    A, b = built_matrix(KEY, build, cache=Path(cache))
    _same((A, b), _matrix())


def _processes(tmp_path: Path, lock: bool, count: int = 4) -> list[multiprocessing.Process]:
    context = multiprocessing.get_context("fork")
    marks = tmp_path / "marks"
    marks.mkdir(exist_ok=True)
    args = (str(tmp_path / "cache"), str(marks), lock)
    # builds of different lengths: the later writers replace a file readers already read
    return [
        context.Process(target=_build_slowly, args=(*args, 0.3 * (1 + i))) for i in range(count)
    ]


def _run(processes: list[multiprocessing.Process]) -> None:
    for p in processes:
        p.start()
    for p in processes:
        p.join(60)
        assert p.exitcode == 0


def test_concurrent_callers_build_once(tmp_path):
    _run(_processes(tmp_path, lock=True))
    assert len(list((tmp_path / "marks").iterdir())) == 1
    _same(built_matrix(KEY, Builder(), cache=tmp_path / "cache"), _matrix())


def test_concurrent_writers_never_leave_a_partial_file(tmp_path):
    """Without the lock every process builds and writes; a reader polling meanwhile sees
    no file or a whole one, and the one left is whole."""
    processes = _processes(tmp_path, lock=False, count=3)
    path = tmp_path / "cache" / BUILT / f"{KEY}.npz"
    seen = []
    for p in processes:
        p.start()
    while any(p.is_alive() for p in processes):
        found = data_cache._read_built(path, KEY)
        seen.append(found is not None)
        if found is not None:
            _same(found, _matrix())
    for p in processes:
        p.join(60)
        assert p.exitcode == 0
    assert len(list((tmp_path / "marks").iterdir())) == 3
    assert any(seen)  # the reader did see the file while writers ran
    _same(data_cache._read_built(path, KEY), _matrix())
    assert [p.name for p in path.parent.iterdir() if p.name.endswith(".npz")] == [path.name]
