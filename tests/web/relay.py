"""A TCP relay between a browser and the real server, standing for a café's Wi-Fi that
stops carrying anything without closing: `go_silent()` leaves every open connection dead
(nothing forwarded either way, no close) and holds every new one accepted but unanswered
(a WebSocket's handshake, a fetch, hang as over a network that lost its route);
`come_back()` relays new connections again."""

from __future__ import annotations

import contextlib
import socket
import threading
from types import TracebackType

CHUNK = 65536


class SilentRelay:
    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.lock = threading.Lock()
        self.silent = False
        self.sockets: list[socket.socket] = []  # every one opened, closed at the end
        self.dead: set[int] = set()  # the relayed connections that carry nothing more
        self.relayed = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return  # closed
            with self.lock:
                self.sockets.append(client)
                if self.silent:
                    continue  # accepted, never answered
                self.relayed += 1
                number = self.relayed
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port))
            except OSError:  # the server is gone (the test ended): so is this connection
                client.close()
                continue
            with self.lock:
                self.sockets.append(upstream)
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(
                    target=self._pump, args=(number, source, sink), daemon=True
                ).start()

    def _pump(self, number: int, source: socket.socket, sink: socket.socket) -> None:
        while True:
            try:
                data = source.recv(CHUNK)
            except OSError:
                return
            if number in self.dead:
                if not data:
                    return  # one end closed: the other is not told either
                continue  # swallowed: the connection stays open and says nothing
            if not data:
                break
            try:
                sink.sendall(data)
            except OSError:
                break
        for end in (source, sink):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)

    def go_silent(self) -> None:
        with self.lock:
            self.silent = True
            self.dead.update(range(1, self.relayed + 1))

    def come_back(self) -> None:
        with self.lock:
            self.silent = False

    def close(self) -> None:
        self.listener.close()
        with self.lock:
            for end in self.sockets:
                end.close()

    def __enter__(self) -> SilentRelay:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()
