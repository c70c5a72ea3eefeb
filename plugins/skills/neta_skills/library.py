"""The skills a session can see: the directories searched, lookup by name, the prompt listing.

A skill is a folder named like the skill, holding ``SKILL.md`` and any other files. A session
searches two directories, in order: the workspace's ``.neta/skills`` and ``NETA_HOME/skills``
(``NETA_HOME`` defaults to ``~/.neta``). When both hold a skill of the same name, the
workspace's copy is the one the session sees, reads and changes.

New skills are created in the workspace directory; a host sets
``session.extras["skills_write_to"] = "home"`` to create them in ``NETA_HOME/skills`` instead
(e.g. for skills that should follow the user across projects). Changes to an existing skill
are made where that skill lives, so what the model read is what it changes.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path

import neta
from neta_skills.frontmatter import (
    SKILL_NAME_PATTERN,
    SkillDocument,
    SkillFormatError,
    parse_skill_md,
)

SKILL_FILE = "SKILL.md"
"""The file that makes a folder a skill."""

MAX_LISTED_SKILLS = 50
"""The system prompt lists at most this many skills."""

MAX_LISTED_DESCRIPTION_CHARS = 200
"""A description in the system prompt's listing is cut after this many characters."""

MAX_SKILL_FILE_BYTES = 256 * 1024
"""Files of a skill larger than this are not read."""

WRITE_TO_KEY = "skills_write_to"
"""The ``session.extras`` key that chooses where new skills go: ``workspace`` or ``home``."""

_NAME = re.compile(SKILL_NAME_PATTERN)
_WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:")


@dataclass(frozen=True)
class Skill:
    """A skill folder found in one of the library's directories (not yet parsed)."""

    name: str
    folder: Path

    def load(self) -> SkillDocument:
        """Read and parse ``SKILL.md``; a malformed one raises ``SkillFormatError``."""
        path = resolve_in_skill(self, SKILL_FILE)
        text = neta.read_text(path, max_bytes=MAX_SKILL_FILE_BYTES).text
        try:
            return parse_skill_md(text, expected_name=self.name)
        except SkillFormatError as exc:
            raise SkillFormatError(
                f"skill {self.name!r} has a malformed {SKILL_FILE}: {exc}"
            ) from exc

    def relative(self, target: Path) -> str:
        """``target``, a resolved path inside the skill, relative to the skill's folder."""
        return target.relative_to(self.folder.resolve()).as_posix()


@dataclass(frozen=True)
class SkillLibrary:
    """The skill directories of one session.

    Attributes:
        directories: searched in this order; the first holding a name wins.
        write_directory: where ``create`` puts new skills.
    """

    directories: tuple[Path, ...]
    write_directory: Path

    @classmethod
    def for_session(cls, session: neta.SessionContext) -> SkillLibrary:
        """The workspace's ``.neta/skills`` then ``NETA_HOME/skills`` (see the module docs).

        Raises:
            neta.ConfigError: ``session.extras["skills_write_to"]`` is neither ``"workspace"``
                nor ``"home"``.
        """
        workspace = session.workspace / ".neta" / "skills"
        home = neta.neta_home() / "skills"
        target = session.extras.get(WRITE_TO_KEY, "workspace")
        if target not in ("workspace", "home"):
            raise neta.ConfigError(
                f"session.extras[{WRITE_TO_KEY!r}] is {target!r}; use 'workspace' or 'home'"
            )
        return cls(
            directories=(workspace, home),
            write_directory=workspace if target == "workspace" else home,
        )

    def skills(self) -> list[Skill]:
        """Every skill folder the session sees, by name (a workspace copy hides a home copy)."""
        found: dict[str, Skill] = {}
        for directory in self.directories:
            for name, folder in _skill_folders(directory):
                found.setdefault(name, Skill(name, folder))
        return [found[name] for name in sorted(found)]

    def find(self, name: str) -> Skill | None:
        """The skill called ``name`` that the session sees, or ``None``."""
        for directory in self.directories:
            folder = directory / name
            if _NAME.fullmatch(name) and (folder / SKILL_FILE).is_file():
                return Skill(name, folder)
        return None

    def get(self, name: str) -> Skill:
        """The skill called ``name``; an unknown name raises ``ToolError`` with close names."""
        skill = self.find(name)
        if skill is not None:
            return skill
        names = [s.name for s in self.skills()]
        close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
        hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        listing = ", ".join(names[:MAX_LISTED_SKILLS]) if names else "none yet"
        raise neta.ToolError(f"there is no skill {name!r}.{hint} Skills: {listing}.")

    def listing(self) -> str:
        """The system prompt's list of skills: name and description, bounded in size."""
        entries: list[str] = []
        malformed: list[str] = []
        skills = self.skills()
        for skill in skills:
            try:
                document = skill.load()
            except neta.ToolError:
                malformed.append(skill.name)
                continue
            entries.append(f"- {skill.name}: {_cut(document.description)}")
        if not entries and not malformed:
            return "No skills are saved yet."
        lines = [
            "Skills available in this session (name: when to use it). When a task matches one, "
            "read it with read_skill before you start and follow it:",
            *entries[:MAX_LISTED_SKILLS],
        ]
        if len(entries) > MAX_LISTED_SKILLS:
            lines.append(f"- ... and {len(entries) - MAX_LISTED_SKILLS} more not listed here")
        if malformed:
            shown = ", ".join(malformed[:10]) + (", ..." if len(malformed) > 10 else "")
            lines.append(f"Skills with a malformed {SKILL_FILE} (fix before use): {shown}")
        return "\n".join(lines)


