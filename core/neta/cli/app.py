"""The root ``neta`` command: global options, plugin commands, and one-line errors."""

from __future__ import annotations

import importlib.metadata
import os
import sys
import traceback
from dataclasses import dataclass
from typing import Any

import typer

from neta.cli import (
    chat_cmd,
    demo_cmd,
    doctor_cmd,
    logs_cmd,
    mcp_cmd,
    models_cmd,
    patch_cmd,
    permissions_cmd,
    plugins_cmd,
    prompt_cmd,
    providers_cmd,
    run_cmd,
    serve_cmd,
    tools_cmd,
    toolsets_cmd,
    trust_cmd,
)
from neta.cli.collector import freeze_startup_objects, own_process
from neta.cli.context import echo_json
from neta.cli.metavars import name_values
from neta.cli.options import show_installed_providers
from neta.cli.plugin_env import unknown_disabled_plugins
from neta.cli.run_cmd import failed_run_json
from neta.cli.undumpable import make_undumpable
from neta.errors import ConfigError, NetaError
from neta.plugins import NetaPluginManager, create_plugin_manager
from neta.terminal_text import sanitize

app = typer.Typer(
    name="neta",
    help="Neta: tool-using LLM agents whose tools come from plugins.\n\n"
    "Conversations, chat history and memory are kept in NETA_HOME (default ~/.neta). "
    "[env var: NETA_HOME]",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    rich_markup_mode=None,
)
"""The root ``neta`` command; plugins add commands through ``neta_commands``."""
app.command("demo")(demo_cmd.demo)
app.command("doctor")(doctor_cmd.doctor)
app.command("trust")(trust_cmd.trust)
app.command("untrust")(trust_cmd.untrust)
app.command("run")(run_cmd.run)
app.command("chat")(chat_cmd.chat)
app.command("logs")(logs_cmd.logs)
app.command("prompt")(prompt_cmd.prompt)
app.command("serve")(serve_cmd.serve)
app.command("plugins")(plugins_cmd.plugins)
app.command("providers")(providers_cmd.providers)
app.command("models")(models_cmd.models)
app.command("toolsets")(toolsets_cmd.toolsets)
app.command("patch")(patch_cmd.patch)
app.add_typer(tools_cmd.tools_app, name="tools")
app.add_typer(mcp_cmd.mcp_app, name="mcp")
app.add_typer(permissions_cmd.permissions_app, name="permissions")


@dataclass
class CliState:
    """What every command can reach through ``ctx.obj``.

    Attributes:
        pm: the plugin manager of this invocation.
        debug: whether ``--debug`` was given.
        reported: how many of ``pm.problems`` have been shown already.
    """

    pm: NetaPluginManager
    debug: bool = False
    reported: int = 0

    def report_problems(self) -> None:
        """Show the plugin problems not shown yet, one ``Warning:`` line each."""
        for problem in self.pm.problems[self.reported :]:
            if self.debug and problem.__cause__ is not None:
                traceback.print_exception(problem.__cause__)
            typer.echo(f"Warning: {sanitize(str(problem))}", err=True)
        self.reported = len(self.pm.problems)


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"neta {importlib.metadata.version('neta')}")
        raise typer.Exit()


@app.callback()
def _root(
    debug: bool = typer.Option(
        False, "--debug", help="Show tracebacks for errors (also after the command)."
    ),
    version: bool = typer.Option(
        False, "--version", help="Show the version and exit.", callback=_show_version, is_eager=True
    ),
) -> None:
    """Neta: tool-using LLM agents whose tools come from plugins."""


