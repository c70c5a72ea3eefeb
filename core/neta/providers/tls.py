"""One TLS context for every model API client of the process.

Building a client context loads the CA certificates, ~40 ms of CPU each time: paid by every
run that makes its own client (a ``neta run``, a host without a client pool) and again by
every turn of a test suite. The context is built once, the way the SDKs' HTTP clients build
theirs (``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` are read then), and shared: an ``SSLContext`` may
serve any number of connections, in any thread or event loop, as long as nobody changes it.
So the shared one refuses changes: a client that needs other certificates, checks or
protocols (HTTP/2) makes a context of its own.
"""

from __future__ import annotations

import functools
import ssl
from collections.abc import Iterable
from typing import Any

_PROTOCOLS = ["http/1.1"]


class _SharedContext(ssl.SSLContext):
    """The shared context: HTTP/1.1 only, and no change once built."""

    def set_alpn_protocols(self, alpn_protocols: Iterable[str]) -> None:
        # httpx sets the protocols on every connection it opens, from whichever thread opens
        # it; setting them again while another thread connects would race inside OpenSSL
        if list(alpn_protocols) != _PROTOCOLS:
            raise ValueError(_refusal("offers http/1.1 only"))

    def load_cert_chain(self, *args: Any, **kwargs: Any) -> None:
        raise ValueError(_refusal("takes no client certificate"))

    def load_verify_locations(self, *args: Any, **kwargs: Any) -> None:
        raise ValueError(_refusal("takes no other CA certificates"))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(_refusal(f"cannot be changed ({name})"))


def _refusal(what: str) -> str:
    return f"the shared TLS context {what}; give this client a context of its own"


@functools.cache
def client_context() -> ssl.SSLContext:
    """The process's TLS context for model API clients.

    Certificates and host names are checked and HTTP/1.1 is offered. It is shared, so it
    refuses changes (``ValueError`` / ``AttributeError``).
    """
    import httpx2  # loaded with the SDKs that use it, not with ``neta``

    context = httpx2.create_ssl_context()
    context.set_alpn_protocols(_PROTOCOLS)
    context.__class__ = _SharedContext  # the same object, now refusing changes
    return context
