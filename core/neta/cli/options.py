"""The options several commands share, so that each means the same everywhere."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from neta.cli.secret_file import secret_option
from neta.permissions import RuleSet, flag_rules
from neta.providers.registry import DEFAULT_PROVIDER, provider_entries
from neta.providers.retry import DEFAULT_MAX_TRIES
from neta.runtime.limits import DEFAULT_TURN_TIMEOUT
from neta.sandbox import MODES, SandboxPolicy

if TYPE_CHECKING:
    from neta.plugins import NetaPluginManager


_MAX_TURNS = 50


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
FallbackOpt = typer.Option(
    [],
    "--fallback",
    metavar="MODEL",
    help="A model to ask when the one before fails for good (a bad key, an overload or 5xx once "
    "retries are spent, a context too long); provider:model, repeatable.",
    show_default=False,
)
"""``--fallback``: a fallback model (repeatable), asked in the order given."""
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
MaxTurnsOpt = typer.Option(_MAX_TURNS, "--max-turns", min=1, help="Model turns before stopping.")
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


@dataclass(frozen=True)
class RuleFlags:
    """The permission rules as ``--mode``, ``--allow``, ``--ask`` and ``--deny-rule`` gave them.

    Kept as text: ``neta serve`` hands them to its workers, and they are read (a mistake told)
    when the command needs them.
    """

    mode: str | None = None
    allow: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()

    def rules(self) -> RuleSet:
        """The rules these flags give.

        Raises:
            ConfigError: an unknown mode, or a flag's value that is no rule.
        """
        return flag_rules(
            mode=self.mode,
            allow=self.allow,
            ask=self.ask,
            deny=self.deny,
            flags={"deny": "--deny-rule"},
        )


@dataclass(frozen=True)
class AgentOptions:
    """What a command's shared flags say about the agent it builds, parsed once.

    ``from_flags`` makes it from the flags; ``build_agent``, ``neta serve``, ``neta mcp
    serve`` and the commands inspecting tools read it. A command lacking a flag gets its default.
    """

    provider: str | None = None
    """The provider named (``--script`` alone names the scripted one); ``None``: by the model."""
    model: str = ""
    fallbacks: tuple[str, ...] = ()
    """The models ``--fallback`` names, in order."""
    base_url: str | None = None
    api_key: str | None = None
    """From ``--api-key`` or ``--api-key-file``."""
    script: Path | None = None
    workspace: Path | None = None
    """``None``: the current directory."""
    toolsets: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    only: tuple[str, ...] = ()
    max_turns: int = _MAX_TURNS
    max_tries: int = DEFAULT_MAX_TRIES
    model_timeout: float | None = None
    turn_timeout: float = DEFAULT_TURN_TIMEOUT
    sandbox: SandboxPolicy = field(default_factory=SandboxPolicy)
    rules: RuleFlags = field(default_factory=RuleFlags)

    def permissions(self) -> RuleSet:
        """The permission rules of the flags (see ``RuleFlags.rules``)."""
        return self.rules.rules()

    def provider_options(self) -> dict[str, object]:
        """The provider's ``base_url``, ``api_key`` and ``script`` (``None`` when not given)."""
        return {
            "base_url": self.base_url,
            "api_key": self.api_key,
            "script": str(self.script) if self.script else None,
        }

    def workspace_and_toolsets(self) -> dict[str, Any]:
        """``Agent``'s ``workspace``, ``toolsets``, ``deny`` and ``preset`` arguments."""
        return {
            "workspace": self.workspace or Path.cwd(),
            "toolsets": self.toolsets,
            "deny": self.deny,
            "preset": self.only or None,
        }

    @classmethod
    def from_flags(
        cls,
        *,
        provider: str | None = None,
        model: str = "",
        fallback: Sequence[str] = (),
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_file: Path | None = None,
        script: Path | None = None,
        workspace: Path | None = None,
        toolset: Sequence[str] = (),
        deny: Sequence[str] = (),
        only: Sequence[str] = (),
        max_turns: int = _MAX_TURNS,
        max_tries: int = DEFAULT_MAX_TRIES,
        model_timeout: float | None = None,
        turn_timeout: float = DEFAULT_TURN_TIMEOUT,
        sandbox: str = "on",
        network: bool = False,
        mode: str | None = None,
        allow: Sequence[str] = (),
        ask: Sequence[str] = (),
        deny_rule: Sequence[str] = (),
    ) -> AgentOptions:
        """The options of a command's parsed flags, each keyword named as its parameter.

        The API key is read now (its warning or error comes first); the permission rules when
        ``permissions`` is called.

        Raises:
            typer.BadParameter: ``--api-key`` and ``--api-key-file`` both given, or the file gives
                no key.
        """
        instead = "its environment variable (OPENAI_API_KEY for openai; see `neta providers`)"
        return cls(
            provider="scripted" if provider is None and script is not None else provider,
            model=model,
            fallbacks=tuple(fallback),
            base_url=base_url,
            api_key=secret_option(api_key, api_key_file, option="--api-key", instead=instead),
            script=script,
            workspace=workspace,
            toolsets=tuple(toolset),
            deny=tuple(deny),
            only=tuple(only),
            max_turns=max_turns,
            max_tries=max_tries,
            model_timeout=model_timeout,
            turn_timeout=turn_timeout,
            sandbox=SandboxPolicy(enabled=sandbox == "on", network=network),
            rules=RuleFlags(mode, tuple(allow), tuple(ask), tuple(deny_rule)),
        )
