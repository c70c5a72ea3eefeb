"""The options several commands share, so that each means the same everywhere."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from neta.cli.secret_file import secret_option
from neta.permissions import RuleSet, flag_rules
from neta.providers.registry import DEFAULT_PROVIDER, provider_entries
from neta.providers.retry import DEFAULT_MAX_TRIES
from neta.runtime.attempt import DEFAULT_TURN_TIMEOUT
from neta.sandbox import MODES, SandboxPolicy

if TYPE_CHECKING:
    from neta.plugins import NetaPluginManager


def _existing_directory(value: Path | None) -> Path | None:
    """Check ``--workspace`` before anything runs: it must name an existing directory."""
    if value is None:
        return None
    if not value.exists():
        raise typer.BadParameter(f"{str(value)!r} does not exist; create it or pick another")
    if not value.is_dir():
        raise typer.BadParameter(f"{str(value)!r} is a file, not a directory")
    return value.resolve()


def show_installed_providers(command: Any, pm: NetaPluginManager) -> None:
    """Name ``pm``'s providers in the help of each ``--provider`` option of ``command``.

    ``command`` is the click command built from the app; its sub-commands are done too. The
    option then reads ``--provider [openai|scripted|...]``.
    """
    names = "|".join(entry.spec.name for entry in provider_entries(pm))
    for param in command.params:
        if param.name == "provider":
            param.metavar = f"[{names}]"
    for sub in getattr(command, "commands", {}).values():
        show_installed_providers(sub, pm)


ProviderOpt = typer.Option(
    None,
    "--provider",
    "-p",
    metavar="NAME",  # the installed providers' names once the plugins are loaded (main)
    help=f"Model provider (see `neta providers`; default: the model's provider: prefix, "
    f"scripted with --script, else {DEFAULT_PROVIDER}).",
    show_default=False,
)
"""``--provider``: the model provider's name."""
ModelOpt = typer.Option(
    "",
    "--model",
    "-m",
    metavar="MODEL",
    help="Model name, or provider:model. [env var: OPENAI_MODEL, for openai]",
    show_default=False,
)
"""``--model``: the model name, maybe prefixed with its provider (``anthropic:claude-…``)."""
BaseUrlOpt = typer.Option(
    None,
    "--base-url",
    metavar="URL",
    help="The provider's API root (openai: …/v1). [env var: OPENAI_BASE_URL, for openai]",
)
"""``--base-url``: the provider's API root."""
ApiKeyOpt = typer.Option(
    None,
    "--api-key",
    metavar="KEY",
    help="API key. [env var: OPENAI_API_KEY, for openai; see `neta providers`]",
    show_default=False,
)
"""``--api-key``: the API key."""
ApiKeyFileOpt = typer.Option(
    None,
    "--api-key-file",
    metavar="FILE",
    help="Read the API key from FILE (chmod 600), unlike --api-key hidden from `ps`.",
    show_default=False,
)
"""``--api-key-file``: a file holding the API key."""
TokenFileOpt = typer.Option(
    None,
    "--token-file",
    metavar="FILE",
    help="Read the required token from FILE (chmod 600), unlike --token hidden from `ps`.",
    show_default=False,
)
"""``--token-file``: a file holding the token a served command requires."""
ScriptOpt = typer.Option(
    None, "--script", metavar="FILE", help="JSON script to replay (implies --provider scripted)."
)
"""``--script``: the scripted provider's JSON script."""
WorkspaceOpt = typer.Option(
    None,
    "--workspace",
    "-w",
    metavar="DIR",
    help="Workspace root (default: the current directory).",
    callback=_existing_directory,
)
"""``--workspace``: the workspace root; checked to be an existing directory."""
ToolsetOpt = typer.Option(
    [], "--toolset", "-t", metavar="NAME", help="Request a toolset (repeatable)."
)
"""``--toolset``: a toolset to request (repeatable)."""
DenyOpt = typer.Option([], "--deny", metavar="NAME", help="Deny a toolset (repeatable).")
"""``--deny``: a toolset to deny (repeatable)."""
OnlyOpt = typer.Option(
    [], "--only", metavar="NAME", help="Exactly these toolsets, no defaults (repeatable)."
)
"""``--only``: exactly these toolsets (repeatable)."""
MaxTurnsOpt = typer.Option(50, "--max-turns", min=1, help="Model turns before stopping.")
"""``--max-turns``: model turns before the run stops."""
NoInputOpt = typer.Option(False, "--no-input", help="Never ask the user; clarify degrades.")
"""``--no-input``: never ask the user."""
MaxTriesOpt = typer.Option(
    DEFAULT_MAX_TRIES, "--max-tries", min=1, help="Tries per model request (rate limits, 5xx)."
)
"""``--max-tries``: tries per model request before a retryable failure is final."""
ModelTimeoutOpt = typer.Option(
    None,
    "--model-timeout",
    min=0.001,
    help="Seconds the model server may stay silent, per read (default: the provider's; "
    "300 for openai).",
)
"""``--model-timeout``: seconds the model server may stay silent (per read)."""
TurnTimeoutOpt = typer.Option(
    DEFAULT_TURN_TIMEOUT,
    "--turn-timeout",
    min=0.001,
    help="Seconds one model turn may take in all before the run ends with an error.",
)
"""``--turn-timeout``: seconds one model turn (request and whole reply) may take."""


