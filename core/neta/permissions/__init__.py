"""Approvals: which tool calls run, which ask a person first, which are refused.

A ``Policy`` is a mode and ordered rules. ``Policy.decide`` tries the rules in order and the
first that matches a call decides it; when none does, the mode decides by what the tool
declares it does (its ``Effect``: it reads, writes, or runs something):

    mode        reads   writes  runs
    read-only   allow   deny    deny     (also when a rule allows: nothing writes or runs)
    ask         allow   ask     ask      (the default)
    auto-edit   allow   allow   ask
    auto        allow   allow   allow    (for a sandbox or a script)

A tool that declares no effect (a third-party plugin's, an MCP server's without
``readOnlyHint``) runs something (``effect_of``).

Rules are written ``TOOL`` or ``TOOL(PATTERN)``:

- ``bash``, ``write_file``: a tool by name; ``toolset:base``: every tool of a toolset;
  ``mcp-github``: every tool of MCP server ``github`` (its toolset); ``mcp-github.get_*``: some
  of them. Names take ``*`` and ``?`` wildcards (``mcp-*``).
- ``bash(pytest *)``: a command pattern, matched against each command of the line
  (``_commands``); ``*`` is any text, and a trailing `` *`` may match nothing.
- ``write_file(src/**)``: a path pattern for a tool's ``path`` argument, a ``.gitignore``-like
  glob relative to the workspace, matched after ``..`` and symlinks are resolved (``_paths``).

What a rule cannot judge never passes an allow rule (a command substitution, ``bash -c``, a
path leading out of the workspace) and does match a deny or ask rule (a path it cannot
place, a line too deeply nested to read). The rules keep a person in the loop; the sandbox
is what contains a command.

Sources, tried in this order (``Policy.from_sources``); the first that sets a mode wins:

1. the command line: ``--mode``, ``--allow``, ``--ask``, ``--deny`` (``flag_rules``);
2. the program: ``Agent(permissions=...)``, then the host's settings (``rules_from_mapping``);
3. the user: ``NETA_HOME/permissions.toml`` (``load_rules``);
4. the user's "allow always" answers for this workspace (``ApprovalStore``);
5. the workspace: ``.neta/permissions.toml``, which may only deny or ask (and set a mode no
   wider than ``ask``) unless the workspace is trusted: ``load_rules(..., may_allow=False)``
   leaves its allow rules out and lists them in ``RuleSet.ignored``.

Within one source deny rules come first, then ask rules, then allow rules.
"""

from neta.permissions._approvals import ApprovalStore, allow_rules_for
from neta.permissions._asking import (
    CHOICE_LABELS,
    ApprovalAnswer,
    ApprovalRequest,
    ApproveFn,
    Choice,
    Denial,
    answer_from_text,
    approve_by_clarify,
    offered_choices,
    preview_arguments,
)
from neta.permissions._loading import (
    HOME_FILE,
    KEYS,
    WORKSPACE_FILE,
    flag_rules,
    load_rules,
    rules_from_mapping,
)
from neta.permissions._modes import (
    DEFAULT_MODE,
    DEFAULTS,
    MODES,
    Action,
    Effect,
    Mode,
    effect_of,
)
from neta.permissions._policy import COMMAND_TOOLS, Decision, Policy, RuleSet
from neta.permissions._rule import Rule, parse_rule
from neta.permissions._shell import Redirect, ShellCommand, SimpleCommand, parse_command
from neta.permissions._sources import PermissionsLike, given_rules, policy_for, policy_sources

__all__ = [
    "CHOICE_LABELS",
    "COMMAND_TOOLS",
    "DEFAULTS",
    "DEFAULT_MODE",
    "HOME_FILE",
    "KEYS",
    "MODES",
    "WORKSPACE_FILE",
    "Action",
    "ApprovalAnswer",
    "ApprovalRequest",
    "ApprovalStore",
    "ApproveFn",
    "Choice",
    "Decision",
    "Denial",
    "Effect",
    "Mode",
    "PermissionsLike",
    "Policy",
    "Redirect",
    "Rule",
    "RuleSet",
    "ShellCommand",
    "SimpleCommand",
    "allow_rules_for",
    "answer_from_text",
    "approve_by_clarify",
    "effect_of",
    "flag_rules",
    "given_rules",
    "load_rules",
    "offered_choices",
    "parse_command",
    "parse_rule",
    "policy_for",
    "policy_sources",
    "preview_arguments",
    "rules_from_mapping",
]
