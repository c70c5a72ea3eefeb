"""The policy: a mode and ordered rules, and the decision for one tool call."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Literal

from neta.permissions import _commands, _paths
from neta.permissions._modes import DEFAULT_MODE, DEFAULTS, Action, Effect, Mode
from neta.permissions._rule import Rule
from neta.suggest import did_you_mean

COMMAND_TOOLS = frozenset({"bash"})
"""Tools whose ``command`` argument a rule's pattern is matched against; others' ``path``."""

_VERBS: dict[Action, str] = {"allow": "allows", "ask": "asks before", "deny": "denies"}


@dataclass(frozen=True)
class RuleSet:
    """What one source says: its rules in order, the mode it sets, what it was refused.

    Attributes:
        rules: the rules, in the order they are tried.
        mode: the mode it sets, if any.
        ignored: what was left out, one line each (allow rules of an untrusted workspace).
    """

    rules: tuple[Rule, ...] = ()
    mode: Mode | None = None
    ignored: tuple[str, ...] = ()


@dataclass(frozen=True)
class Decision:
    """What one tool call gets, and why.

    Attributes:
        action: ``allow``, ``ask`` or ``deny``.
        rules: the rules that decided it (several allow rules may cover the commands of one
            line between them); empty when the mode did.
        reason: one line for a person: which rule or mode decided, and what held an allow
            rule back.
    """

    action: Action
    rules: tuple[Rule, ...]
    reason: str

    @property
    def rule(self) -> Rule | None:
        """The rule that settled it, or ``None`` when the mode did."""
        return self.rules[-1] if self.rules else None


@dataclass(frozen=True)
class Policy:
    """A mode and ordered rules: the first rule that matches a call decides it.

    Attributes:
        mode: what a call no rule matches gets, by the tool's effect (``DEFAULTS``).
        rules: tried in order.
        ignored: what the sources left out, one line each, for a person to read.
    """

    mode: Mode = DEFAULT_MODE
    rules: tuple[Rule, ...] = ()
    ignored: tuple[str, ...] = ()

    @classmethod
    def from_sources(cls, sources: Iterable[RuleSet], *, mode: Mode | None = None) -> Policy:
        """Join rule sets, the first tried first: its rules come first and its mode wins.

        Give them as ``flag_rules``, the agent's and the host's, ``NETA_HOME``'s file, the
        workspace's ``ApprovalStore`` entries, then the workspace's file.

        Args:
            sources: the rule sets, in order.
            mode: the mode when no source sets one (``DEFAULT_MODE`` when this is ``None``).
        """
        listed = list(sources)
        modes = [source.mode for source in listed if source.mode is not None]
        return cls(
            mode=modes[0] if modes else mode or DEFAULT_MODE,
            rules=tuple(rule for source in listed for rule in source.rules),
            ignored=tuple(line for source in listed for line in source.ignored),
        )

    def decide(
        self,
        tool: str,
        *,
        toolset: str | None = None,
        effect: Effect,
        arguments: Mapping[str, Any],
        workspace: Path,
    ) -> Decision:
        """Decide one call: the first rule that matches it, else the mode's default.

        An allow rule with a pattern approves the commands of a ``bash`` line it matches;
        the line is allowed once allow rules tried in order have approved all of them, before
        any deny or ask rule matched. In mode ``read-only`` a tool that writes or runs is
        denied whatever the rules say.

        Args:
            tool: the tool's name.
            toolset: the toolset it belongs to (rules naming a toolset need it).
            effect: what the tool declares it does (``effect_of``).
            arguments: the call's validated arguments (``command`` for ``bash``, else
                ``path`` is what a rule's pattern is matched against).
            workspace: the session's workspace root.
        """
        call = _Call(
            tool,
            arguments,
            workspace,
            self._protects(workspace),
            edits_allowed=DEFAULTS[self.mode]["writes"] == "allow",
        )
        approving: list[Rule] = []
        approved: set[int] = set()
        notes: list[str] = []
        for rule in self.rules:
            if not rule.names(tool, toolset):
                continue
            if rule.action != "allow":
                matched = call.hit(rule.argument)
                if matched == "yes":
                    return self._decided(rule.action, (rule,), effect)
                if matched == "maybe":  # what it cannot read may be what the rule names
                    verb = "denied" if rule.action == "deny" else "asks first"
                    reason = (
                        f"{verb}: it may run what {rule} names (the line holds text the "
                        "shell makes up when it runs, or cannot be read in full)"
                    )
                    decided = self._decided(rule.action, (rule,), effect)
                    return Decision(decided.action, decided.rules, reason)
                continue
            if rule.argument is None:
                return self._decided("allow", (*approving, rule), effect)
            covered, note = call.covered(rule.argument)
            if note:
                notes.append(f"{rule} does not approve it: {note}")
            if covered - approved:
                approving.append(rule)
                approved |= covered
            if call.pieces and approved >= call.pieces:
                return self._decided("allow", tuple(approving), effect)
        action = DEFAULTS[self.mode][effect]
        reason = f"no rule decides it; mode {self.mode!r} {_VERBS[action]} a tool that {effect}"
        folder = call.protected_folder() if effect == "writes" and self.mode != "auto" else None
        if action == "allow" and folder is not None:
            action = "ask"
            reason = f"no rule decides it; it edits {folder}/, whose files run commands"
        return Decision(action, (), "; ".join(dict.fromkeys([reason, *notes])))

    def _protects(self, workspace: Path) -> Callable[[str], bool]:
        """Whether a deny or ask rule for a file tool's path speaks about a path."""
        patterns = [
            rule.argument
            for rule in self.rules
            if rule.action != "allow"
            and rule.argument is not None
            and rule.tool not in COMMAND_TOOLS
        ]

        def protects(path: str) -> bool:
            return any(_paths.hits(pattern, path, workspace) for pattern in patterns)

        return protects

    def check_tools(self, tools: Iterable[str], toolsets: Iterable[str] = ()) -> list[str]:
        """Warnings for rules that name no known tool or toolset, suggesting close names.

        Unknown names are allowed (the plugin may not be installed here), so these are
        warnings for a person, not errors.

        Args:
            tools: the names of the tools a session may have.
            toolsets: the names of the known toolsets (none given: toolsets are not checked).
        """
        tool_names, toolset_names = sorted(set(tools)), sorted(set(toolsets))
        warnings = []
        for rule in self.rules:
            if (
                rule.toolset != "*"
                and toolset_names
                and not any(fnmatchcase(name, rule.toolset) for name in toolset_names)
            ):
                warnings.append(_unknown(rule, "toolset", rule.toolset, toolset_names))
            if rule.tool != "*" and not any(fnmatchcase(name, rule.tool) for name in tool_names):
                warnings.append(_unknown(rule, "tool", rule.tool, tool_names))
        return warnings

    def _decided(self, action: Action, rules: tuple[Rule, ...], effect: Effect) -> Decision:
        named = ", ".join(str(rule) for rule in rules)
        if self.mode == "read-only" and effect != "reads" and action != "deny":
            reason = f"mode 'read-only' denies a tool that {effect}, whatever {named} says"
            return Decision("deny", (), reason)
        reasons = {"allow": "allowed by", "ask": "asks first:", "deny": "denied by"}
        return Decision(action, rules, f"{reasons[action]} {named}")


