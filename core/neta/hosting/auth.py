"""The shared-secret check both hosts make before creating any session state."""

from __future__ import annotations

import hmac


def token_ok(expected: str | None, query_token: str | None, authorization: str | None) -> bool:
    """Whether the client presented the token (always true when none is configured)."""
    if not expected:
        return True
    offered = query_token
    if authorization and authorization.lower().startswith("bearer "):
        offered = authorization[7:].strip()
    return offered is not None and hmac.compare_digest(offered.encode(), expected.encode())
