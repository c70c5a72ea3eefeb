"""The API's description: ``/openapi.json``, behind the same checks as the API.

No ``/docs`` or ``/redoc`` page: FastAPI's load Swagger UI and ReDoc from a CDN into the
server's origin, where a script from elsewhere could use the token. To browse the API, save
the spec (``curl -H "Authorization: Bearer $NETA_TOKEN" http://127.0.0.1:8765/openapi.json``)
and open it in an OpenAPI viewer of your own.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request

from neta.service.agent_executor import authorized

docs_router = APIRouter(include_in_schema=False, dependencies=[Depends(authorized)])
"""The ``/openapi.json`` route."""


@docs_router.get("/openapi.json")
async def openapi_spec(request: Request) -> dict[str, Any]:
    """The OpenAPI description of the REST service."""
    spec: dict[str, Any] = request.app.openapi()
    return spec
