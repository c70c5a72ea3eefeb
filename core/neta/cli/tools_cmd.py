"""``neta tools``: list, show and call the catalog's tools by hand."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

from neta.cli.clarify_prompt import terminal_clarify
from neta.cli.context import cli_session, echo_json, plugin_manager
from neta.cli.doctor_cmd import sandbox_line
from neta.cli.options import AgentOptions, DenyOpt, OnlyOpt, ToolsetOpt, WorkspaceOpt
from neta.cli.sanitize import sanitize_markup
from neta.cli.tables import folding_table
from neta.errors import ConfigError, NetaError, ToolError
from neta.terminal_text import sanitize

tools_app = typer.Typer(help="List, inspect and call tools.", no_args_is_help=True)
"""The ``neta tools`` command group: list, show, call."""


@tools_app.command("list")
def list_tools(
    ctx: typer.Context,
    toolset: list[str] = ToolsetOpt,
    deny: list[str] = DenyOpt,
    only: list[str] = OnlyOpt,
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List the registered tools, their toolset and plugin, and whether a session gets them.

    -t, --deny and --only choose the toolsets as they do for neta run; the "on" column says
    whether such a session gets each tool: "yes" only for a tool its plugin built. With
    --only, only those toolsets' tools are listed.
    """
    pm = plugin_manager(ctx)
    options = AgentOptions.from_flags(toolset=toolset, deny=deny, only=only)
    with cli_session(pm, options) as session:
        resolution = session.toolsets  # an unknown name failed, as for neta run
        built = set(session.tools)
    catalog = pm.catalog()  # the session's: built for the toolsets chosen (no server denied)
    schemas = [s for s in catalog if not only or s.toolset in only]

    def why_off(name: str, toolset: str) -> str:
        if toolset not in resolution.enabled:
            return resolution.decision(toolset).reason
        return "" if name in built else "it could not be built: its plugin failed (see the warning)"

    if as_json:
        echo_json(
            [
                {
                    "name": s.name,
                    "toolset": s.toolset,
                    "plugin": catalog.plugin_of(s.name),
                    "enabled": s.name in built,
                    "reason": why_off(s.name, s.toolset),
                    "description": s.description,
                }
                for s in schemas
            ]
        )
        return
    table = folding_table("tool", "toolset", "plugin", "on", "description")
    for s in schemas:
        on = "yes" if s.name in built else "no"
        if s.toolset in resolution.enabled and s.name not in built:
            on = "no (not built)"
        summary = s.description.splitlines()[0]
        cells = (s.name, s.toolset, catalog.plugin_of(s.name), on, summary)
        table.add_row(*(sanitize_markup(cell) for cell in cells))
    console = Console()
    console.print(table if schemas else "No tools registered.")
    console.print(escape(sandbox_line()), highlight=False)


@tools_app.command("show")
def show_tool(ctx: typer.Context, name: str = typer.Argument(..., help="Tool name.")) -> None:
    """Show a tool's description, guidance and JSON schema."""
    schema = plugin_manager(ctx).catalog().get(name)
    typer.echo(sanitize(f"{schema.name}  (toolset {schema.toolset})\n"))
    typer.echo(sanitize(schema.description))
    if schema.when_to_use:
        typer.echo(f"\nWhen to use: {sanitize(schema.when_to_use)}")
    if schema.guidance:
        typer.echo(f"\n{sanitize(schema.guidance)}")
    typer.echo("\nArguments (JSON schema):")
    echo_json(schema.parameters())


@tools_app.command("call")
def call_tool(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="Tool name."),
    args: str = typer.Option("{}", "--args", help="Arguments as a JSON object."),
    workspace: Path | None = WorkspaceOpt,
) -> None:
    """Build a terminal session, validate the arguments and run one tool; print its result."""
    pm = plugin_manager(ctx)
    if workspace is not None:  # the workspace's configuration may bring tools of its own
        pm.configure_host(workspace.resolve())
    schema = pm.catalog().get(name)
    try:
        data = json.loads(args)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"--args is not valid JSON: {exc.msg} at position {exc.pos}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"--args must be a JSON object, not {type(data).__name__}")
    try:
        validated = schema.validate_arguments(data)
    except ToolError as exc:
        raise ConfigError(str(exc)) from None
    ask = None
    if sys.stdin is not None and sys.stdin.isatty():  # a question is asked on the terminal
        ask = terminal_clarify(console=Console(stderr=True, highlight=False))
    options = AgentOptions.from_flags(workspace=workspace, toolset=[schema.toolset])
    with cli_session(pm, options, clarify=ask) as session:
        decision = session.toolsets.decision(schema.toolset)
        if not decision.enabled:
            raise ConfigError(f"toolset {schema.toolset!r} is off here: {decision.reason}")
        if name not in session.tools:
            raise NetaError(f"tool {name!r} could not be built for this session (see warnings)")
        try:
            result = asyncio.run(session.tools[name].tool.invoke(validated))
        except ToolError as exc:  # what the model would read: the tool refused
            raise NetaError(f"{name}: {exc}") from exc
        except Exception as exc:
            raise NetaError(f"tool {name!r} raised {type(exc).__name__}: {exc}") from exc
    typer.echo(sanitize(result.content))
    if result.is_error:
        raise typer.Exit(1)
