"""``neta serve``: the WebSocket gateway and the REST service in one process."""

from __future__ import annotations

import asyncio
import dataclasses
import errno
import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from neta.cli.collector import freeze_startup_objects, own_process
from neta.cli.context import plugin_manager
from neta.cli.options import (
    AgentOptions,
    AllowRuleOpt,
    ApiKeyFileOpt,
    ApiKeyOpt,
    AskRuleOpt,
    BaseUrlOpt,
    DenyOpt,
    DenyRuleOpt,
    MaxTriesOpt,
    ModelOpt,
    ModelTimeoutOpt,
    ModeOpt,
    NetworkOpt,
    OnlyOpt,
    ProviderOpt,
    RuleFlags,
    SandboxOpt,
    ScriptOpt,
    TokenFileOpt,
    ToolsetOpt,
    TurnTimeoutOpt,
    WorkspaceOpt,
)
from neta.cli.otel import OtelOpt, start_exporting
from neta.cli.secret_file import read_secret_file
from neta.cli.serve_token import TOKEN_VARIABLE, given_token, serve_token
from neta.cli.start_failure import start_failures
from neta.cli.undumpable import make_undumpable
from neta.cli.worker_settings import ADDRESS_VARIABLE, SettingsHandout, receive_settings
from neta.errors import ConfigError
from neta.home import neta_home
from neta.hosting.auth import served_url
from neta.hosting.config import HostConfig
from neta.hosting.engines import database_url, describe_store, redis_url
from neta.providers.registry import DEFAULT_PROVIDER, resolve_model_name
from neta.providers.retry import RetryPolicy
from neta.safe_url import safe_url

if TYPE_CHECKING:
    from fastapi import FastAPI

KEEP_ALIVE_SECONDS = 75
"""How long an idle HTTP keep-alive connection stays open. Longer than the pool expiry of
common clients (httpx 5 s, aiohttp 15 s), so that the client, not the server, closes it: a
server closing at the moment the client reuses the connection makes that request fail."""

DRAIN_SECONDS = 30.0
"""How long a stopping server lets its runs go on before it cuts them (``--drain-timeout``)."""

CLOSING_SECONDS = 5.0
"""How much longer than the drain a stopping server waits for its connections to close."""


