"""What operators and their tools ask a server: ``/healthz``, ``/readyz``, ``/metrics``.

``/healthz`` (the process answers) and ``/readyz`` (its store and bus answer, and it is not
stopping) need no token and say nothing about the server: no version, path, URL or count.
``/metrics`` (Prometheus' text format) needs the API token, or the metrics token
(``HostConfig.metrics_token``) that opens ``/metrics`` only, so that a scraper need not hold a
token able to drive agents.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, HTTPException, Query, Request, Response
from fastapi.responses import JSONResponse

from neta.hosting.hub import SessionHub

monitoring_router = APIRouter(include_in_schema=False)

_NO_STORE = {"Cache-Control": "no-store"}


def _hub(request: Request) -> SessionHub:
    hub: SessionHub = request.app.state.hub
    return hub


@monitoring_router.get("/healthz")
async def healthz() -> JSONResponse:
    """200 while the process serves."""
    return JSONResponse({"status": "ok"}, headers=_NO_STORE)


@monitoring_router.get("/readyz")
async def readyz(request: Request) -> JSONResponse:
    """200 when the server may take new clients; 503 and why (in a few words) when not."""
    reason = await _hub(request).unready()
    if reason is None:
        return JSONResponse({"status": "ready"}, headers=_NO_STORE)
    return JSONResponse({"status": "unready", "reason": reason}, 503, headers=_NO_STORE)


@monitoring_router.get("/metrics")
async def metrics(
    request: Request,
    authorization: Annotated[str | None, Header()] = None,
    origin: Annotated[str | None, Header()] = None,
    host: Annotated[str | None, Header()] = None,
    token: Annotated[str | None, Query()] = None,
) -> Response:
    """The server's metrics, to a client with the API token or the metrics token."""
    hub = _hub(request)
    refused = hub.refusal(
        authorization=authorization,
        query_token=token,
        origin=origin,
        host=host,
        server=request.scope.get("server"),
        scraping=True,
    )
    if refused is not None:
        status, message = refused
        headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
        raise HTTPException(status, message, headers=headers)
    body, content_type = hub.metrics.exposition()
    return Response(body, media_type=content_type, headers=_NO_STORE)
