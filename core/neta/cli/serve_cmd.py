"""``neta serve``: the WebSocket gateway and the REST service in one process."""

from __future__ import annotations

import os
from pathlib import Path

import typer

from neta.cli.context import plugin_manager
from neta.cli.run_cmd import (
    ApiKeyOpt,
    BaseUrlOpt,
    DenyOpt,
    MaxTriesOpt,
    ModelOpt,
    ModelTimeoutOpt,
    ProviderOpt,
    ScriptOpt,
    ToolsetOpt,
    TurnTimeoutOpt,
)
from neta.hosting.auth import check_exposure
from neta.hosting.config import HostConfig
from neta.providers.registry import DEFAULT_PROVIDER, resolve_model_name
from neta.providers.retry import RetryPolicy

KEEP_ALIVE_SECONDS = 75
"""How long an idle HTTP keep-alive connection stays open. Longer than the pool expiry of
common clients (httpx 5 s, aiohttp 15 s), so that the client, not the server, closes it: a
server closing at the moment the client reuses the connection makes that request fail."""

GRACEFUL_SECONDS = 3
"""How long a stopping server waits for requests in flight; their runs are then cancelled
(and saved) so that a long run cannot hold up a restart."""


def serve(
    ctx: typer.Context,
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind."),
    port: int = typer.Option(8765, "--port", help="Port to bind."),
    provider: str | None = ProviderOpt,
    model: str = ModelOpt,
    base_url: str | None = BaseUrlOpt,
    api_key: str | None = ApiKeyOpt,
    script: Path | None = ScriptOpt,
    workspace: Path | None = typer.Option(None, "--workspace", "-w", help="Workspace root."),
    toolset: list[str] = ToolsetOpt,
    deny: list[str] = DenyOpt,
    token: str | None = typer.Option(None, "--token", help="Required token (or NETA_TOKEN)."),
    clarify_timeout: float = typer.Option(
        HostConfig.clarify_timeout, "--clarify-timeout", help="Seconds per question."
    ),
    max_frame: int = typer.Option(
        HostConfig.max_frame_bytes, "--max-frame-bytes", help="Largest WebSocket frame."
    ),
    model_timeout: float | None = ModelTimeoutOpt,
    max_tries: int = MaxTriesOpt,
    turn_timeout: float = TurnTimeoutOpt,
    keep_alive: int = typer.Option(
        KEEP_ALIVE_SECONDS,
        "--timeout-keep-alive",
        min=1,
        help="Seconds an idle HTTP keep-alive connection stays open.",
    ),
) -> None:
    """Serve agents over WebSocket (/ws) and REST (/v1); docs at /docs."""
    import uvicorn

    from neta.server import create_app, uvicorn_options

    token = token or os.environ.get("NETA_TOKEN") or None
    check_exposure(host, token)
    options: dict[str, object] = {
        "base_url": base_url,
        "api_key": api_key,
        "script": str(script) if script else None,
        "timeout": model_timeout,
    }
    pm = plugin_manager(ctx)
    provider, model = resolve_model_name(provider, model, pm)
    config = HostConfig(
        provider=provider or DEFAULT_PROVIDER,
        provider_options={k: v for k, v in options.items() if v is not None},
        model=model,
        workspace=(workspace or Path.cwd()).resolve(),
        toolsets=toolset,
        deny=deny,
        clarify_timeout=clarify_timeout,
        max_frame_bytes=max_frame,
        token=token,
        plugin_manager=pm,
        agent_options={"turn_timeout": turn_timeout, "retry": RetryPolicy(max_tries=max_tries)},
    )
    app = create_app(config)
    typer.echo(
        f"Neta serving on http://{host}:{port} (console /, WebSocket /ws, REST /v1, docs /docs)"
    )
    uvicorn.run(
        app,
        host=host,
        port=port,
        **uvicorn_options(config),
        timeout_graceful_shutdown=GRACEFUL_SECONDS,
        timeout_keep_alive=keep_alive,
        log_level="warning",
    )
