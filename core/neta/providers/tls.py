"""One TLS context for every model API client of the process.

Building a client context loads the CA certificates, ~40 ms of CPU each time: paid by every
run that makes its own client (a ``neta run``, a host without a client pool) and again by
every turn of a test suite. The context is built once, the way the SDKs' HTTP clients build
theirs (``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` are read then), and shared: an ``SSLContext`` may
serve any number of connections, in any thread or event loop.
"""

from __future__ import annotations

import functools
import ssl


@functools.cache
def client_context() -> ssl.SSLContext:
    """The process's TLS context for model API clients: certificates and host names checked.

    For HTTP/1.1 clients, which all of Neta's are (the context offers only ``http/1.1``):
    httpx sets the protocols a context offers each time it connects, so an HTTP/2 client
    needs a context of its own.
    """
    import httpx2  # loaded with the SDKs that use it, not with ``neta``

    context = httpx2.create_ssl_context()
    context.set_alpn_protocols(["http/1.1"])
    return context
