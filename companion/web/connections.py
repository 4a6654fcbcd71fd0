"""Connections that hold a socket without using it are closed (issue 25, item 7).

uvicorn closes an idle keep-alive connection after a response (`timeout_keep_alive`), but
starts no clock for a connection that has sent nothing, or only part of its headers: 1,100
such connections from one client all stayed open (a slowloris attack on the process's
20,000 file descriptors). Here every connection has `header_timeout_s` to finish its
request's headers, counted from when it opened or its previous response ended (sending a
byte now and then does not reset it), and one client address holds at most
`per_client` connections (HTTP and WebSocket alike); one over the cap is closed at once.
A WebSocket, once upgraded, and a request whose headers arrived are left alone.

A request whose headers arrived has `body_timeout_s` for its whole body (a body announced
and never sent held its connection for good: 20,000 of them from 80 addresses took every
file descriptor, and every client, the server's own machine too, got no answer), and the
whole server holds at most `max_connections` at once, so no set of addresses can take
them all.

uvicorn's own 400 to a request it cannot parse carries the page headers
(`send_400_response`), as every answer of the app does."""

from __future__ import annotations

import asyncio
import logging

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from companion.web.page_headers import PAGE_HEADERS

logger = logging.getLogger(__name__)


class GuardedProtocol(H11Protocol):
    """uvicorn's h11 protocol with a header deadline and a per-address cap. Subclassed
    with the limits by `guarded_protocol` (uvicorn builds one per connection)."""

    header_timeout_s: float = 10.0
    per_client: int = 256
    body_timeout_s: float = 30.0
    max_connections: int = 2048
    _header_deadline: asyncio.TimerHandle | None = None  # set per connection
    _body_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if self._over_cap():
            logger.warning("too many connections from %s: closing one", self.client)
            transport.close()
            return
        self._arm_header_deadline()

    def _over_cap(self) -> bool:
        if self.client is None:
            return False
        host = self.client[0]
        same = sum(1 for c in self.connections if (getattr(c, "client", None) or ("",))[0] == host)
        return same > self.per_client or len(self.connections) > self.max_connections

    def handle_events(self) -> None:
        # after new data, and after a response when a pipelined request waited in the
        # buffer (uvicorn reads it in on_response_complete: watching data_received alone
        # let a GET followed by a POST's headers hold its socket for good)
        super().handle_events()
        self._watch_body()

    def _upgraded(self) -> bool:
        """Whether the connection became a WebSocket (uvicorn hands the transport to the
        WebSocket protocol; h11 stays in SEND_BODY for the upgrade request, whose body
        never comes: the clock closed every socket after 30 s, the players' re-trial)."""
        return self.transport.get_protocol() is not self

    def _watch_body(self) -> None:
        """One clock for a request's whole body, started when its headers are whole."""
        if self.conn.their_state is h11.SEND_BODY and not self._upgraded():
            if self._body_deadline is None:
                self._body_deadline = self.loop.call_later(
                    self.body_timeout_s, self._close_if_body_unfinished
                )
        elif self._body_deadline is not None:
            self._body_deadline.cancel()
            self._body_deadline = None

    def _close_if_body_unfinished(self) -> None:
        self._body_deadline = None
        unfinished = self.conn.their_state is h11.SEND_BODY and not self._upgraded()
        if unfinished and not self.transport.is_closing():
            logger.info(
                "closing %s: request body not whole within %.0f s", self.client, self.body_timeout_s
            )
            self.transport.close()

    def _arm_header_deadline(self) -> None:
        if self._header_deadline is not None:
            self._header_deadline.cancel()
        self._header_deadline = self.loop.call_later(self.header_timeout_s, self._close_if_silent)

    def _close_if_silent(self) -> None:
        # h11 stays IDLE until a request's headers are whole: nothing came, or only part
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            logger.info(
                "closing %s: no request headers within %.0f s", self.client, self.header_timeout_s
            )
            self.transport.close()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():  # a kept-alive connection waits for headers again
            self._arm_header_deadline()

    def send_400_response(self, msg: str) -> None:
        """uvicorn's own answer to a request h11 cannot parse (a bad request line or
        header: it never reaches the app, whose `PageHeaders` add the page headers), as
        uvicorn writes it, with those headers too."""
        headers = [
            (b"content-type", b"text/plain; charset=utf-8"),
            (b"connection", b"close"),
            *PAGE_HEADERS,
        ]
        for event in (
            h11.Response(status_code=400, headers=headers, reason=b"Bad Request"),
            h11.Data(data=msg.encode("ascii")),
            h11.EndOfMessage(),
        ):
            self.transport.write(self.conn.send(event) or b"")
        self.transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        for deadline in (self._header_deadline, self._body_deadline):
            if deadline is not None:
                deadline.cancel()
        super().connection_lost(exc)


def guarded_protocol(
    header_timeout_s: float,
    per_client: int,
    body_timeout_s: float = GuardedProtocol.body_timeout_s,
    max_connections: int = GuardedProtocol.max_connections,
) -> type[GuardedProtocol]:
    """The protocol class uvicorn runs (`uvicorn.Config(http=...)`) with these limits."""
    limits = {
        "header_timeout_s": header_timeout_s,
        "per_client": per_client,
        "body_timeout_s": body_timeout_s,
        "max_connections": max_connections,
    }
    return type("GuardedProtocolWithLimits", (GuardedProtocol,), limits)
