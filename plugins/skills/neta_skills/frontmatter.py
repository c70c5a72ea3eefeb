"""SKILL.md documents: the simple YAML front matter parsed and written without a YAML library.

The front matter is the block between a first line ``---`` and the next ``---`` line. Each
line in it is ``key: value``; a value may be plain, ``"double quoted"`` (JSON escapes) or
``'single quoted'`` (``''`` for a quote). Blank lines and ``#`` comment lines are allowed.
Anything YAML would read as more than a one-line string (an indented line, a list, a
mapping, a block scalar, a plain value holding ``": "`` or ``" #"``) is refused with the
line and the reason, rather than guessed at.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

import neta

MAX_SKILL_NAME_CHARS = 64
"""The longest skill name."""

SKILL_NAME_PATTERN = rf"^[a-z0-9][a-z0-9._-]{{0,{MAX_SKILL_NAME_CHARS - 1}}}$"
"""What a skill name (and its folder name) looks like."""

MAX_DESCRIPTION_CHARS = 1024
"""The longest description a skill may have."""

_NAME = re.compile(SKILL_NAME_PATTERN)
_KEY_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*):(?:[ \t]+(.*?))?[ \t]*$")
_SINGLE_QUOTED = re.compile(r"^'((?:[^']|'')*)'$")
_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")
_INDICATORS = frozenset("[]{}|>&*!%@`,?")
_DELIMITER = "---"


class SkillFormatError(neta.ToolError):
    """A SKILL.md is malformed; the message says where and why."""


@dataclass(frozen=True)
class SkillDocument:
    """A parsed SKILL.md.

    Attributes:
        name: the ``name`` field.
        description: the ``description`` field (one line).
        body: everything after the closing ``---`` line, as written.
        fields: every front-matter field, ``name`` and ``description`` included.
    """

    name: str
    description: str
    body: str
    fields: dict[str, str] = field(default_factory=dict)


def check_name(name: str) -> str:
    """Return ``name`` if it is a valid skill name; otherwise raise ``SkillFormatError``."""
    if not _NAME.fullmatch(name):
        raise SkillFormatError(
            f"invalid skill name {name!r}: use 1-64 lower-case letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return name


def check_description(description: str) -> str:
    """Return ``description`` stripped if it is usable; otherwise raise ``SkillFormatError``."""
    text = description.strip()
    if not text:
        raise SkillFormatError("the description is empty; say in one line when to use the skill")
    if "\n" in text or "\r" in text:
        raise SkillFormatError("the description must be a single line")
    if len(text) > MAX_DESCRIPTION_CHARS:
        raise SkillFormatError(
            f"the description is {len(text):,} characters long; the limit is "
            f"{MAX_DESCRIPTION_CHARS:,}"
        )
    return text


def parse_skill_md(text: str, *, expected_name: str | None = None) -> SkillDocument:
    """Parse a SKILL.md and check its ``name`` and ``description``.

    Args:
        text: the whole file.
        expected_name: the skill's folder name, which ``name`` must equal.

    Raises:
        SkillFormatError: the front matter is missing, unclosed or malformed, a field is
            missing or invalid, or ``name`` differs from ``expected_name``.
    """
    lines = _LINE.findall(text.removeprefix("\ufeff"))
    if not lines or lines[0].rstrip() != _DELIMITER:
        raise SkillFormatError(
            "SKILL.md must start with a '---' line that opens the front matter "
            "(name and description), closed by another '---' line"
        )
    fields: dict[str, str] = {}
    for number, raw in enumerate(lines[1:], start=2):
        line = raw.rstrip("\r\n")
        if line.rstrip() == _DELIMITER:
            document = _document(fields, "".join(lines[number:]))
            if expected_name is not None and document.name != expected_name:
                raise SkillFormatError(
                    f"the front matter names the skill {document.name!r} but its folder is "
                    f"{expected_name!r}; the two must be equal"
                )
            return document
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, value = _field(line, number)
        if key in fields:
            raise SkillFormatError(f"front matter line {number}: {key!r} is given twice")
        fields[key] = value
    raise SkillFormatError("the front matter is never closed: add a '---' line after its fields")


def render_skill_md(name: str, description: str, body: str) -> str:
    """A SKILL.md with ``name`` and ``description`` in its front matter, then ``body``."""
    text = body.strip("\n")
    return (
        f"{_DELIMITER}\nname: {check_name(name)}\n"
        f"description: {_quoted(check_description(description))}\n{_DELIMITER}\n\n{text}\n"
    )


def _document(fields: dict[str, str], body: str) -> SkillDocument:
    for required in ("name", "description"):
        if required not in fields:
            raise SkillFormatError(f"the front matter lacks the {required!r} field")
    return SkillDocument(
        name=check_name(fields["name"]),
        description=check_description(fields["description"]),
        body=body,
        fields=dict(fields),
    )


def _field(line: str, number: int) -> tuple[str, str]:
    where = f"front matter line {number}"
    if line[0] in " \t":
        raise SkillFormatError(
            f"{where} is indented: nested or multi-line values are not supported"
        )
    match = _KEY_LINE.match(line)
    if match is None:
        raise SkillFormatError(f"{where} is not of the form 'key: value': {line[:80]!r}")
    key, raw = match.group(1), match.group(2) or ""
    return key, _value(key, raw, where)


def _value(key: str, raw: str, where: str) -> str:
    if raw.startswith('"'):
        try:
            value = json.loads(raw)
        except ValueError:
            value = None
        if not isinstance(value, str):
            raise SkillFormatError(f"{where}: the double-quoted value of {key!r} is malformed")
        return value
    if raw.startswith("'"):
        quoted = _SINGLE_QUOTED.match(raw)
        if quoted is None:
            raise SkillFormatError(
                f"{where}: the single-quoted value of {key!r} is malformed "
                "(write a quote inside it as '')"
            )
        return quoted.group(1).replace("''", "'")
    problem = _plain_problem(raw)
    if problem:
        raise SkillFormatError(f"{where}: the value of {key!r} {problem}; put it in double quotes")
    return raw


def _plain_problem(value: str) -> str:
    """Why YAML would not read ``value`` as a plain one-line string ("" when it would)."""
    if value[:1] in _INDICATORS or value.startswith(("- ", "-\t")) or value == "-":
        return f"starts with {value[0]!r}, which YAML reads as structure"
    if ": " in value or value.endswith(":"):
        return "contains ': '"
    if " #" in value or "\t#" in value:
        return "contains ' #', which YAML reads as a comment"
    return ""


def _quoted(value: str) -> str:
    plain = value and not _plain_problem(value) and value[0] not in "\"'"
    return value if plain else json.dumps(value, ensure_ascii=False)
