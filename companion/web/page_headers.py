"""The headers every answer carries, against another site's page using ours: it may not
frame a page (a host's "End game" clicked through an invisible frame on a page of another
site, or of another port of this machine, which the browser sends the Lax cookies to),
a file is never read as another type than it says (a photo or a record as a script), and
a page runs only scripts from this server (a name that ever got through the escaping runs
nothing). The pages load every script from /static (no inline script, no handler
attribute); their inline styles stay allowed, as the sheets draw rows with them."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

CONTENT_SECURITY_POLICY = (
    "script-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
PAGE_HEADERS = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode("ascii")),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),  # frame-ancestors for browsers older than CSP 2
    # a join link (/join?code=...) is never sent on as a Referer
    (b"referrer-policy", b"same-origin"),
)


# an answer is a game's (its names, its sheets, the join code on the table page, the
# scoreboard, the log, the start page of the server's machine): no browser keeps it on
# disk, where the next person at a shared computer finds the code. Static files are the
# same for everyone and keep their validators (ETag, 304).
NO_STORE = (b"cache-control", b"no-store")
STATIC_PREFIX = "/static/"


class PageHeaders:
    """ASGI middleware: PAGE_HEADERS on every HTTP answer (refusals and static files too),
    and NO_STORE on every one but a static file's, unless the answer set one itself."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        added: tuple[tuple[bytes, bytes], ...] = PAGE_HEADERS
        if not str(scope.get("path", "")).startswith(STATIC_PREFIX):
            added = (*PAGE_HEADERS, NO_STORE)

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers") or [])
                present = {key.lower() for key, _ in headers}
                headers += [(k, v) for k, v in added if k not in present]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, with_headers)