def serve(
    ctx: typer.Context,
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind."),
    port: int = typer.Option(8765, "--port", help="Port to bind."),
    provider: str | None = ProviderOpt,
    model: str = ModelOpt,
    base_url: str | None = BaseUrlOpt,
    api_key: str | None = ApiKeyOpt,
    api_key_file: Path | None = ApiKeyFileOpt,
    script: Path | None = ScriptOpt,
    workspace: Path | None = WorkspaceOpt,
    toolset: list[str] = ToolsetOpt,
    deny: list[str] = DenyOpt,
    only: list[str] = OnlyOpt,
    token: str | None = typer.Option(
        None, "--token", help="Required token (or NETA_TOKEN); else one is made and printed."
    ),
    token_file: Path | None = TokenFileOpt,
    metrics_token_file: Path | None = typer.Option(
        None,
        "--metrics-token-file",
        metavar="FILE",
        help="Read from FILE a second token that opens /metrics only (for a scraper).",
        show_default=False,
    ),
    clarify_timeout: float = typer.Option(
        HostConfig.clarify_timeout, "--clarify-timeout", help="Seconds per question."
    ),
    max_frame: int = typer.Option(
        HostConfig.max_frame_bytes, "--max-frame-bytes", help="Largest WebSocket frame."
    ),
    body_timeout: float = typer.Option(
        HostConfig.body_timeout,
        "--body-timeout",
        min=0.1,
        help="Seconds a client has to send a whole request body (else 408).",
    ),
    model_timeout: float | None = ModelTimeoutOpt,
    max_tries: int = MaxTriesOpt,
    turn_timeout: float = TurnTimeoutOpt,
    workers: int = typer.Option(
        1,
        "--workers",
        min=1,
        help="Worker processes; more than one needs NETA_REDIS_URL (and a shared store).",
    ),
    lease_seconds: float = typer.Option(
        HostConfig.lease_seconds,
        "--lease-seconds",
        min=0.5,
        help="Seconds before a dead worker's sessions are taken over.",
    ),
    drain_timeout: float = typer.Option(
        DRAIN_SECONDS,
        "--drain-timeout",
        min=0,
        help="Seconds a stopping server (SIGTERM) lets its runs finish before cutting them.",
    ),
    session_ttl: str | None = typer.Option(
        None,
        "--session-ttl",
        metavar="DURATION",
        help="Delete sessions nobody used for this long (e.g. 30d, 12h, 90m); default: keep.",
    ),
    keep_alive: int = typer.Option(
        KEEP_ALIVE_SECONDS,
        "--timeout-keep-alive",
        min=1,
        help="Seconds an idle HTTP keep-alive connection stays open.",
    ),
    sandbox: str = SandboxOpt,
    network: bool = NetworkOpt,
    mode: str | None = ModeOpt,
    allow: list[str] = AllowRuleOpt,
    ask: list[str] = AskRuleOpt,
    deny_rule: list[str] = DenyRuleOpt,
    otel: bool = OtelOpt,
) -> None:
    """Serve agents over WebSocket (/ws) and REST (/v1), described at /openapi.json."""
    from neta.hosting.hub import check_config
    from neta.server import create_app, uvicorn_options

    options = AgentOptions.from_flags(
        provider=provider, model=model, base_url=base_url, api_key=api_key,
        api_key_file=api_key_file, script=script, workspace=workspace, toolset=toolset,
        deny=deny, only=only, max_tries=max_tries, model_timeout=model_timeout,
        turn_timeout=turn_timeout, sandbox=sandbox, network=network, mode=mode, allow=allow,
        ask=ask, deny_rule=deny_rule,
    )  # fmt: skip
    required = serve_token(given_token(token, token_file), host)
    pm = plugin_manager(ctx)
    provider, model = resolve_model_name(options.provider, options.model, pm)
    given = {**options.provider_options(), "timeout": options.model_timeout}
    settings: dict[str, Any] = {
        "provider": provider or DEFAULT_PROVIDER,
        "provider_options": {k: v for k, v in given.items() if v is not None},
        "model": model,
        "workspace": str((options.workspace or Path.cwd()).resolve()),
        "toolsets": list(options.toolsets),
        "deny": list(options.deny),
        "clarify_timeout": clarify_timeout,
        "max_frame_bytes": max_frame,
        "body_timeout": body_timeout,
        "token": required.value,
        "metrics_token": (
            None
            if metrics_token_file is None
            else read_secret_file(metrics_token_file, "--metrics-token-file")
        ),
        "lease_seconds": lease_seconds,
        "drain_seconds": drain_timeout,
        "session_ttl": None if session_ttl is None else duration_seconds(session_ttl),
        "turn_timeout": options.turn_timeout,
        "max_tries": options.max_tries,
        "only": list(options.only),
        "sandbox": {"enabled": options.sandbox.enabled, "network": options.sandbox.network},
        # the rules as given (the workers read them again): a mistake in one fails here
        "permissions": dataclasses.asdict(options.rules),
    }
    options.permissions()
    db_url, bus_url = database_url(), redis_url()
    if workers > 1 and bus_url is None:
        raise ConfigError(
            f"--workers {workers} needs a shared bus: set NETA_REDIS_URL=redis://… "
            "(a client's answer must reach the worker running its session)"
        )
    check_port_free(host, port)
    # each worker process starts its own export (worker_app)
    settings["otel"] = start_exporting(otel) is not None
    config = _config(settings, pm)
    home = config.home or neta_home()
    with start_failures(describe_store(home, db_url)):  # one line, exit 2
        if workers == 1:
            served = create_app(config)  # its agent, store and bus: errors told before serving
        else:  # each worker makes its own: a configuration none could use fails here, once
            check_config(config)
    bus_name = "in-process" if bus_url is None else f"Redis {safe_url(bus_url)}"

    def announce() -> None:
        typer.echo(
            f"Neta serving on {served_url(host, port)} "
            "(console /, WebSocket /ws, REST /v1, OpenAPI spec /openapi.json)"
        )
        typer.echo(f"store: {describe_store(home, db_url)}; bus: {bus_name}; workers: {workers}")
        required.announce(served_url(host, port))

    common: dict[str, Any] = {
        "host": host,
        "port": port,
        **uvicorn_options(config),
        # the hub's drain ends the runs and lets the clients go; then uvicorn stops waiting
        "timeout_graceful_shutdown": drain_timeout + CLOSING_SECONDS,
        "timeout_keep_alive": keep_alive,
        "log_level": "warning",
    }
    if workers == 1:
        freeze_startup_objects(serving=True)  # FastAPI, uvicorn and the plugins are loaded
        _serve_app(served, common, describe_store(home, db_url), announce)
        return
    announce()
    # Each worker process builds its own app from these settings (with all installed plugins).
    from neta.cli.worker_supervisor import run_workers
    from neta.gateway.handshake import protocol_import_strings
    from neta.hosting.metrics import shared_metrics_directory

    os.environ.pop(TOKEN_VARIABLE, None)  # the workers, and what they run, need not inherit it
    common.update(protocol_import_strings())
    # the workers write their metrics in one private directory, and each reads them all
    with SettingsHandout(settings) as handout, shared_metrics_directory():
        os.environ[ADDRESS_VARIABLE] = handout.address
        run_workers(f"{__name__}:worker_app", workers, common)


