"""``safe_url``: a URL fit to print, its credentials masked; ``safe_reason``: an error about it."""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

MASK = "***"
"""What a masked password, token or secret parameter reads as."""

_USER_NAMING_SCHEMES = frozenset({"postgresql", "postgres", "redis", "rediss"})
"""Schemes whose user without a password is a user name (elsewhere it may be a token)."""
_SECRET_NAME = re.compile(r"pass|pwd|secret|token|key|sig|auth|cred", re.IGNORECASE)
_PARAMETER = re.compile(r"(^|[&;])([^=&;]*)=([^&;]*)")


def safe_url(url: str) -> str:
    """``url`` fit for a message or a log: its user information and secret parameters masked.

    ``user:password@`` becomes ``user:***@``, and a user alone ``***@`` (``https://TOKEN@…``)
    but in a database URL (``postgresql://neta@…``, where it names a user). In the query and
    the fragment, the values of parameters named like secrets (``password``, ``token``,
    ``api-key``, ``key``, ``X-Amz-Signature``, ``client_secret``…) become ``***``. A password
    holding ``/``, ``?`` or ``#`` unencoded is masked whole too.
    """
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "", url
    end = _authority_end(rest)
    authority, tail = rest[:end], rest[end:]
    if "@" not in authority and "@" in tail and _sloppy_password(authority):
        at = tail.index("@") + 1
        end = at + _authority_end(tail[at:])
        authority, tail = authority + tail[:end], tail[end:]
    if "@" in authority:
        credentials, _, host = authority.rpartition("@")  # a password may hold an @
        user, colon, _ = credentials.partition(":")
        if colon:
            authority = f"{user}:{MASK}@{host}"
        elif scheme.lower() not in _USER_NAMING_SCHEMES:
            authority = f"{MASK}@{host}"
    before, hash_, fragment = tail.partition("#")
    path, question, query = before.partition("?")
    return scheme + sep + authority + path + question + _masked(query) + hash_ + _masked(fragment)


def _authority_end(rest: str) -> int:
    return next((i for i, char in enumerate(rest) if char in "/?#"), len(rest))


def _sloppy_password(authority: str) -> bool:
    """Whether ``authority`` is ``user:pass`` cut short by a ``/``, ``?`` or ``#`` in the pass.

    ``host:port`` and ``[v6]:port`` are not: their text after the last ``:`` is a port.
    """
    if ":" not in authority or authority.endswith("]"):
        return False
    return not authority.rpartition(":")[2].isdigit()


def _masked(parameters: str) -> str:
    def mask(match: re.Match[str]) -> str:
        start, name, value = match.groups()
        return f"{start}{name}={MASK if _SECRET_NAME.search(name) else value}"

    return _PARAMETER.sub(mask, parameters)


def safe_reason(error: BaseException, url: str) -> str:
    """What ``error`` (a client library's, about ``url``) says, fit for a one-line message.

    Its lines are joined, and ``url``'s password is masked should the library have quoted it.
    """
    text = " ".join(str(error).split()) or type(error).__name__
    try:
        password = urlsplit(url).password
    except ValueError:  # not a URL a library could have used either
        password = None
    for secret in {password, unquote(password)} if password else ():
        text = text.replace(secret, MASK)
    return text
