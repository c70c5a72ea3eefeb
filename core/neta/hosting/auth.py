"""Who may use a host: the shared-secret check, the browser-origin check, the bind check.

Both hosts make these checks (``refusal``) before creating any session state.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
from urllib.parse import urlsplit

from neta.errors import ConfigError

_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")


def refusal(
    token: str | None,
    *,
    authorization: str | None,
    query_token: str | None = None,
    origin: str | None = None,
    host: str | None = None,
    server: tuple[str, int | None] | None = None,
) -> tuple[int, str] | None:
    """Why a request may not reach the agent (an HTTP status and a message), or ``None``.

    Args:
        token: the configured token (``None``: loopback only, no token needed).
        authorization: the ``Authorization`` header.
        query_token: the ``?token=`` parameter (the WebSocket accepts it).
        origin: the ``Origin`` header (sent by browsers).
        host: the ``Host`` header.
        server: the local address the request arrived on (the ASGI scope's ``server``).
    """
    if not token_ok(token, query_token, authorization):
        return 401, "missing or wrong token"
    if not token and not arrived_locally(server):
        # served off loopback by other means than ``neta serve`` (which refuses to)
        return 403, "without a token the server only answers on a loopback address"
    if not origin_ok(origin, token):
        return 403, f"requests from web pages of {origin} are not allowed"
    if not host_ok(host, token):
        return 403, f"without a token the server only answers requests for this machine, not {host}"
    return None


def host_ok(host: str | None, token: str | None) -> bool:
    """Whether a request for this ``Host`` may reach the agent.

    Without a token, a page of any site can make its own name resolve to 127.0.0.1 (DNS
    rebinding) and then reach the agent with same-origin requests, which carry no foreign
    ``Origin``; their ``Host`` header still names that site. So without a token the host must
    be a loopback name or address. With a token, the token decides.
    """
    if host is None or token:
        return True
    name = host.strip()
    if name.startswith("["):  # [::1]:8765
        name = name[1:].partition("]")[0]
    elif name.count(":") == 1:
        name = name.partition(":")[0]
    name = name.rstrip(".").lower()
    return is_loopback(name) or name.endswith(".localhost")


def arrived_locally(server: tuple[str, int | None] | None) -> bool:
    """Whether a request arrived on a loopback address (or a Unix socket, or unknown)."""
    if server is None or server[1] is None:
        return True
    return is_loopback(server[0])


def token_ok(expected: str | None, query_token: str | None, authorization: str | None) -> bool:
    """Whether the client presented the token (always true when none is configured).

    The ``Authorization: Bearer`` header wins over ``query_token``. Both sides are hashed
    before the constant-time compare, so not even the token's length leaks.
    """
    if not expected:
        return True
    offered = query_token
    if authorization and authorization.lower().startswith("bearer "):
        offered = authorization[7:].strip()
    if offered is None:
        return False
    return hmac.compare_digest(_digest(offered), _digest(expected))


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def origin_ok(origin: str | None, token: str | None) -> bool:
    """Whether a request sent with this ``Origin`` header may reach the agent.

    Browsers let any web page open a WebSocket to, or POST to, a server on 127.0.0.1; without
    a token nothing else would stop a page the user visits from driving the agent. So when no
    token is configured, a browser request must come from a loopback origin. Clients that are
    not browsers send no ``Origin``; with a token, the token decides.
    """
    if origin is None or token:
        return True
    return is_loopback(urlsplit(origin).hostname or "")


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address) means this machine only."""
    if host in _LOOPBACK_NAMES:
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


def served_url(host: str, port: int) -> str:
    """``http://host:port``, with an IPv6 address in brackets (``http://[::1]:8765``)."""
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{port}"


def check_exposure(host: str, token: str | None) -> None:
    """Refuse to serve off loopback without a token.

    Raises:
        ConfigError: ``host`` is not a loopback address (``0.0.0.0``, ``::``, a LAN address,
            a host name) and ``token`` is empty.
    """
    if not token and not is_loopback(host):
        raise ConfigError(
            f"binding to {host or 'every address'} exposes the agent to the network: "
            "set NETA_TOKEN or --token"
        )
