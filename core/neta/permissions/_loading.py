"""Rule sets from where rules are written: a TOML file, a mapping, command-line flags.

A rules file (``NETA_HOME/permissions.toml``, a workspace's ``.neta/permissions.toml``)::

    mode = "ask"
    allow = ["bash(pytest *)", "read_file"]
    ask = ["bash(git push*)"]
    deny = ["bash(rm -rf *)", "write_file(.env)"]

Within one source deny rules are tried first, then ask rules, then allow rules, each list in
its order: ``deny = ["bash(git push*)"]`` holds against ``allow = ["bash(git *)"]``.
"""

from __future__ import annotations

import errno
import functools
import os
import re
import stat
import tomllib
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from neta.errors import ConfigError, os_reason
from neta.permissions._modes import DEFAULT_MODE, MODES, Action, Mode, wider
from neta.permissions._policy import RuleSet
from neta.permissions._rule import Rule, RuleSyntaxError, rule_from_text
from neta.suggest import unknown_name_message
from neta.trust import CONFIG_FOLDER

HOME_FILE = "permissions.toml"
"""The user's rules file, in ``NETA_HOME``."""

WORKSPACE_FILE = f"{CONFIG_FOLDER}/permissions.toml"
"""A workspace's rules file, relative to its root."""

KEYS = ("mode", "allow", "ask", "deny")
"""The keys a rules file may hold."""

_ORDER: tuple[Action, ...] = ("deny", "ask", "allow")
_UNTRUSTED = (
    "ignored: the workspace is not trusted, so its rules may only deny or ask "
    "(trust it with `neta trust`)"
)
_TOML_PLACE = re.compile(r"\s*\(at line (\d+), column (\d+)\)$")

_Where = Callable[[str, int | None], tuple[str, str]]
"""For a key (and an entry's index): the source a rule records, and the place errors name."""


def load_rules(path: Path, label: str, *, may_allow: bool) -> RuleSet:
    """The rules of a TOML rules file; none when it does not exist.

    Args:
        path: the file.
        label: how its rules name their source, followed by the line
            (``NETA_HOME/permissions.toml`` gives ``NETA_HOME/permissions.toml:12``).
        may_allow: false for a workspace that is not trusted: its allow rules, and a mode
            wider than ``DEFAULT_MODE``, are left out and listed in ``RuleSet.ignored``.

    Raises:
        ConfigError: the file cannot be read, is not TOML, holds an unknown key or mode, or an
            entry that is no rule; the message names the file and the line.
    """
    try:
        text = _read_bounded(path)
    except FileNotFoundError:
        return RuleSet()
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read rules: {os_reason(exc)}") from exc
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(_toml_error(path, text, exc)) from None

    @functools.cache
    def entry_lines(key: str) -> list[int | None]:
        entries = data.get(key)
        return _entry_lines(text, key, entries if isinstance(entries, list) else [])

    def where(key: str, index: int | None) -> tuple[str, str]:
        line = entry_lines(key)[index] if index is not None else None
        line = line or _key_line(text, key)
        suffix = f":{line}" if line else ""
        return label + suffix, f"{path}{suffix}"

    return _rule_set(data, label, may_allow=may_allow, where=where)


MAX_RULES_BYTES = 1 << 20
"""The largest rules file read (a repository's may be anything: a FIFO, ``/dev/zero``)."""


