"""``neta mcp``: serve Neta's tools to MCP clients (``serve``); the mcp plugin adds ``list``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import typer

from neta.cli.collector import freeze_startup_objects
from neta.cli.context import plugin_manager, report_problems
from neta.cli.mcp_clients import ClientSessions
from neta.cli.mcp_server import ServedSession, SessionServer
from neta.cli.options import (
    AgentOptions,
    AllowRuleOpt,
    AskRuleOpt,
    DenyOpt,
    DenyRuleOpt,
    ModeOpt,
    NetworkOpt,
    OnlyOpt,
    SandboxOpt,
    TokenFileOpt,
    ToolsetOpt,
    WorkspaceOpt,
)
from neta.cli.serve_token import ServeToken, given_token, serve_token
from neta.errors import ConfigError
from neta.hosting.auth import refusal, served_url
from neta.runtime.agent import Agent

mcp_app = typer.Typer(help="MCP both ways: Neta's tools for MCP clients.", no_args_is_help=True)
"""The ``neta mcp`` command group."""


@mcp_app.command("serve")
def serve(
    ctx: typer.Context,
    workspace: Path | None = WorkspaceOpt,
    toolset: list[str] = ToolsetOpt,
    deny: list[str] = DenyOpt,
    only: list[str] = OnlyOpt,
    http: str | None = typer.Option(
        None, "--http", help="Serve streamable HTTP on HOST:PORT instead of stdio."
    ),
    token: str | None = typer.Option(
        None,
        "--token",
        help="Required token over HTTP (or NETA_TOKEN); else one is made and printed.",
    ),
    token_file: Path | None = TokenFileOpt,
    sandbox: str = SandboxOpt,
    network: bool = NetworkOpt,
    mode: str | None = ModeOpt,
    allow: list[str] = AllowRuleOpt,
    ask: list[str] = AskRuleOpt,
    deny_rule: list[str] = DenyRuleOpt,
) -> None:
    """Serve a session's tools to an MCP client over stdio (or each client's over HTTP)."""
    options = AgentOptions.from_flags(
        workspace=workspace, toolset=toolset, deny=deny, only=only, sandbox=sandbox,
        network=network, mode=mode, allow=allow, ask=ask, deny_rule=deny_rule,
    )  # fmt: skip
    permissions = options.permissions()
    token = given_token(token, token_file)
    endpoint = _endpoint(http, token) if http else None
    agent = Agent(
        provider=None,
        plugin_manager=plugin_manager(ctx),
        **options.workspace_and_toolsets(),
        sandbox=options.sandbox,
        permissions=permissions,
    )
    session = agent.new_session(crew_runner=None)  # no model here: no sub-agents either
    report_problems(ctx)
    if endpoint is not None:  # each client gets a session of its own: this one showed problems
        agent.end_session(session)
        _serve_http(agent, *endpoint)
        return
    server = SessionServer.of(ServedSession(session, policy=agent.policy)).build()
    freeze_startup_objects()  # the MCP SDK is loaded
    try:
        asyncio.run(_serve_stdio(server))
    finally:
        agent.end_session(session)


async def _serve_stdio(server: Any) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def _serve_http(agent: Agent, host: str, port: int, token: ServeToken) -> None:
    import uvicorn

    from neta.service.security_headers import SecurityHeaders  # loads starlette: here

    clients = ClientSessions(agent)
    server = SessionServer(clients.session_for).build()
    freeze_startup_objects()  # the MCP SDK is loaded
    app = SecurityHeaders(_Guard(clients.http_app(server, host=host), token.value))
    typer.echo(f"Neta MCP server on {served_url(host, port)}/mcp", err=True)
    token.announce(f"{served_url(host, port)}/mcp")
    try:
        uvicorn.run(app, host=host, port=port, log_level="warning")
    finally:
        clients.close()


class _Guard:
    """Refuses HTTP requests the token rules of ``neta serve`` refuse (401/403, JSON body)."""

    def __init__(self, app: Any, token: str | None) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = {
                k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]
            }
            refused = refusal(
                self.token,
                authorization=headers.get("authorization"),
                origin=headers.get("origin"),
                server=scope.get("server"),
            )
            if refused is not None:
                status, message = refused
                body = json.dumps({"error": message}).encode()
                await send(
                    {
                        "type": "http.response.start",
                        "status": status,
                        "headers": [(b"content-type", b"application/json")],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def _endpoint(http: str, token: str | None) -> tuple[str, int, ServeToken]:
    host, port = _address(http)
    return host, port, serve_token(token, host)


def _address(text: str) -> tuple[str, int]:
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"--http wants HOST:PORT (e.g. 127.0.0.1:8766), not {text!r}")
    return host.strip("[]"), int(port)