def _unknown(rule: Rule, kind: str, name: str, known: list[str]) -> str:
    hint = did_you_mean(name, known) or "a plugin that is not installed?"
    return f"{rule.source}: rule {rule.text!r} names no known {kind} {name!r}; {hint}"


class _Call:
    """One call's argument, read once for all the rules that look at it."""

    def __init__(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        workspace: Path,
        protects: Callable[[str], bool],
        *,
        edits_allowed: bool,
    ) -> None:
        self.workspace = workspace
        self.protects = protects
        self.edits_allowed = edits_allowed
        self.command: _commands.CommandLine | None = None
        self.path: str | None = None
        self.pieces: frozenset[int] = frozenset()
        if tool in COMMAND_TOOLS:
            command = arguments.get("command")
            if isinstance(command, str):
                self.command = _commands.command_line(command)
                self.pieces = frozenset(range(len(self.command.commands)))
        else:
            path = arguments.get("path")
            if isinstance(path, str):
                self.path = path
                self.pieces = frozenset({0})

    def protected_folder(self) -> str | None:
        """The folder of ``PROTECTED_FOLDERS`` the call's path leads into, if any."""
        if self.path is None:
            return None
        written, real = _paths.relative_paths(self.path, self.workspace)
        for place in (written, real):
            top = place.split("/", 1)[0] if place else None
            if top is not None and top.casefold() in _commands.PROTECTED_FOLDERS:
                return top
        return None

    def hit(self, pattern: str | None) -> Literal["yes", "maybe", "no"]:
        """Whether a deny or ask rule with ``pattern`` matches (what it cannot read: maybe)."""
        if pattern is None:
            return "yes"
        if self.command is not None:
            return _commands.hit(pattern, self.command)
        if self.path is not None:
            return "yes" if _paths.hits(pattern, self.path, self.workspace) else "no"
        return "yes"

    def covered(self, pattern: str) -> tuple[frozenset[int], str]:
        """What an allow rule with ``pattern`` approves, and why it holds back."""
        if self.command is not None:
            return _commands.covered(
                pattern,
                self.command,
                self.workspace,
                self.protects,
                edits_allowed=self.edits_allowed,
            )
        if self.path is not None:
            allowed, note = _paths.allows(pattern, self.path, self.workspace)
            return (self.pieces if allowed else frozenset()), note
        return frozenset(), "the call has no argument its pattern can be matched against"
