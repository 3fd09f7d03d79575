"""Downloads against a real HTTP server on 127.0.0.1: checksums, retries of an interrupted
transfer (resumed with Range, or restarted), corrupted files never cached, and the one
error when a dataset is neither in the mirror nor downloadable (DatasetUnavailableError,
which the tests' own datasets skip on; a wrong file is a plain DatasetError)."""

from __future__ import annotations

import bz2
import hashlib
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from faceoff.data import cache as data_cache
from faceoff.data.cache import load_dataset
from faceoff.data.fetch import dataset_path, locate
from faceoff.data.registry import DatasetError, DatasetSpec, DatasetUnavailableError, Source

N_SAMPLES, N_FEATURES = 60, 12


def svmlight_bz2() -> tuple[bytes, int]:
    """A small seeded svmlight file, bzip2-compressed, and its nnz."""
    rng = np.random.default_rng(0)
    lines, nnz = [], 0
    for i in range(N_SAMPLES):
        cols = np.sort(rng.choice(N_FEATURES, size=1 + i % 5, replace=False)) + 1
        nnz += len(cols)
        features = " ".join(f"{j}:{rng.normal():.6g}" for j in cols)
        lines.append(f"{1 if i % 3 else -1} {features}\n")
    # level 1 and unique random values: the compressed file is a few kB
    return bz2.compress("".join(lines).encode(), 1), nnz


PAYLOAD, NNZ = svmlight_bz2()
SHA = hashlib.sha256(PAYLOAD).hexdigest()


class Handler(BaseHTTPRequestHandler):
    """Serves PAYLOAD at every path. ``/flaky/...``: the first request gets the full
    Content-Length but only half the bytes before the connection closes. ``/norange/...``:
    Range headers are ignored (200 with the whole body). ``/missing/...``: 404."""

    requests: list[tuple[str, str | None]] = []

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:
        range_header = self.headers.get("Range")
        self.requests.append((self.path, range_header))
        if self.path.startswith("/missing/"):
            self.send_error(404)
            return
        first = sum(p == self.path for p, _ in self.requests) == 1
        body, status = PAYLOAD, 200
        if range_header and not self.path.startswith("/norange/"):
            start = int(range_header.removeprefix("bytes=").rstrip("-"))
            body, status = PAYLOAD[start:], 206
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        if status == 206:
            start = len(PAYLOAD) - len(body)
            self.send_header("Content-Range", f"bytes {start}-{len(PAYLOAD) - 1}/{len(PAYLOAD)}")
        self.end_headers()
        if "/flaky" in self.path and first:
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(body)


@pytest.fixture(scope="module")
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(autouse=True)
def fresh():
    Handler.requests.clear()
    data_cache.clear_memory()
    yield
    data_cache.clear_memory()


def tiny(url: str | None, sha256: str | None = SHA) -> dict[str, DatasetSpec]:
    source = Source("tiny.bz2", sha256, url)
    return {"tiny": DatasetSpec("tiny", "binary", (source,), N_SAMPLES, N_FEATURES, NNZ)}


def folders(tmp_path: Path) -> dict:
    return {"mirror": tmp_path / "mirror", "cache": tmp_path / "cache", "progress": False}


def cache_files(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in (tmp_path / "cache").glob("*") if p.is_file())


def test_download_is_verified_cached_and_parsed(server, tmp_path):
    where = folders(tmp_path)
    A, b, spec = load_dataset("tiny", registry=tiny(f"{server}/tiny.bz2"), **where)
    assert A.shape == (N_SAMPLES, N_FEATURES) and A.nnz == NNZ
    assert set(np.unique(b)) == {-1.0, 1.0}
    assert (tmp_path / "cache" / "tiny.bz2").read_bytes() == PAYLOAD
    assert cache_files(tmp_path) == ["tiny.bz2"]  # no temporary file left, no sidecar
    # from the cache now: no second request
    found = locate(spec, mirror=where["mirror"], cache=where["cache"], progress=False)
    assert found.origin == "cache" and found.sha256 == SHA
    assert len(Handler.requests) == 1


def test_the_progress_bar_does_not_break_the_download(server, tmp_path, capsys):
    path = dataset_path(
        "tiny",
        registry=tiny(f"{server}/tiny.bz2"),
        mirror=tmp_path / "mirror",
        cache=tmp_path / "cache",
    )
    assert path.read_bytes() == PAYLOAD
    assert capsys.readouterr().out == ""


