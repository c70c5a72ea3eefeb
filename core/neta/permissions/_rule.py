"""One rule: an action, the tools it names, an optional argument pattern, where it came from."""

from __future__ import annotations

import re
from dataclasses import dataclass
from fnmatch import fnmatchcase

from neta.errors import ConfigError
from neta.permissions._modes import Action

TOOLSET_PREFIX = "toolset:"
"""``toolset:NAME`` names every tool of toolset ``NAME``."""

MCP_PREFIX = "mcp-"
"""What an MCP server's toolset is called: ``mcp-NAME`` names every tool of server ``NAME``."""

_NAME = re.compile(r"^[A-Za-z0-9_*?-]{1,64}$")


class RuleSyntaxError(Exception):
    """A rule's text does not parse; caught and reported as a ``ConfigError`` with its place."""

    def __init__(self, text: str, why: str) -> None:
        super().__init__(f"invalid rule {text!r}: {why}")


@dataclass(frozen=True)
class Rule:
    """One allow, ask or deny rule.

    Attributes:
        action: what a call the rule matches gets.
        text: the rule as written (``bash(pytest *)``).
        source: where it came from (``--allow``, ``NETA_HOME/permissions.toml:12``).
        tool: a glob over tool names (``*`` for any).
        toolset: a glob over toolset names (``*`` for any).
        argument: the command or path pattern between the parentheses, if any.
    """

    action: Action
    text: str
    source: str
    tool: str = "*"
    toolset: str = "*"
    argument: str | None = None

    def names(self, tool: str, toolset: str | None) -> bool:
        """Whether the rule speaks about tool ``tool`` of toolset ``toolset``."""
        if not fnmatchcase(tool, self.tool):
            return False
        return self.toolset == "*" or (toolset is not None and fnmatchcase(toolset, self.toolset))

    def __str__(self) -> str:
        return f"{self.text} ({self.source})"


def parse_rule(text: str, action: Action, source: str) -> Rule:
    """Parse one rule as written on the command line or in a rules file.

    ``TOOL`` or ``TOOL(PATTERN)``, where ``TOOL`` is a tool name (``bash``), ``TOOLSET.TOOL``
    (``mcp-github.create_issue``), ``toolset:NAME`` or an MCP server's toolset (``mcp-github``);
    names may hold ``*`` and ``?`` wildcards (``mcp-*``, ``mcp-github.get_*``).

    Raises:
        ConfigError: the text is no rule; the message starts with ``source``.
    """
    try:
        return rule_from_text(text, action, source)
    except RuleSyntaxError as exc:
        raise ConfigError(f"{source}: {exc}") from None


def rule_from_text(text: str, action: Action, source: str) -> Rule:
    """``parse_rule`` raising ``RuleSyntaxError``, for callers that know the place better."""
    written = text.strip()
    name, argument = written, None
    if "(" in written:
        name, _, argument = written.partition("(")
        name = name.strip()
        if not argument.endswith(")"):
            raise RuleSyntaxError(text, "the ')' closing its pattern is missing")
        argument = argument[:-1]
        if not argument.strip():
            raise RuleSyntaxError(text, f"an empty pattern; write {name!r} for every call")
    elif ")" in written:
        raise RuleSyntaxError(text, "a ')' with no '(' before it")
    if not name:
        raise RuleSyntaxError(text, "no tool named")
    toolset, tool = _tool_names(name)
    for part in (toolset, tool):
        if not _NAME.match(part):
            raise RuleSyntaxError(
                text,
                f"{part!r} is no tool or toolset name "
                "(letters, digits, '_' and '-', with '*' and '?' as wildcards)",
            )
    return Rule(action, written, source, tool=tool, toolset=toolset, argument=argument)


def _tool_names(name: str) -> tuple[str, str]:
    """The toolset glob and the tool glob a rule's name stands for."""
    if name.startswith(TOOLSET_PREFIX):
        return name[len(TOOLSET_PREFIX) :], "*"
    if "." in name:
        toolset, _, tool = name.partition(".")
        return toolset, tool
    if name.startswith(MCP_PREFIX):
        return name, "*"
    return "*", name
