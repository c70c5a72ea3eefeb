"""``neta doctor``: whether this machine confines the model's commands; where data is kept."""

from __future__ import annotations

import shutil
import subprocess

import typer
from rich.console import Console
from rich.markup import escape

from neta.cli.context import echo_json
from neta.home import neta_home
from neta.sandbox import BWRAP_VARIABLE, sandbox_unavailable


def sandbox_line() -> str:
    """One line saying whether commands are sandboxed here, and if not, what to do."""
    reason = sandbox_unavailable()
    if reason is not None:
        return (
            f"commands: NOT sandboxed here: {reason.removeprefix('commands cannot be sandboxed: ')}"
        )
    return f"commands: sandboxed ({_bwrap_version()}; network off unless --network)"


def _bwrap_version() -> str:
    binary = shutil.which("bwrap") or "bwrap"
    try:
        done = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return "bubblewrap"
    return done.stdout.strip() or "bubblewrap"


def doctor(
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Say whether the model's commands run sandboxed here, and where Neta keeps its data.

    Exits 1 when commands cannot be sandboxed (install bubblewrap, or choose --sandbox off).
    """
    reason = sandbox_unavailable()
    if as_json:
        echo_json(
            {
                "sandbox": {"available": reason is None, "reason": reason},
                "neta_home": str(neta_home()),
            }
        )
    else:
        console = Console(highlight=False)
        console.print(escape(sandbox_line()))
        console.print(f"bubblewrap binary: {BWRAP_VARIABLE} or bwrap on PATH")
        console.print(escape(f"NETA_HOME: {neta_home()}"))
    raise typer.Exit(0 if reason is None else 1)
