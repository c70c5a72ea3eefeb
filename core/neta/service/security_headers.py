"""``SecurityHeaders``: what a browser may do with the host app's responses."""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)
"""The policy of a response that sets none: nothing from elsewhere, no inline script, no
framing. The console's pages set their own, stricter one."""

HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
"""What every HTTP response carries, unless the route set the header itself.

``no-store``: a session's history holds what its tools read, and a token given as
``?token=`` leaves no ``Authorization`` header to keep shared caches from keeping a copy. The
console's files, which hold no secret, set their own."""


class SecurityHeaders:
    """ASGI middleware: ``HEADERS`` on every HTTP response that does not set them itself.

    Every response, not only HTML: a browser told not to sniff, and given a policy, cannot be
    made to run a JSON body as a page, and no browser or proxy keeps a copy of one.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on, adding the headers to its response as it starts."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in HEADERS.items():
                    headers.setdefault(name, value)
            await send(message)

        await self.app(scope, receive, send_with_headers)