def _serve_app(
    app: FastAPI, options: dict[str, Any], store: str, announce: Callable[[], None]
) -> None:
    """Serve ``app`` in this process: its hub started first, in the loop that serves it.

    A hub that cannot start (the store failing right after the app was made) is then one
    ``Error:`` line and exit 2, as every failed start is, not uvicorn's traceback and exit 3.
    The app's lifespan stops the hub and sends the last spans as the server stops.
    """
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, **options))
    loop_factory = getattr(server.config, "get_loop_factory", None)  # newer uvicorn
    if loop_factory is None:
        server.config.setup_event_loop()

    async def serve() -> None:
        with start_failures(store):
            await app.state.hub.start()
        announce()
        await server.serve()

    try:
        with asyncio.Runner(loop_factory=loop_factory() if loop_factory else None) as runner:
            runner.run(serve())
    except KeyboardInterrupt:  # uvicorn raises the Ctrl-C it caught again once it has stopped
        pass
    if not server.started:
        raise typer.Exit(3)  # uvicorn has said why (uvicorn.run exits so too)


def _config(settings: dict[str, Any], pm: Any) -> HostConfig:
    agent_options = {
        "turn_timeout": settings["turn_timeout"],
        "retry": RetryPolicy(max_tries=settings["max_tries"]),
        **({"preset": settings["only"]} if settings.get("only") else {}),
        "sandbox": settings["sandbox"],
    }
    return HostConfig(
        provider=settings["provider"],
        provider_options=settings["provider_options"],
        model=settings["model"],
        workspace=Path(settings["workspace"]),
        toolsets=settings["toolsets"],
        deny=settings["deny"],
        clarify_timeout=settings["clarify_timeout"],
        max_frame_bytes=settings["max_frame_bytes"],
        body_timeout=settings.get("body_timeout", HostConfig.body_timeout),
        token=settings["token"],
        metrics_token=settings.get("metrics_token"),
        lease_seconds=settings["lease_seconds"],
        drain_seconds=settings.get("drain_seconds", DRAIN_SECONDS),
        session_ttl=settings.get("session_ttl"),
        plugin_manager=pm,
        permissions=RuleFlags(**settings["permissions"]).rules(),
        agent_options=agent_options,
    )


def worker_app() -> Any:
    """The app of one ``neta serve --workers N`` worker process (a uvicorn app factory)."""
    make_undumpable()  # as the command's own process is, and before it holds the settings
    from neta.plugins import create_plugin_manager
    from neta.server import create_app

    own_process()  # a worker process uvicorn started for this command
    settings = receive_settings()
    if settings.get("otel"):
        start_exporting(True)  # sent when the worker exits
    served = create_app(_config(settings, create_plugin_manager()))
    freeze_startup_objects(serving=True)
    return served


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def duration_seconds(text: str) -> float:
    """Seconds in ``text``: a number of seconds, or one with a unit (``30d``, ``12h``, ``90m``).

    Raises:
        typer.BadParameter: ``text`` is not such a duration, or not above zero.
    """
    given = text.strip().lower()
    unit = _UNITS.get(given[-1:], 0)
    number = given[:-1] if unit else given
    try:
        seconds = float(number) * (unit or 1)
    except ValueError:
        seconds = 0.0
    if not seconds > 0 or seconds == float("inf"):
        raise typer.BadParameter(
            f"{text!r} is not a duration: give seconds or a number with s, m, h or d (30d)",
            param_hint="--session-ttl",
        )
    return seconds


def check_port_free(host: str, port: int) -> None:
    """Fail before serving when ``host:port`` cannot be bound (in use, or not this machine's).

    Raises:
        ConfigError: the address cannot be bound; the message says what to do (exit 2).
    """
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise ConfigError(f"cannot serve on {host}: {exc.strerror or exc}; check --host") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        if os.name != "nt":
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise ConfigError(
                    f"port {port} on {host} is already in use (another `neta serve`?); "
                    "stop it or pick another with --port"
                ) from None
            raise ConfigError(
                f"cannot serve on {host}:{port}: {exc.strerror or exc}; check --host and --port"
            ) from None