def main(argv: list[str] | None = None) -> None:
    """Run the command line with ``argv`` and exit.

    Without ``argv`` (the ``neta`` script, ``python -m neta``) the process is the command's own:
    it runs ``sys.argv[1:]``, becomes undumpable first (``neta.cli.undumpable``: the same
    user's other processes cannot read its token and keys) and keeps its start-up objects out
    of later garbage collections (``neta.cli.collector``).
    """
    if argv is None:
        make_undumpable()
        own_process()
    _click_completion_names()
    args, debug = _take_debug(list(sys.argv[1:] if argv is None else argv))
    _tolerate_unencodable_output()
    code = 0
    state: CliState | None = None
    try:
        state = CliState(create_plugin_manager(), debug)
        for warning in unknown_disabled_plugins():
            typer.echo(f"Warning: {sanitize(warning)}", err=True)
        state.pm.notify("neta_commands", app=app)
        freeze_startup_objects()  # the core, the plugins and their commands are loaded
        command = typer.main.get_command(app)
        name_values(command)
        if _options(args) & {"-h", "--help"}:  # only help reads them: no plugin is asked else
            show_installed_providers(command, state.pm)
        returned = command.main(args=args, prog_name="neta", obj=state, standalone_mode=False)
        code = returned if isinstance(returned, int) else 0
    except typer.Exit as exc:
        code = exc.exit_code
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except typer.Abort:  # Ctrl-C at one of click's own prompts
        typer.echo("\nInterrupted.", err=True)
        code = 130
    except typer.TyperException as exc:  # a usage error: an unknown option, a bad value
        code = _report_usage(exc, args)
    except NetaError as exc:
        code = _report(exc, debug, code=2 if isinstance(exc, ConfigError) else 1)
    except KeyboardInterrupt:
        code = 130
    except Exception as exc:
        code = _report(exc, debug, code=1)
    finally:
        if state is not None:
            state.report_problems()
    raise SystemExit(code)


COMPLETE_VARIABLE = "_NETA_COMPLETE"
"""Set to ``bash_source`` (``zsh_source``, ``fish_source``), ``neta`` prints its completion
script for that shell; ``neta --show-completion`` prints the current shell's."""


def _click_completion_names() -> None:
    """Read click's names of the completion steps (``bash_source``) as typer's (``source_bash``).

    Both conventions then work.
    """
    shell, _, step = os.environ.get(COMPLETE_VARIABLE, "").partition("_")
    if step in ("source", "complete") and shell in ("bash", "zsh", "fish"):
        os.environ[COMPLETE_VARIABLE] = f"{step}_{shell}"


def _tolerate_unencodable_output() -> None:
    """Show ``?`` for characters the terminal's encoding lacks, rather than fail on them."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and getattr(stream, "errors", "strict") == "strict":
            reconfigure(errors="replace")


def _take_debug(args: list[str]) -> tuple[list[str], bool]:
    """``--debug`` anywhere before ``--`` (after the sub-command too), taken out of ``args``."""
    end = args.index("--") if "--" in args else len(args)
    kept = [a for a in args[:end] if a != "--debug"] + args[end:]
    return kept, len(kept) != len(args)


def _report_usage(exc: typer.TyperException, args: list[str]) -> int:
    """A usage error as one line, ending with where to read the command's help.

    A command or group given without the arguments it needs (``neta``, ``neta tools``) is not
    an error: its help is printed as ``-h`` prints it, and the exit status is 0.

    ``neta run --json`` also prints it on stdout, as the JSON result of a run that failed: a
    script reading stdout gets JSON whatever went wrong.
    """
    ctx = getattr(exc, "ctx", None)
    if type(exc).__name__ == "NoArgsIsHelpError" and ctx is not None:
        # `neta`, `neta tools`: nothing went wrong, the user asks what there is to do
        typer.echo(ctx.get_help())
        return 0
    where = ctx.command_path if ctx is not None else "neta"
    message = " ".join(str(getattr(exc, "format_message", exc.__str__)()).split())
    if ctx is not None and ctx.command.name == "run" and "--json" in _options(args, ctx.command):
        echo_json(failed_run_json(message))
    typer.echo(f"Error: {sanitize(message)} (see '{where} -h')", err=True)
    code = getattr(exc, "exit_code", 2)
    return code if isinstance(code, int) else 2


def _options(args: list[str], command: Any = None) -> set[str]:
    """The options ``args`` give, up to ``--``.

    The value of one of ``command``'s options that take one is not an option: in
    ``--model --json``, ``--json`` names a model.
    """
    taking = {
        name
        for param in getattr(command, "params", ())
        if getattr(param, "takes_value", not getattr(param, "is_flag", False))
        for name in getattr(param, "opts", ())
        if name.startswith("-")
    }
    given: set[str] = set()
    words = iter(args)
    for word in words:
        if word == "--":
            break
        given.add(word)
        if word in taking:
            next(words, None)
    return given


def _report(exc: BaseException, debug: bool, *, code: int) -> int:
    if debug:
        traceback.print_exception(exc)
    if isinstance(exc, NetaError):
        message = str(exc)
    else:  # a bug, not the user's doing: say so, rather than show the internals as the error
        message = (
            f"unexpected {type(exc).__name__} (a bug in Neta or a plugin); "
            "run again with --debug for the traceback and report it"
        )
    typer.echo(
        f"Error: {sanitize(message)}",  # as said: a quoted text's spaces are part of it
        err=True,
    )
    return code
