"""The web console: a single page at ``/`` that talks to ``/ws`` like any other client.

The page is static files shipped in this package (``static/``: HTML, CSS and JavaScript
modules; no build step, nothing fetched from elsewhere). ``mount_console`` adds three things
to a host app:

- ``GET /``: the page; ``GET /console/{name}``: its files; ``GET /console/config.json``:
  whether a token is required, how long a question waits (``clarifyTimeout``), and for the
  header the ``model`` and the ``workspace`` folder's name (with a token configured, only
  to a request that presents it, which also gets the full ``workspacePath``);
- the host's rules for who may load them: without a token, only loopback clients and pages
  of a loopback origin (as for the API), asking for a loopback host name (so that a name
  rebound to this machine cannot serve the page); with a token the page loads and asks for it;
- ``BrowserToken``, which lets a browser present the token: browsers cannot set an
  ``Authorization`` header on a WebSocket, and the token must not travel in the URL.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, FastAPI, HTTPException, Request
from fastapi.responses import FileResponse, JSONResponse

from neta.console.browser_token import BROWSER_TOKEN_PREFIX, BrowserToken
from neta.hosting.hub import HostConfig, SessionHub

STATIC = Path(__file__).parent / "static"
"""The console's files."""

_MEDIA_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
}

_HEADERS = {
    "Cache-Control": "no-cache",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    # Even a rendering bug cannot run script from model text: only these files run.
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
}


def _files() -> dict[str, Path]:
    return {p.name: p for p in STATIC.iterdir() if p.is_file() and p.suffix in _MEDIA_TYPES}


def mount_console(app: FastAPI, hub: SessionHub) -> None:
    """Serve the console at ``/`` and let browsers present the token on ``/ws``.

    Call it after the app's other routes are added.
    """
    config = hub.config
    files = _files()
    router = APIRouter(include_in_schema=False)

    def check(request: Request) -> None:
        if config.token:
            return  # the page holds no secret: it asks for the token the API requires
        refused = hub.refusal(
            authorization=None,
            origin=request.headers.get("origin"),
            host=request.headers.get("host"),
            server=request.scope.get("server"),
        )
        if refused is not None:
            raise HTTPException(refused[0], refused[1])

    def send(name: str) -> FileResponse:
        path = files[name]
        return FileResponse(path, media_type=_MEDIA_TYPES[path.suffix], headers=_HEADERS)

    @router.api_route("/", methods=["GET", "HEAD"])
    async def page(request: Request) -> FileResponse:
        check(request)
        return send("index.html")

    @router.api_route("/console/config.json", methods=["GET", "HEAD"])
    async def settings(request: Request) -> JSONResponse:
        check(request)
        data: dict[str, object] = {
            "tokenRequired": bool(config.token),
            "clarifyTimeout": config.clarify_timeout,
            "tokenProtocol": BROWSER_TOKEN_PREFIX,
        }
        # What the header shows, only to whoever may use the agent: without a token (loopback
        # only, see check) the model and the workspace's folder name; its full path only to a
        # request that presents the token (a page that has it asks again with it).
        presented = bool(config.token) and (
            hub.refusal(authorization=request.headers.get("authorization")) is None
        )
        if presented or not config.token:
            data["model"] = _model_label(config)
            workspace = Path(config.workspace)
            data["workspace"] = workspace.name or str(workspace)
        if presented:
            data["workspacePath"] = str(config.workspace)
        return JSONResponse(data, headers=_HEADERS)

    @router.api_route("/console/{name}", methods=["GET", "HEAD"])
    async def asset(name: str, request: Request) -> FileResponse:
        check(request)
        if name not in files:
            raise HTTPException(404, f"no console file {name!r}")
        return send(name)

    app.include_router(router)
    app.add_middleware(BrowserToken)


def _model_label(config: HostConfig) -> str:
    """The model the sessions use, as the header names it (empty: the host's own provider)."""
    if config.model:
        return config.model
    return "" if config.provider_factory is not None else f"{config.provider} (default model)"


__all__ = ["STATIC", "BrowserToken", "mount_console"]
