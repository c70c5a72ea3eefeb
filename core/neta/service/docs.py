"""The API docs (``/docs``, ``/redoc``, ``/openapi.json``), behind the same checks as the API.

With a token configured they need it too: ``Authorization: Bearer`` or, as a browser opening
the page has no other way, ``?token=``, which the page then passes on to fetch the spec.
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Depends, Query, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse

from neta.service.agent_executor import authorized

docs_router = APIRouter(include_in_schema=False, dependencies=[Depends(authorized)])

TokenQuery = Annotated[str | None, Query()]


def _spec_url(token: str | None) -> str:
    return "/openapi.json" + (f"?token={quote(token, safe='')}" if token else "")


@docs_router.get("/openapi.json")
async def openapi_spec(request: Request) -> dict[str, Any]:
    """The OpenAPI description of the REST service."""
    spec: dict[str, Any] = request.app.openapi()
    return spec


@docs_router.get("/docs")
async def swagger_page(request: Request, token: TokenQuery = None) -> HTMLResponse:
    """Swagger UI for the REST service."""
    return get_swagger_ui_html(openapi_url=_spec_url(token), title=f"{request.app.title} - docs")


@docs_router.get("/redoc")
async def redoc_page(request: Request, token: TokenQuery = None) -> HTMLResponse:
    """ReDoc for the REST service."""
    return get_redoc_html(openapi_url=_spec_url(token), title=f"{request.app.title} - ReDoc")