def _read_bounded(path: Path) -> str:
    """The text of a regular file of at most ``MAX_RULES_BYTES``, else ``OSError``."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO must not block the open
    with os.fdopen(descriptor, "rb") as file:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        data = file.read(MAX_RULES_BYTES + 1)
    if len(data) > MAX_RULES_BYTES:
        raise OSError(errno.EFBIG, f"larger than {MAX_RULES_BYTES} bytes")
    return data.decode("utf-8")


def rules_from_mapping(
    data: Mapping[str, object], source: str, *, may_allow: bool = True
) -> RuleSet:
    """The rules of a mapping shaped like a rules file (``Agent(permissions=...)``, a host's).

    Raises:
        ConfigError: an unknown key or mode, or an entry that is no rule; the message starts
            with ``source``.
    """
    return _rule_set(data, source, may_allow=may_allow, where=lambda _key, _index: (source, source))


def flag_rules(
    *,
    mode: str | None = None,
    allow: Iterable[str] = (),
    ask: Iterable[str] = (),
    deny: Iterable[str] = (),
    flags: Mapping[Action, str] | None = None,
) -> RuleSet:
    """The rules of the command line's ``--mode``, ``--allow``, ``--ask`` and ``--deny``.

    Args:
        mode: the mode, if given.
        allow: the allow rules, in order.
        ask: the ask rules, in order.
        deny: the deny rules, in order.
        flags: what each action's flag is called, for the rules' source and the errors
            (default ``--allow``, ``--ask``, ``--deny``; ``neta`` says ``--deny-rule``).

    Raises:
        ConfigError: an unknown mode or a flag's value that is no rule, named by its flag.
    """
    named = {action: f"--{action}" for action in _ORDER} | dict(flags or {})
    given = {"deny": list(deny), "ask": list(ask), "allow": list(allow)}
    rules = []
    for action in _ORDER:
        for text in given[action]:
            try:
                rules.append(rule_from_text(text, action, named[action]))
            except RuleSyntaxError as exc:
                raise ConfigError(f"{named[action]}: {exc}") from None
    return RuleSet(tuple(rules), None if mode is None else _mode(mode, "--mode"))


def _rule_set(data: Mapping[str, object], label: str, *, may_allow: bool, where: _Where) -> RuleSet:
    for key in data:
        if key not in KEYS:
            raise ConfigError(f"{where(key, None)[1]}: {unknown_name_message('key', key, KEYS)}")
    ignored = []
    mode = None if data.get("mode") is None else _mode(data["mode"], where("mode", None)[1])
    if mode is not None and not may_allow and wider(mode, DEFAULT_MODE):
        ignored.append(f"{where('mode', None)[0]}: mode {mode!r} {_UNTRUSTED}")
        mode = None
    rules: list[Rule] = []
    for action in _ORDER:
        entries = data.get(action, [])
        if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
            raise ConfigError(
                f"{where(action, None)[1]}: {action!r} must be a list of rules, "
                f'like {action} = ["bash(pytest *)", "read_file"]'
            )
        for index, text in enumerate(entries):
            source, place = where(action, index)
            try:
                rule = rule_from_text(text, action, source)
            except RuleSyntaxError as exc:
                raise ConfigError(f"{place}: {exc}") from None
            if action == "allow" and not may_allow:
                ignored.append(f"{source}: allow {text!r} {_UNTRUSTED}")
            else:
                rules.append(rule)
    return RuleSet(tuple(rules), mode, tuple(ignored))


def _mode(value: object, place: str) -> Mode:
    for mode in MODES:
        if value == mode:
            return mode
    raise ConfigError(f"{place}: {unknown_name_message('mode', str(value), MODES)}")


def _toml_error(path: Path, text: str, exc: tomllib.TOMLDecodeError) -> str:
    message = str(exc)
    found = _TOML_PLACE.search(message)
    if found:
        line, column = found.groups()
        return f"{path}:{line}: invalid TOML: {message[: found.start()]} (column {column})"
    if message.endswith("(at end of document)"):
        line = str(text.count("\n") + 1)
        return f"{path}:{line}: invalid TOML: {message.removesuffix(' (at end of document)')}"
    return f"{path}: invalid TOML: {message}"


def _key_line(text: str, key: str) -> int | None:
    """The line where ``key`` is set (``key = ...``) or opens a table (``[key]``)."""
    name = re.escape(key)
    found = re.search(
        rf"^[ \t]*(?:\[+[ \t]*)?(?:{name}|\"{name}\"|'{name}')[ \t]*(?:=|\])", text, re.M
    )
    return text.count("\n", 0, found.start()) + 1 if found else None


def _entry_lines(text: str, key: str, entries: list[object]) -> list[int | None]:
    """The line of each entry of array ``key``, found by its text after the key."""
    start = re.search(rf"^[ \t]*{re.escape(key)}[ \t]*=", text, re.M)
    position = start.end() if start else 0
    lines: list[int | None] = []
    for entry in entries:
        found = text.find(str(entry), position) if start and isinstance(entry, str) else -1
        lines.append(None if found < 0 else text.count("\n", 0, found) + 1)
        if found >= 0:
            position = found + len(str(entry))
    return lines