def test_interrupted_download_resumes_with_range(server, tmp_path):
    path = dataset_path("tiny", registry=tiny(f"{server}/flaky/tiny.bz2"), **folders(tmp_path))
    assert path.read_bytes() == PAYLOAD
    assert len(Handler.requests) == 2
    assert Handler.requests[0][1] is None
    assert Handler.requests[1][1] == f"bytes={len(PAYLOAD) // 2}-"


def test_interrupted_download_restarts_when_range_is_ignored(server, tmp_path):
    url = f"{server}/norange/flaky/tiny.bz2"
    path = dataset_path("tiny", registry=tiny(url), **folders(tmp_path))
    assert path.read_bytes() == PAYLOAD
    assert len(Handler.requests) == 2


def test_wrong_sha256_is_rejected_and_nothing_is_cached(server, tmp_path):
    registry = tiny(f"{server}/tiny.bz2", sha256="0" * 64)
    expected = f"sha256 {SHA}, expected 0{{64}}.*nothing was cached"
    with pytest.raises(DatasetError, match=expected) as refused:
        dataset_path("tiny", registry=registry, **folders(tmp_path))
    assert not isinstance(refused.value, DatasetUnavailableError)  # the wrong file, not offline
    assert cache_files(tmp_path) == []


def test_unknown_sha256_is_recorded_then_enforced(server, tmp_path):
    where = folders(tmp_path)
    path = dataset_path("tiny", registry=tiny(f"{server}/tiny.bz2", sha256=None), **where)
    assert (tmp_path / "cache" / "tiny.bz2.sha256").read_text().strip() == SHA
    path.write_bytes(PAYLOAD[:-1])  # the cached file gets corrupted
    with pytest.raises(DatasetError, match="corrupted"):
        dataset_path("tiny", registry=tiny(f"{server}/tiny.bz2", sha256=None), **where)


def test_mirror_comes_first_and_is_verified(tmp_path):
    where = folders(tmp_path)
    where["mirror"].mkdir()
    (where["mirror"] / "tiny.bz2").write_bytes(PAYLOAD)
    assert dataset_path("tiny", registry=tiny(None), **where) == where["mirror"] / "tiny.bz2"
    (where["mirror"] / "tiny.bz2").write_bytes(PAYLOAD + b"x")
    with pytest.raises(DatasetError, match="mirror file of dataset 'tiny'.*expected"):
        dataset_path("tiny", registry=tiny(None), **where)


def test_fetch_copies_a_mirror_file_into_the_cache(tmp_path):
    where = folders(tmp_path)
    where["mirror"].mkdir()
    (where["mirror"] / "tiny.bz2").write_bytes(PAYLOAD)
    spec = tiny(None)["tiny"]
    found = locate(spec, mirror=where["mirror"], cache=where["cache"], copy_to_cache=True)
    assert found.path == where["cache"] / "tiny.bz2" and found.path.read_bytes() == PAYLOAD


def test_shape_different_from_the_registry_is_an_error(server, tmp_path):
    spec = DatasetSpec("tiny", "binary", (Source("tiny.bz2", SHA, f"{server}/t.bz2"),), 61, 12)
    with pytest.raises(DatasetError, match="parsed to 60 x 12.*expected 61 x 12"):
        load_dataset("tiny", registry={"tiny": spec}, **folders(tmp_path))
    assert not (tmp_path / "cache" / "parsed").exists() or not any(
        (tmp_path / "cache" / "parsed").iterdir()
    )


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_no_mirror_and_no_server_is_one_clear_error(tmp_path):
    url = f"http://127.0.0.1:{closed_port()}/tiny.bz2"
    where = folders(tmp_path)
    with pytest.raises(DatasetUnavailableError) as err:
        dataset_path("tiny", registry=tiny(url), **where)
    message = str(err.value)
    assert url in message and str(where["mirror"]) in message
    assert "3 attempts" in message
    assert cache_files(tmp_path) == []


def test_mirror_only_file_missing_names_the_mirror_folder(tmp_path):
    where = folders(tmp_path)
    with pytest.raises(
        DatasetUnavailableError, match=f"not in the mirror folder {where['mirror']}"
    ):
        dataset_path("tiny", registry=tiny(None), **where)


def test_http_404_is_not_retried(server, tmp_path):
    url = f"{server}/missing/tiny.bz2"
    with pytest.raises(DatasetUnavailableError, match=f"download from {url} failed: HTTP 404"):
        dataset_path("tiny", registry=tiny(url), **folders(tmp_path))
    assert len(Handler.requests) == 1
    assert cache_files(tmp_path) == []
