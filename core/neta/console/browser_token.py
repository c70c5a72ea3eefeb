"""How a browser presents the token on a WebSocket without putting it in the URL.

A page's ``new WebSocket(url, protocols)`` can set no header but ``Sec-WebSocket-Protocol``.
The console offers two subprotocols: ``neta`` and ``neta.bearer.<token as unpadded
base64url>`` (base64url keeps any token within the characters a subprotocol may hold). This
middleware turns the second into the ``Authorization: Bearer`` header the host already
checks, removes it from the offered list, and accepts the connection with ``neta`` (a browser
that offered subprotocols drops a connection accepted without one). The token never reaches
a URL, so it stays out of access logs and browser history.
"""

from __future__ import annotations

import base64
import binascii

from starlette.types import ASGIApp, Message, Receive, Scope, Send

BROWSER_TOKEN_PREFIX = "neta.bearer."
"""The subprotocol prefix carrying the token."""

PROTOCOL = "neta"
"""The subprotocol a connection is accepted with when the client offered it."""


def _header_value(encoded: str) -> bytes | None:
    """The token's header bytes: what the host reads back (as Latin-1) is the token itself."""
    try:
        raw = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
        return raw.decode("utf-8").encode("latin-1")
    except (binascii.Error, ValueError):  # not base64url of UTF-8, or not Latin-1 text
        return None


class BrowserToken:
    """ASGI middleware: a ``neta.bearer.*`` subprotocol becomes an ``Authorization`` header.

    An ``Authorization`` header the client sent itself wins. A token that does not decode (or
    holds characters beyond Latin-1, which no HTTP header can carry) is dropped, so the
    connection is refused as one without a token.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Rewrite a WebSocket handshake's headers, then pass the connection on."""
        if scope["type"] != "websocket":
            await self.app(scope, receive, send)
            return
        offered: list[str] = []
        token: bytes | None = None
        headers: list[tuple[bytes, bytes]] = []
        has_authorization = False
        for name, value in scope["headers"]:
            if name == b"sec-websocket-protocol":
                for item in value.decode("latin-1").split(","):
                    item = item.strip()
                    if item.startswith(BROWSER_TOKEN_PREFIX):
                        token = _header_value(item[len(BROWSER_TOKEN_PREFIX) :])
                    elif item:
                        offered.append(item)
                continue
            has_authorization = has_authorization or name == b"authorization"
            headers.append((name, value))
        if offered:
            headers.append((b"sec-websocket-protocol", ", ".join(offered).encode("latin-1")))
        if token is not None and not has_authorization:
            headers.append((b"authorization", b"Bearer " + token))
        scope = {**scope, "headers": headers, "subprotocols": offered}

        async def accept_with_protocol(message: Message) -> None:
            if (
                message["type"] == "websocket.accept"
                and message.get("subprotocol") is None
                and PROTOCOL in offered
            ):
                message = {**message, "subprotocol": PROTOCOL}
            await send(message)

        await self.app(scope, receive, accept_with_protocol)
