"""Modes, effects and actions: what a call gets when no rule speaks about it."""

from __future__ import annotations

from typing import Literal

Effect = Literal["reads", "writes", "runs"]
"""What a tool does: reads files, writes them, or runs something (a command, a server's tool)."""

Mode = Literal["ask", "auto-edit", "auto", "read-only"]
"""How much runs without asking when no rule matches."""

Action = Literal["allow", "ask", "deny"]
"""What happens to one call: it runs, a person is asked first, or it is refused."""

MODES: tuple[Mode, ...] = ("read-only", "ask", "auto-edit", "auto")
"""Every mode, from the narrowest to the widest (each allows at least what the one before does)."""

DEFAULT_MODE: Mode = "ask"
"""The mode when no source sets one: reads run, edits and commands ask."""

DEFAULTS: dict[Mode, dict[Effect, Action]] = {
    "read-only": {"reads": "allow", "writes": "deny", "runs": "deny"},
    "ask": {"reads": "allow", "writes": "ask", "runs": "ask"},
    "auto-edit": {"reads": "allow", "writes": "allow", "runs": "ask"},
    "auto": {"reads": "allow", "writes": "allow", "runs": "allow"},
}
"""The action for a call no rule matched, by mode and by the tool's effect."""


def effect_of(declared: Effect | None = None, *, read_only_hint: bool | None = None) -> Effect:
    """The effect of a tool: what it declares, else ``reads`` for an MCP ``readOnlyHint``.

    A tool that declares nothing (a third-party plugin's, an MCP server's) counts as one that
    runs something: the widest effect, so that no mode lets it through unasked by mistake.
    """
    if declared is not None:
        return declared
    return "reads" if read_only_hint else "runs"


def wider(mode: Mode, than: Mode) -> bool:
    """Whether ``mode`` lets more through without asking than ``than``."""
    return MODES.index(mode) > MODES.index(than)
