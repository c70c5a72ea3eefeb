"""The names help gives option values and arguments: one word in capitals, as click writes them.

Typer names a value by its Python type (``<str>``, ``<list[str]>``, ``<int range>``) and an
argument in braces (``{path}``). Help reads better, and alike in every command, when each
says what goes there: ``--session ID``, ``--max-turns N``, ``neta patch PATH``.
"""

from __future__ import annotations

from typing import Any

_BY_NAME = {
    "args": "JSON",
    "clarify_timeout": "SECONDS",
    "deny": "NAME",
    "http": "HOST:PORT",
    "keep_alive": "SECONDS",
    "lease_seconds": "SECONDS",
    "limit": "N",
    "max_frame": "BYTES",
    "max_tries": "N",
    "max_turns": "N",
    "model_timeout": "SECONDS",
    "new": "TEXT",
    "new_file": "FILE",
    "old": "TEXT",
    "old_file": "FILE",
    "session_id": "ID",
    "toolset": "NAME",
    "turn_timeout": "SECONDS",
    "workers": "N",
}


def name_values(command: Any) -> None:
    """Name each value of ``command`` (and its sub-commands) that has no name of its own.

    The name is the one in ``_BY_NAME``, else the parameter's name in capitals.
    """
    for param in command.params:
        if param.metavar is None and not getattr(param, "is_flag", False) and param.name:
            param.metavar = _BY_NAME.get(param.name, param.name.upper())
        if getattr(param, "param_type_name", "") == "argument":
            # its line under "Arguments" names it once (``PROMPT``), not with a type
            param.display_type_rich = _no_type
    for sub in getattr(command, "commands", {}).values():
        name_values(sub)


def _no_type(ctx: Any) -> None:
    return None
