"""``RunLimits``: the bounds of one run, which travel together from the host to each tool call."""

from __future__ import annotations

from dataclasses import dataclass

from neta.runtime.reply_check import DEFAULT_MAX_CALLS_PER_REPLY, DEFAULT_MAX_REPLY_CHARS

DEFAULT_MAX_TURNS = 50
"""Model turns per run before it stops with outcome ``max_turns``."""

DEFAULT_TOOL_TIMEOUT = 120.0
"""Seconds a tool call may take unless the tool sets its own ``timeout``."""

DEFAULT_OUTPUT_LIMIT = 30_000
"""Characters of one tool result the model sees; longer output keeps its head and tail."""

DEFAULT_TURN_TIMEOUT = 900.0
"""Seconds one model turn (one request and its whole reply) may take before the run ends."""

DEFAULT_OUTPUT_RETRIES = 2
"""How often an invalid typed answer is sent back to the model before the run fails."""


@dataclass(frozen=True)
class RunLimits:
    """The bounds of a run: how long it goes on and how much of each reply and result counts.

    ``Agent(limits=RunLimits(...))`` gives them all at once; ``Agent``'s keywords of the same
    names build one too.
    """

    max_turns: int = DEFAULT_MAX_TURNS
    """Model turns per run before it stops with outcome ``max_turns``."""

    tool_timeout: float = DEFAULT_TOOL_TIMEOUT
    """Seconds a tool call may take unless the tool sets its own ``timeout``."""

    output_limit: int = DEFAULT_OUTPUT_LIMIT
    """Characters of one tool result the model sees (longer output keeps its head and tail)."""

    turn_timeout: float | None = DEFAULT_TURN_TIMEOUT
    """Seconds one model turn may take in all, however the server trickles (``None``: no
    limit); past it the run ends with outcome ``error``."""

    max_calls_per_reply: int = DEFAULT_MAX_CALLS_PER_REPLY
    """Tool calls of one reply that run; the model is told about the rest."""

    max_reply_chars: int = DEFAULT_MAX_REPLY_CHARS
    """Characters of one reply accepted; a larger one runs no calls and the model is told to
    write less."""

    strict_schemas: bool = False
    """Whether tool schemas are sent in OpenAI strict mode."""

    output_retries: int = DEFAULT_OUTPUT_RETRIES
    """For a run with an ``output_type``: how often an invalid final answer is sent back to
    the model with what is wrong, before the run fails with ``OutputValidationError``."""
