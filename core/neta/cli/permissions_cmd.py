"""``neta permissions``: the mode and rules in force for a workspace, and "allow always" answers.

``list`` (the default) shows the mode and every rule with where it comes from, in the order
they are tried, what was left out (an untrusted workspace's allow rules) and rules naming no
known tool. ``remove`` forgets a rule an "allow always" answer kept; ``check`` says what one
call would get.
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from neta.cli.context import echo_json, plugin_manager
from neta.cli.options import WorkspaceOpt
from neta.cli.sanitize import sanitize_markup
from neta.cli.tables import folding_table
from neta.errors import ConfigError
from neta.permissions import (
    DEFAULT_MODE,
    ApprovalStore,
    Policy,
    RuleSet,
    effect_of,
    policy_sources,
)
from neta.plugins import NetaPluginManager
from neta.terminal_text import sanitize

permissions_app = typer.Typer(
    help="The permission rules in force: what runs, what asks first, what is refused.",
)
"""The ``neta permissions`` command group: list (the default), remove, check."""

JsonOpt = typer.Option(False, "--json", help="Print JSON.")


@permissions_app.callback(invoke_without_command=True)
def permissions(
    ctx: typer.Context, workspace: Path | None = WorkspaceOpt, as_json: bool = JsonOpt
) -> None:
    """List the mode and rules in force for the workspace (see `neta permissions list`)."""
    if ctx.invoked_subcommand is None:
        list_rules(ctx, workspace, as_json)


@permissions_app.command("list")
def list_rules(
    ctx: typer.Context, workspace: Path | None = WorkspaceOpt, as_json: bool = JsonOpt
) -> None:
    """List the mode and every rule in force, with its source, in the order they are tried.

    The sources: NETA_HOME/permissions.toml, the "allow always" answers kept for this
    workspace (NETA_HOME/approvals.json), and the workspace's .neta/permissions.toml (only its
    deny and ask rules unless the workspace is trusted). --mode, --allow, --ask and
    --deny-rule of `neta run` and `neta chat` come before them all.
    """
    where = _workspace(workspace)
    pm = _configured(ctx, where)
    trusted = pm.host.workspace_trusted()
    sources = policy_sources(where, trusted=trusted)
    policy = Policy.from_sources(rules for _, rules in sources)
    catalog = pm.catalog()
    warnings = policy.check_tools(
        [schema.name for schema in catalog], [spec.name for spec in pm.toolset_specs()]
    )
    mode_source = _mode_source(sources)
    if as_json:
        echo_json(
            {
                "workspace": str(where),
                "trusted": trusted,
                "mode": policy.mode,
                "mode_source": mode_source,
                "rules": [
                    {"action": rule.action, "rule": rule.text, "source": rule.source}
                    for rule in policy.rules
                ],
                "ignored": list(policy.ignored),
                "warnings": warnings,
            }
        )
        return
    out = Console(highlight=False)
    state = "trusted" if trusted else "not trusted: its own file may only deny or ask"
    out.print(f"workspace: {sanitize_markup(str(where))} ({state})")
    origin = "the default" if mode_source is None else f"from {sanitize_markup(mode_source)}"
    out.print(f"mode: [bold]{policy.mode}[/] ({origin})")
    if policy.rules:
        out.print("rules (the first that matches a call decides it):")
        table = folding_table("action", "rule", "source")
        for rule in policy.rules:
            table.add_row(rule.action, sanitize_markup(rule.text), sanitize_markup(rule.source))
        out.print(table)
    else:
        out.print(f"no rules: the mode decides every call ({DEFAULT_MODE!r} asks before edits)")
    for title, lines in (("ignored", policy.ignored), ("warnings", warnings)):
        if lines:
            out.print(f"{title}:")
            for line in lines:
                out.print(f"  {sanitize_markup(line)}", soft_wrap=True)


@permissions_app.command("remove")
def remove(
    rule: str = typer.Argument(
        ..., metavar="RULE", help="The rule, as `neta permissions` lists it.", show_default=False
    ),
    workspace: Path | None = WorkspaceOpt,
) -> None:
    """Forget an "allow always" answer: the calls it allowed ask again."""
    where = _workspace(workspace)
    store = ApprovalStore()
    if store.remove(where, rule):
        typer.echo(f"Forgot {sanitize(rule.strip())!r} for {sanitize(str(where))}.")
        return
    kept = store.entries(where)
    listed = ", ".join(repr(entry) for entry in kept) if kept else "none"
    typer.echo(
        f"Error: {sanitize(rule.strip())!r} is no 'allow always' answer for "
        f"{sanitize(str(where))} (those kept: {sanitize(listed)}); rules in a rules file are "
        "changed by editing it (`neta permissions` names it)",
        err=True,
    )
    raise typer.Exit(1)


@permissions_app.command("check")
def check(
    ctx: typer.Context,
    tool: str = typer.Argument(..., metavar="TOOL", help="The tool's name.", show_default=False),
    arg: list[str] = typer.Option(
        [], "--arg", metavar="KEY=VALUE", help="An argument of the call (repeatable)."
    ),
    workspace: Path | None = WorkspaceOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Say what a call would get: allowed, asked about, or denied, and which rule decides."""
    where = _workspace(workspace)
    pm = _configured(ctx, where)
    schema = pm.catalog().get(tool)
    policy = Policy.from_sources(
        rules for _, rules in policy_sources(where, trusted=pm.host.workspace_trusted())
    )
    decision = policy.decide(
        schema.name,
        toolset=schema.toolset,
        effect=effect_of(schema.effect),
        arguments=_arguments(arg),
        workspace=where,
    )
    if as_json:
        echo_json(
            {
                "action": decision.action,
                "reason": decision.reason,
                "rules": [
                    {"action": r.action, "rule": r.text, "source": r.source} for r in decision.rules
                ],
            }
        )
        return
    typer.echo(f"{decision.action}: {sanitize(decision.reason)}")


def _mode_source(sources: list[tuple[str, RuleSet]]) -> str | None:
    """The source whose mode is in force; ``None`` when none sets one (the default)."""
    return next((name for name, rules in sources if rules.mode is not None), None)


def _arguments(given: list[str]) -> dict[str, str]:
    arguments = {}
    for item in given:
        key, equals, value = item.partition("=")
        if not equals or not key.strip():
            raise typer.BadParameter(f"{item!r} is not KEY=VALUE", param_hint="--arg")
        arguments[key.strip()] = value
    return arguments


def _configured(ctx: typer.Context, workspace: Path) -> NetaPluginManager:
    """The plugin manager serving ``workspace``: its catalog holds that workspace's tools."""
    pm = plugin_manager(ctx)
    pm.configure_host(workspace)
    return pm


def _workspace(path: Path | None) -> Path:
    workspace = (path or Path.cwd()).resolve()
    if not workspace.is_dir():
        raise ConfigError(f"{str(workspace)!r} is not a directory")
    return workspace
