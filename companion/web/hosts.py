"""The Host-header check against DNS rebinding. A page on another site can make its own
name resolve to this machine (127.0.0.1, or the companion's LAN address) and then read and
send requests as if it were the companion's own page: the browser calls it same-origin,
and sends Host and Origin both naming the foreign site. So every request (and WebSocket
handshake) must name this server in its Host header, or it is refused with 400 before any
route sees it.

A Host is this server's when it names (port aside, any case):
- a loopback name or address (localhost, 127.0.0.1, [::1]);
- an address the server serves on (Settings.served_hosts: the LAN addresses shown for the
  QR code, or the --host address);
- the address the request itself arrived at (the socket's own address: covers every
  interface of a server listening on all of them, even one `lan_addresses` missed; a
  rebinding page always sends its own name, never this machine's address);
- a name the host configured (Settings.host_names, `companion serve --host-name`)."""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from companion.web.settings import Settings

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "[::1]"})


def host_name(header: str) -> str:
    """The name or address of a Host header, without its port, lower case, IPv6 in
    brackets: 'Example.org:8000' -> 'example.org', '[::1]:8000' -> '[::1]'."""
    text = header.strip().lower().rstrip(".")
    if text.startswith("["):
        return text[: text.find("]") + 1] if "]" in text else text
    name, colon, port = text.rpartition(":")
    return name.rstrip(".") if colon and port.isdigit() else text


def own_names(settings: Settings) -> frozenset[str]:
    """Every Host a request to this server may name (besides the address it arrived at)."""
    configured = {host_name(name) for name in settings.host_names}
    return LOOPBACK_NAMES | settings.served_hosts | configured


def arrived_at(scope: Scope) -> str | None:
    """The address the request's connection reached (the socket's own), as host_name
    writes it."""
    server = scope.get("server")
    if not server:
        return None
    address = str(server[0]).lower()
    return f"[{address}]" if ":" in address else address


class HostCheck:
    """ASGI middleware: a request whose Host is not this server's gets 400 (a WebSocket
    handshake too), before any route or cookie is looked at."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app = app
        self.names = own_names(settings)

    def is_ours(self, scope: Scope) -> bool:
        # exactly one Host: with two, the checks here and the routes could read different
        # ones (the last one won in the headers the routes read)
        hosts = [value for key, value in scope.get("headers") or [] if key == b"host"]
        if len(hosts) != 1:
            return False
        name = host_name(hosts[0].decode("latin-1"))
        return name in self.names or name == arrived_at(scope)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or self.is_ours(scope):
            await self.app(scope, receive, send)
            return
        body = (
            b'{"reason":"not_allowed","rule":"foreign_host","message":"this server answers '
            b"only to its own names and addresses, named in one Host header; this request "
            b'names another, or none, or more than one"}'
        )
        start = {
            "status": 400,
            "headers": [(b"content-type", b"application/json")],
        }
        if scope["type"] == "http":
            await send({"type": "http.response.start", **start})
            await send({"type": "http.response.body", "body": body})
        elif "websocket.http.response" in scope.get("extensions", {}):
            await send({"type": "websocket.http.response.start", **start})
            await send({"type": "websocket.http.response.body", "body": body})
        else:
            await send({"type": "websocket.close", "code": 1008})
