"""The root ``neta`` command: global options, plugin commands, and one-line errors."""

from __future__ import annotations

import sys
import traceback
from dataclasses import dataclass

import typer

from neta.cli import (
    demo_cmd,
    mcp_cmd,
    patch_cmd,
    plugins_cmd,
    prompt_cmd,
    providers_cmd,
    run_cmd,
    serve_cmd,
    tools_cmd,
    toolsets_cmd,
)
from neta.errors import ConfigError, NetaError
from neta.plugins import NetaPluginManager, create_plugin_manager

app = typer.Typer(
    name="neta",
    help="Neta: tool-using LLM agents whose tools come from plugins.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
"""The root ``neta`` command; plugins add commands through ``neta_commands``."""
app.command("demo")(demo_cmd.demo)
app.command("run")(run_cmd.run)
app.command("chat")(run_cmd.chat)
app.command("prompt")(prompt_cmd.prompt)
app.command("serve")(serve_cmd.serve)
app.command("plugins")(plugins_cmd.plugins)
app.command("providers")(providers_cmd.providers)
app.command("toolsets")(toolsets_cmd.toolsets)
app.command("patch")(patch_cmd.patch)
app.add_typer(tools_cmd.tools_app, name="tools")
app.add_typer(mcp_cmd.mcp_app, name="mcp")


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
            typer.echo(f"Warning: {problem}", err=True)
        self.reported = len(self.pm.problems)


@app.callback()
def _root(
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks for errors."),
) -> None:
    """Neta: tool-using LLM agents whose tools come from plugins."""


def main(argv: list[str] | None = None) -> None:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``) and exit."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    _tolerate_unencodable_output()
    code = 0
    state: CliState | None = None
    try:
        state = CliState(create_plugin_manager(), debug)
        state.pm.notify("neta_commands", app=app)
        app(args=args, prog_name="neta", obj=state)
    except SystemExit as exc:  # typer's standalone mode ends every run this way
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
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


def _tolerate_unencodable_output() -> None:
    """Show ``?`` for characters the terminal's encoding lacks, rather than fail on them."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and getattr(stream, "errors", "strict") == "strict":
            reconfigure(errors="replace")


def _report(exc: BaseException, debug: bool, *, code: int) -> int:
    if debug:
        traceback.print_exception(exc)
    typer.echo(f"Error: {exc}", err=True)
    return code
