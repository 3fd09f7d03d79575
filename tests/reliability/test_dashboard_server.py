"""Issue 30 item 5: the dashboard on its production server (``python -m faceoff.dashboard``:
gunicorn, dashboard.serve), as a real process. Round 3 found the Flask development server
spooling an anonymous 1 GB multipart POST to /login to /tmp before the 401, growing 600 MB
for a 200 MB callback body, and unanswering for 30 s behind 1,500 slow connections.

Here: a 1 GB-declared multipart POST to /login, anonymous, with authentication on, is a 413
within 2 s with nothing read or spooled; a 200 MB callback body, declared or chunked (no
length), is a 413 and the processes' memory barely moves; behind 300 idle sockets and 300
that sent half their headers, a normal GET answers within 2 s."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path

import httpx
import psutil

from faceoff.core.migrate import upgrade
from faceoff.core.secret_key import make_secret_key
from tests.dashboard.conftest import REPO, running_dashboard

ANSWER_SECONDS = 2.0  # on a loaded 2-core machine; the dev server took > 30 s
RSS_GROWTH_BYTES = 60 * 1024**2  # the 200 MB bodies: at most this much more memory


def dashboard_processes() -> list[psutil.Process]:
    """The processes this test started: the dashboard's gunicorn master and its workers."""
    return psutil.Process().children(recursive=True)


def total_rss() -> int:
    return sum(p.memory_info().rss for p in dashboard_processes())


def answer_of(sock: socket.socket, timeout: float = 10.0) -> bytes:
    """What the server sent on ``sock`` until it closed it or ``timeout`` passed."""
    sock.settimeout(timeout)
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
            if b"\r\n\r\n" in data and b'"detail"' in data:
                break
    except (TimeoutError, ConnectionResetError):
        pass
    return data


def declared_post(
    base: str, path: str, kind: str, length: int, first: bytes
) -> tuple[bytes, float]:
    """(the answer, seconds until it came) of a POST to ``path`` declaring ``length`` bytes
    of ``kind`` and sending only ``first`` of them."""
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port_of(base))) as sock:
        head = f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: {kind}\r\n"
        sock.sendall(f"{head}Content-Length: {length}\r\n\r\n".encode() + first)
        answer = answer_of(sock)
    return answer, time.monotonic() - started


def port_of(base: str) -> int:
    return int(base.rsplit(":", 1)[1])


def db_url(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'faceoff.db'}"
    upgrade(url)
    return url


def test_a_1_gb_anonymous_login_post_is_refused_at_once(tmp_path):
    spool = Path(os.environ.get("TMPDIR", "/tmp"))
    auth = {"FACEOFF_AUTH_ENABLED": "true", "FACEOFF_SECRET_KEY": make_secret_key()}
    with running_dashboard(db_url(tmp_path), extra_env=auth) as base:
        before = total_rss()
        free = os.statvfs(spool).f_bavail * os.statvfs(spool).f_frsize
        part = b'--b\r\nContent-Disposition: form-data; name="token"; filename="t"\r\n\r\n'
        kind = "multipart/form-data; boundary=b"
        answer, took = declared_post(base, "/login", kind, 2**30, part + b"x" * 2**20)
        assert answer.startswith(b"HTTP/1.1 413"), answer[:300]
        assert b"FACEOFF_DASHBOARD_MAX_BODY_BYTES" in answer
        assert took < ANSWER_SECONDS, f"the 413 took {took:.2f} s"
        after = os.statvfs(spool).f_bavail * os.statvfs(spool).f_frsize
        assert free - after < 50 * 1024**2, "the body was spooled to disk"
        assert total_rss() - before < RSS_GROWTH_BYTES
        # the dashboard still answers (the login page, anonymous)
        assert httpx.get(f"{base}/login", timeout=10).status_code == 200
    print(f"1 GB-declared login POST: 413 in {took:.3f} s")


