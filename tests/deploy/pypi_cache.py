"""A caching PyPI index on loopback for the image builds of the deploy tests.

``docker build --network host`` gives the build this machine's network namespace, so pip in
the build reaches ``http://127.0.0.1:PORT/simple/`` (the Dockerfile's ``PIP_INDEX_URL``
argument). Under the cache folder:

* ``simple/NAME.html``: PyPI's index page of a project, fetched again once it is older than
  ``PAGE_TTL`` (and used as it is when PyPI does not answer);
* ``files/...``: the files the pages link to (wheels, sdists, their ``.metadata``),
  downloaded once and served from disk afterwards;
* the ``built`` folder given to ``pypi_cache``: wheels compiled here from a project's sdist
  (images.py builds lightning's), listed in that project's page beside PyPI's files, so pip
  takes them instead of compiling the sdist again.

PyPI is reached with this machine's certificate store (a build container would need it too
behind a TLS-intercepting proxy)."""

from __future__ import annotations

import hashlib
import html
import os
import re
import shutil
import ssl
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

UPSTREAM_INDEX = "https://pypi.org/simple/"
UPSTREAM_FILES = "https://files.pythonhosted.org/"
DEFAULT_PORT = int(os.environ.get("FACEOFF_PYPI_CACHE_PORT", "3141"))  # devpi's usual port
PAGE_TTL = 24 * 3600.0
_NAME = re.compile(r"^[A-Za-z0-9._-]+$")
_FILE = re.compile(r"^[A-Za-z0-9._/+-]+$")


def normalize(name: str) -> str:
    """A project name as PEP 503 spells it in index URLs."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _ssl_context() -> ssl.SSLContext:
    cafile = os.environ.get("SSL_CERT_FILE") or "/etc/ssl/certs/ca-certificates.crt"
    return ssl.create_default_context(cafile=cafile if Path(cafile).exists() else None)


class _Handler(BaseHTTPRequestHandler):
    server: CacheServer

    def log_message(self, format: str, *args) -> None:  # quiet: pip shows what it fetches
        pass

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        try:
            if path.startswith("/simple/"):
                self._index_page(path.removeprefix("/simple/").strip("/"))
            elif path.startswith("/files/"):
                self._file(path.removeprefix("/files/"))
            elif path.startswith("/built/"):
                self._built(path.removeprefix("/built/"))
            else:
                self.send_error(404)
        except (urllib.error.URLError, OSError) as err:
            self.send_error(502, f"upstream: {err}")

    def _fetch(self, url: str, accept: str | None = None):
        headers = {"Accept": accept} if accept else {}
        request = urllib.request.Request(url, headers=headers)
        return urllib.request.urlopen(request, timeout=120, context=self.server.ssl_context)

    def _index_page(self, name: str) -> None:
        if not _NAME.match(name):
            self.send_error(404)
            return
        name = normalize(name)
        stored = self.server.root / "simple" / f"{name}.html"
        fresh = stored.exists() and time.time() - stored.stat().st_mtime < PAGE_TTL
        if fresh:
            page = stored.read_bytes()
        else:
            try:
                with self._fetch(f"{UPSTREAM_INDEX}{name}/", accept="text/html") as response:
                    page = response.read()
                _write_atomically(stored, page)
            except urllib.error.HTTPError as err:
                if err.code == 404:
                    self.send_error(404)
                    return
                page = _read_or_raise(stored, err)
            except urllib.error.URLError as err:
                page = _read_or_raise(stored, err)
        base = f"http://{self.headers.get('Host', self.server.host)}"
        body = page.replace(UPSTREAM_FILES.encode(), f"{base}/files/".encode())
        built = self.server.built
        if built is not None and (built / name).is_dir():
            links = "".join(
                f'<a href="{base}/built/{name}/{html.escape(wheel.name)}'
                f'#sha256={_sha256(wheel)}">{html.escape(wheel.name)}</a><br/>\n'
                for wheel in sorted((built / name).glob("*.whl"))
            )
            body = body.replace(b"</body>", links.encode() + b"</body>")
        self._send(body, "text/html; charset=utf-8")

    def _file(self, relative: str) -> None:
        if not _FILE.match(relative) or ".." in relative.split("/"):
            self.send_error(404)
            return
        stored = self.server.root / "files" / relative
        if not stored.exists():
            try:
                with self._fetch(UPSTREAM_FILES + relative) as response:
                    _write_atomically(stored, response)
            except urllib.error.HTTPError as err:
                self.send_error(err.code)
                return
        self._send_file(stored)

    def _built(self, relative: str) -> None:
        built = self.server.built
        if built is None or not _FILE.match(relative) or ".." in relative.split("/"):
            self.send_error(404)
            return
        wheel = built / relative
        if not wheel.is_file():
            self.send_error(404)
            return
        self._send_file(wheel)

    def _send(self, body: bytes, content_type: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _send_file(self, path: Path) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(path.stat().st_size))
        self.end_headers()
        with path.open("rb") as handle:
            shutil.copyfileobj(handle, self.wfile)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _read_or_raise(path: Path, err: Exception) -> bytes:
    if path.exists():
        return path.read_bytes()
    raise err


def _write_atomically(path: Path, content) -> None:
    """``content`` (bytes or a readable response) into ``path`` through a temporary file, so
    that a download cut short never leaves a truncated file in the cache."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=path.parent, delete=False) as handle:
        if isinstance(content, bytes):
            handle.write(content)
        else:
            shutil.copyfileobj(content, handle)
    os.replace(handle.name, path)


class CacheServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, root: Path, built: Path | None, port: int) -> None:
        try:
            super().__init__(("127.0.0.1", port), _Handler)
        except OSError:  # taken: any free port (the build's layer cache then misses once)
            super().__init__(("127.0.0.1", 0), _Handler)
        self.root = root
        self.built = built
        self.host = f"127.0.0.1:{self.server_address[1]}"
        self.ssl_context = _ssl_context()


@contextmanager
def pypi_cache(
    root: Path, built: Path | None = None, port: int = DEFAULT_PORT
) -> Iterator[CacheServer]:
    """A caching index over ``root`` (with the wheels of ``built``/NAME/ added to NAME's page)
    on 127.0.0.1:``port``, or another free port when it is taken, while the block runs;
    ``server.host`` is its ``127.0.0.1:PORT``. The index URL is a build argument, part of the
    key of every cached layer after it, so it stays the same from one build to the next when
    it can."""
    server = CacheServer(root, built, port)
    thread = threading.Thread(target=server.serve_forever, name="pypi-cache", daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
