"""Whether a registry dataset's file can be had, decided before anything is registered
(data.fetch.availability): in the mirror, in the cache, or downloadable — its URL answering
a real HTTP server on 127.0.0.1 within a short timeout — and otherwise an error naming the
dataset, where it looked and how to provide the file."""

from __future__ import annotations

import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from faceoff.data.fetch import availability, reachable
from faceoff.data.registry import DatasetError, DatasetSpec, Source


class _Answer(BaseHTTPRequestHandler):
    def do_HEAD(self):  # noqa: N802 - http.server's name
        self.send_response(200 if self.path == "/there.svm" else 404)
        self.end_headers()

    def log_message(self, *_args):
        pass


@pytest.fixture
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Answer)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def spec(url: str | None) -> DatasetSpec:
    source = Source(file="there.svm", url=url)
    return DatasetSpec("there", "binary", (source,), n_samples=10, n_features=3)


def test_a_file_here_is_found_without_the_network(tmp_path):
    mirror, cache = tmp_path / "mirror", tmp_path / "cache"
    mirror.mkdir()
    cache.mkdir()
    offline = spec(f"http://127.0.0.1:{closed_port()}/there.svm")
    (cache / "there.svm").write_text("1 1:1\n")
    assert availability(offline, mirror=mirror, cache=cache) == "cached"
    (mirror / "there.svm").write_text("1 1:1\n")
    assert availability(offline, mirror=mirror, cache=cache) == "mirror"


def test_a_file_elsewhere_is_downloadable_when_its_url_answers(server, tmp_path):
    assert reachable(f"{server}/there.svm") is None
    assert reachable(f"{server}/gone.svm") == "HTTP 404 Not Found"
    found = availability(spec(f"{server}/there.svm"), mirror=tmp_path, cache=tmp_path)
    assert found == "download"


@pytest.mark.parametrize("url", ["closed", "404", None])
def test_a_file_nowhere_to_be_had_is_refused_saying_how_to_provide_it(url, server, tmp_path):
    address = {
        "closed": f"http://127.0.0.1:{closed_port()}/there.svm",
        "404": f"{server}/gone.svm",
        None: None,
    }[url]
    started = time.monotonic()
    with pytest.raises(DatasetError) as refused:
        availability(spec(address), mirror=tmp_path / "m", cache=tmp_path / "c", timeout=2)
    assert time.monotonic() - started < 5  # a short timeout, never a download
    message = str(refused.value)
    assert message.startswith(
        f"dataset 'there' is not in the mirror folder {tmp_path / 'm'} nor in the cache "
        f"folder {tmp_path / 'c'}, and "
    )
    if url is None:
        assert "it has no download URL" in message
    else:
        assert f"its download URL {address} cannot be reached from here (" in message
        assert "; 2 s timeout)" in message
    assert "put there.svm in the mirror folder (FACEOFF_DATA_MIRROR)" in message
    assert "`faceoff datasets fetch there`" in message and "faceoff datasets upload" in message
