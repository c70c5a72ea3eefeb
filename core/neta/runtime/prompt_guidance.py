"""The fixed texts of the system prompt, and the tool-use rules built from available tools."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from neta.catalog import Catalog

IDENTITY = (
    "You are Neta, an agent that completes tasks in the user's workspace by calling tools. "
    "You are careful with the user's files: you change only what the task needs."
)
"""The opening of every system prompt."""

DISCIPLINE_RULES = (
    "Act through your tools: when a step needs doing, call the tool that does it in this reply.",
    "Do not describe what you are about to do; do it.",
    'Never end a reply with a promise such as "next I will ..."; either make that call now or '
    "stop because the work is done.",
    "Keep going until the task is completely done, or until you truly need the user.",
    "Every reply either advances the task with a tool call or delivers the final result.",
    "When a tool returns an error, read it, fix the cause and try again; do not repeat the "
    "same failing call.",
)
"""The rules every session gets, whatever its tools."""

# These two rules name a tool, so each appears only when that tool is available.
_RULES_NEEDING_A_TOOL = (
    ("read_file", "Read before you modify: read a file with read_file before you change it."),
    ("bash", "Check the working directory with bash before you assume what files exist."),
)


def get_tool_use_enforcement(tool_names: Sequence[str], catalog: Catalog) -> str:
    """The "how to use tools" section for a session offering exactly ``tool_names``.

    It holds the discipline rules, then one "when you must use a tool" line per available tool
    that declares one (its schema's ``when_to_use``), then the rules that need ``read_file`` or
    ``bash``, only if those are available. No line names a tool outside ``tool_names``: a
    scenario that names a catalog tool the session lacks is left out.
    """
    missing = catalog_tools_missing(catalog, tool_names)
    lines = ["# Using tools", *(f"- {rule}" for rule in DISCIPLINE_RULES)]
    scenarios = [
        line
        for name in tool_names
        if (line := drop_lines_naming(catalog.get(name).when_to_use.strip(), missing))
    ]
    if scenarios:
        lines += ["", "## When you must use a tool", *(f"- {line}" for line in scenarios)]
    extra = [rule for tool, rule in _RULES_NEEDING_A_TOOL if tool in tool_names]
    if extra:
        lines += ["", *(f"- {rule}" for rule in extra)]
    return "\n".join(lines)


def catalog_tools_missing(catalog: Catalog, tool_names: Sequence[str]) -> list[str]:
    """The catalog's tools that are not among ``tool_names`` (what no prompt line may name)."""
    available = set(tool_names)
    return [schema.name for schema in catalog if schema.name not in available]


def drop_lines_naming(text: str, names: Sequence[str]) -> str:
    """``text`` without the lines that name any of ``names`` as a word (tool names)."""
    if not names or not text:
        return text
    return _drop_lines(text, tuple(names))


@functools.lru_cache(maxsize=1024)
def _drop_lines(text: str, names: tuple[str, ...]) -> str:
    # a host builds the same prompts for session after session: the same guidance, the same
    # missing tools
    pattern = _mention_pattern(names)
    return "\n".join(line for line in text.splitlines() if not pattern.search(line)).strip()


@functools.lru_cache(maxsize=64)
def _mention_pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, names)) + r")(?![\w-])")