def _sandbox_mode(value: str) -> str:
    if value not in MODES:
        raise typer.BadParameter(f"{value!r} is not one of {', '.join(MODES)}")
    return value


SandboxOpt = typer.Option(
    "on",
    "--sandbox",
    metavar="on|off",
    help="Run the model's commands in the bubblewrap sandbox (off: with your full authority).",
    callback=_sandbox_mode,
)
"""``--sandbox``: whether commands run sandboxed."""
NetworkOpt = typer.Option(
    False, "--network", help="Let sandboxed commands reach the network (off by default)."
)
"""``--network``: let sandboxed commands reach the network."""


ModeOpt = typer.Option(
    None,
    "--mode",
    metavar="MODE",
    help="What runs without asking when no rule decides: ask (the default: edits and "
    "commands ask), auto-edit (commands ask), auto (everything runs), read-only.",
)
"""``--mode``: the permission mode."""
AllowRuleOpt = typer.Option(
    [], "--allow", metavar="RULE", help="Allow calls a rule matches, e.g. 'bash(pytest *)'."
)
"""``--allow``: an allow rule (repeatable)."""
AskRuleOpt = typer.Option(
    [], "--ask", metavar="RULE", help="Ask before calls a rule matches, e.g. 'bash(git push*)'."
)
"""``--ask``: an ask rule (repeatable)."""
DenyRuleOpt = typer.Option(
    [], "--deny-rule", metavar="RULE", help="Refuse calls a rule matches, e.g. 'write_file(.env)'."
)
"""``--deny-rule``: a deny rule (repeatable; ``--deny`` denies a toolset)."""


def permissions_for(mode: str | None, allow: list[str], ask: list[str], deny: list[str]) -> RuleSet:
    """The rules ``--mode``, ``--allow``, ``--ask`` and ``--deny-rule`` give."""
    return flag_rules(mode=mode, allow=allow, ask=ask, deny=deny, flags={"deny": "--deny-rule"})


def sandbox_for(mode: str, network: bool) -> SandboxPolicy:
    """The policy ``--sandbox`` and ``--network`` ask for."""
    return SandboxPolicy(enabled=mode == "on", network=network)


def provider_for(provider: str | None, script: Path | None) -> str | None:
    """The provider a command names: ``--script`` alone means the scripted one."""
    if provider is None and script is not None:
        return "scripted"
    return provider


def api_key_option(api_key: str | None, api_key_file: Path | None) -> str | None:
    """The API key ``--api-key`` (with a warning) or ``--api-key-file`` gives, if either does.

    Raises:
        typer.BadParameter: both are given, or the file gives no key.
    """
    instead = "its environment variable (OPENAI_API_KEY for openai; see `neta providers`)"
    return secret_option(api_key, api_key_file, option="--api-key", instead=instead)
