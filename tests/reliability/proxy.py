"""A TCP proxy that can take a server "down" (refuse and cut every connection), or put it
behind a "blackhole" (a silent partition: connections stay open and new ones are accepted,
but no byte gets through), and bring it back "up" on the same port: outages of PostgreSQL
without touching PostgreSQL."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

CHUNK = 1 << 16


class TcpProxy:
    """Forwards 127.0.0.1:``port`` to ``target``, one pair of threads per connection."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = 0
        self._listener: socket.socket | None = None
        self._sockets: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._dropping = False

    def up(self) -> None:
        """Listen (again, on the same port) and forward new connections; after a blackhole,
        cut the connections that lost bytes in it (their streams are broken) and forward
        again."""
        if self._listener is not None:
            self._dropping = False
            self._cut_all()
            return
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def down(self) -> None:
        """Stop listening (new connections are refused) and cut every open connection."""
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.shutdown(socket.SHUT_RDWR)
            listener.close()
        self._dropping = False
        self._cut_all()

    def blackhole(self) -> None:
        """Forward nothing and tell nobody: bytes sent either way are dropped, new
        connections are accepted and never answered, nothing is refused or closed."""
        self._dropping = True

    def _cut_all(self) -> None:
        with self._lock:
            sockets, self._sockets = self._sockets, set()
        for sock in sockets:
            _close(sock)

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # the listener was closed: down
            if self._dropping:
                with self._lock:
                    self._sockets.add(client)
                threading.Thread(target=self._pump, args=(client, None), daemon=True).start()
                continue
            try:
                server = socket.create_connection(self.target, timeout=5)
            except OSError:
                _close(client)
                continue
            server.settimeout(None)
            with self._lock:
                if self._listener is not listener:  # went down meanwhile
                    _close(client)
                    _close(server)
                    continue
                self._sockets |= {client, server}
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket | None) -> None:
        """Copy ``source`` to ``sink`` (None: nowhere) until either closes; drop the bytes
        while blackholed."""
        try:
            while data := source.recv(CHUNK):
                if sink is not None and not self._dropping:
                    sink.sendall(data)
        except OSError:
            pass
        with self._lock:
            self._sockets -= {source, sink}
        for sock in (source, sink):
            if sock is not None:
                _close(sock)


def _close(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()


@contextmanager
def tcp_proxy(host: str, port: int) -> Iterator[TcpProxy]:
    """A running :class:`TcpProxy` to ``host:port``, down at the end."""
    proxy = TcpProxy((host, port))
    proxy.up()
    try:
        yield proxy
    finally:
        proxy.down()