def library_of(session: neta.SessionContext) -> SkillLibrary:
    """The session's ``SkillLibrary`` (``session.extras["skills"]``), or a ``ToolError``."""
    library = session.extras.get("skills")
    if not isinstance(library, SkillLibrary):
        raise neta.ToolError("this session has no skill library, so skills are unavailable")
    return library


def resolve_in_skill(skill: Skill, path: str) -> Path:
    """Resolve ``path``, relative to the skill's folder, to a real path inside that folder.

    Raises:
        neta.ToolError: the path is empty, absolute, contains ``..``, or leads outside the
            folder (through a symlink, say).
    """
    if not path.strip():
        raise neta.ToolError("the path is empty; give a file path relative to the skill folder")
    if path.startswith(("/", "\\")) or _WINDOWS_DRIVE.match(path) or Path(path).is_absolute():
        raise neta.ToolError(
            f"path {path!r} is absolute; give a path relative to the skill {skill.name!r} folder"
        )
    if ".." in re.split(r"[\\/]", path):
        raise neta.ToolError(f"path {path!r} contains '..'; skill files stay inside the skill")
    try:
        return neta.resolve_in_workspace(skill.folder, path)
    except neta.WorkspaceError as exc:
        raise neta.ToolError(
            f"path {path!r} leads outside the skill {skill.name!r} (it resolves to "
            f"{exc.resolved!r}); skill files must stay inside the skill folder"
        ) from exc


def skill_file(skill: Skill, path: str) -> Path:
    """Resolve ``path`` like ``resolve_in_skill`` and make sure it can be read as a file.

    Raises:
        neta.ToolError: as ``resolve_in_skill``, or the path is a folder or something other
            than a regular file (a FIFO would block the reader forever). A missing file is
            left for the reader to report.
    """
    target = resolve_in_skill(skill, path)
    if target.is_dir():
        raise neta.ToolError(f"{path!r} is a folder in skill {skill.name!r}, not a file")
    if target.exists() and not target.is_file():
        raise neta.ToolError(f"{path!r} in skill {skill.name!r} is not a regular file")
    return target


def is_skill_md(skill: Skill, target: Path) -> bool:
    """Whether ``target`` (resolved) is the skill's SKILL.md, in any letter case.

    Case-insensitive file systems (macOS, Windows) give ``skill.md`` and ``SKILL.md`` one file.
    """
    skill_md = resolve_in_skill(skill, SKILL_FILE)
    return target.parent == skill_md.parent and target.name.casefold() == SKILL_FILE.casefold()


def _skill_folders(directory: Path) -> list[tuple[str, Path]]:
    try:
        children = sorted(directory.iterdir())
    except OSError:  # missing or unreadable: no skills there
        return []
    return [
        (child.name, child)
        for child in children
        if _NAME.fullmatch(child.name) and (child / SKILL_FILE).is_file()
    ]


def _cut(text: str) -> str:
    if len(text) <= MAX_LISTED_DESCRIPTION_CHARS:
        return text
    return text[: MAX_LISTED_DESCRIPTION_CHARS - 1].rstrip() + "\u2026"