def test_a_200_mb_callback_body_is_refused_without_growing(tmp_path):
    """Authentication off (the loopback viewer may call callbacks without a login)."""
    with running_dashboard(db_url(tmp_path)) as base:
        httpx.get(f"{base}/", timeout=30)  # every worker warmed
        before = total_rss()
        path, kind = "/_dash-update-component", "application/json"
        declared, _ = declared_post(base, path, kind, 200 * 2**20, b'{"output": "' + b"x" * 2**20)
        assert declared.startswith(b"HTTP/1.1 413"), declared[:300]

        def chunks():
            block = b"x" * 2**20
            for _ in range(200):
                yield block

        started = time.monotonic()
        try:
            chunked = httpx.post(
                f"{base}/_dash-update-component",
                headers={"Content-Type": "application/json"},
                content=chunks(),
                timeout=30,
            )
            status = chunked.status_code
        except httpx.WriteError:  # the server answered and closed while we sent
            status = 413
        took = time.monotonic() - started
        assert status == 413
        growth = total_rss() - before
        assert growth < RSS_GROWTH_BYTES, f"RSS grew {growth / 2**20:.0f} MiB"
        assert httpx.get(f"{base}/_dash-layout", timeout=10).status_code == 200
    print(f"200 MB chunked callback body: 413 in {took:.2f} s, RSS +{growth / 2**20:.1f} MiB")


def test_slow_connections_do_not_stop_it_answering(tmp_path):
    with running_dashboard(db_url(tmp_path)) as base, ExitStack() as held:
        port = port_of(base)
        for i in range(600):
            sock = held.enter_context(socket.create_connection(("127.0.0.1", port)))
            if i % 2:  # half a request line and header, never finished
                sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
        time.sleep(1.0)
        timings = []
        for _ in range(3):
            started = time.monotonic()
            response = httpx.get(f"{base}/_dash-layout", timeout=30)
            timings.append(time.monotonic() - started)
            assert response.status_code == 200
        assert max(timings) < ANSWER_SECONDS, timings
    print(f"behind 600 slow sockets: GET in {', '.join(f'{t:.3f}' for t in timings)} s")


FRESH_PROCESS = """
import sys
from concurrent.futures import ThreadPoolExecutor
from faceoff.dashboard.app import create_app
client = create_app().server.test_client()
sys.setswitchinterval(1e-6)  # the threads interleave finely, as on a busy machine
with ThreadPoolExecutor(8) as pool:  # its first requests, at once, as a browser sends them
    codes = list(pool.map(lambda path: client.get(path).status_code, sys.argv[1:]))
print(" ".join(map(str, codes)))
"""


def test_a_fresh_process_serves_the_page_s_scripts_at_once(tmp_path):
    """A gunicorn worker's first requests come at once (a browser loads the page's scripts
    on six connections): each must be served, React, the renderer, the components' bundles
    and the chunks loaded later. Dash's first-request set-up let the requests beside the
    first one through before it had registered the files: 404, and the browser stayed at
    "Loading..." for good. Here the page comes from the server, its files from a fresh
    process's first requests."""
    url = db_url(tmp_path)
    with running_dashboard(url) as base:
        page = httpx.get(f"{base}/", timeout=30)
    assert page.status_code == 200
    scripts = re.findall(r'<script src="([^"]+)"', page.text)
    assert any("react@" in s for s in scripts) and any("dash_renderer" in s for s in scripts)
    chunks = [f"/_dash-component-suites/dash/dcc/async-{c}.js" for c in ("graph", "dropdown")]
    paths = (scripts + chunks) * 2
    env = {**os.environ, "FACEOFF_DATABASE_URL": url}
    fresh = subprocess.run(
        [sys.executable, "-c", FRESH_PROCESS, *paths],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    codes = fresh.stdout.split()
    refused = sorted({p for p, code in zip(paths, codes, strict=True) if code != "200"})
    assert not refused, refused
