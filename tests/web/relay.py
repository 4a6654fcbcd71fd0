"""A TCP relay between a browser and the real server, standing for a café's Wi-Fi that
stops carrying anything without closing: `go_silent()` leaves every open connection dead
(nothing forwarded either way, no close) and holds every new one accepted but unanswered
(a WebSocket's handshake, a fetch, hang as over a network that lost its route);
`come_back()` relays new connections again. `hold_answers()`: once a connection's client
has sent a WebSocket frame (an action), what the server sends on it is kept until
`release()` hands it all on at once (the answers to two tabs arriving together)."""

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
        self.holding = False  # hold_answers() called, release() not yet
        self.answering: set[int] = set()  # the connections whose client sent a frame
        self.held: list[tuple[socket.socket, bytes]] = []  # the server's bytes, in order
        self.upstreams: set[socket.socket] = set()  # the ends that read from the server
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
                self.upstreams.add(upstream)
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(
                    target=self._pump, args=(number, source, sink), daemon=True
                ).start()

    def _held(self, number: int, source: socket.socket, sink: socket.socket, data: bytes) -> bool:
        """Keep what the server sends on a connection whose client sent a WebSocket frame
        (a text frame's first byte: 0x81, or 0xC1 compressed; an HTTP request begins with
        a letter) while holding; True: kept, not to be sent now."""
        with self.lock:
            if not self.holding:
                return False
            if source not in self.upstreams:
                if data[:1] in (b"\x81", b"\xc1"):
                    self.answering.add(number)
                return False
            if number not in self.answering:
                return False
            self.held.append((sink, data))
            return True

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
            if self._held(number, source, sink, data):
                continue
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

    def hold_answers(self) -> None:
        with self.lock:
            self.holding = True

    def held_on(self) -> int:
        """How many connections have had something kept."""
        with self.lock:
            return len({id(sink) for sink, _ in self.held})

    def release(self) -> None:
        with self.lock:
            self.holding = False
            self.answering.clear()
            for sink, data in self.held:
                with contextlib.suppress(OSError):
                    sink.sendall(data)
            self.held.clear()

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
