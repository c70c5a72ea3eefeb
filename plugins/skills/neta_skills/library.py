"""The skills a session can see: the directories searched, lookup by name, the prompt listing.

A skill is a folder named like the skill, holding ``SKILL.md`` and any other files. A session
searches the directories ``neta_skills.directories`` names, in order: ``NETA_HOME/skills``
(``NETA_HOME`` defaults to ``~/.neta``), then the workspace's ``.neta/skills``. When both hold
a skill of the same name, the user's home copy is the one the session sees, reads and changes.

New skills are created in the workspace directory, and home skills are read-only; a host sets
``session.extras["skills_write_to"] = "home"`` to create skills in ``NETA_HOME/skills``
instead and let the model change them (e.g. for skills that should follow the user across
projects). Changes to an existing skill are made where that skill lives, so what the model
read is what it changes, or refused when that directory is read-only.

Every file of a skill is reached through ``neta.paths``, confined three deep: a path inside a
skill stays inside that skill's folder, the folder inside its skills directory, and the
workspace's skills directory inside the workspace, symlinks included and under concurrent
change. A skill folder that is a symlink out of its skills directory is not a skill.
"""

from __future__ import annotations

import contextlib
import difflib
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import neta
import neta.paths
from neta_skills.directories import SkillDirectory, session_directories, writes_home
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

_NAME = re.compile(SKILL_NAME_PATTERN)
_WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:")


@dataclass(frozen=True)
class Skill:
    """A skill folder found in one of the library's directories (not yet parsed).

    Attributes:
        name: the skill's (and its folder's) name.
        folder: where the folder is, for messages.
        root: the folder as a root its files are confined to (itself inside ``directory``).
        directory: the skills directory holding it, as a root.
        source: that directory as the library lists it (where it comes from, whether the
            session may change it).
    """

    name: str
    folder: Path
    root: neta.PinnedRoot
    directory: neta.PinnedRoot
    source: SkillDirectory

    def load(self) -> SkillDocument:
        """Read and parse ``SKILL.md``; a malformed one raises ``SkillFormatError``."""
        with confined(self, SKILL_FILE):
            text = neta.read_text(SKILL_FILE, max_bytes=MAX_SKILL_FILE_BYTES, root=self.root).text
        try:
            return parse_skill_md(text, expected_name=self.name)
        except SkillFormatError as exc:
            raise SkillFormatError(
                f"skill {self.name!r} has a malformed {SKILL_FILE}: {exc}"
            ) from exc

    def relative(self, target: Path) -> str:
        """``target``, a resolved path inside the skill, relative to the skill's folder."""
        real = neta.resolve_in_workspace(self.root, ".")
        return target.relative_to(real).as_posix()


@dataclass(frozen=True)
class SkillLibrary:
    """The skill directories of one session.

    Attributes:
        directories: searched in this order; the first holding a name wins.
        write_directory: where ``create`` puts new skills (refused when it is not writable).
        workspace: the session's workspace: a workspace skills directory inside it is confined
            to it, symlinks included (one the host names elsewhere is opened as named).
    """

    directories: tuple[SkillDirectory, ...]
    write_directory: SkillDirectory
    workspace: Path | None = None

    def root(self, directory: SkillDirectory) -> neta.PinnedRoot:
        """``directory`` as a root: a workspace's pinned inside the workspace when it lies in it.

        The user's home directory is opened as named, even inside the workspace (a session in
        the home folder): it is Neta's, which file tools do not walk into.
        """
        path = directory.path
        if (
            directory.origin == "workspace"
            and self.workspace is not None
            and path.is_relative_to(self.workspace)
        ):
            return neta.PinnedRoot(path, within=neta.PinnedRoot(self.workspace))
        return neta.PinnedRoot(path)

    def skill(self, directory: SkillDirectory, name: str) -> Skill:
        """The skill folder ``name`` of ``directory`` (whether it exists or not)."""
        outer = self.root(directory)
        folder = directory.path / name
        return Skill(name, folder, neta.PinnedRoot(folder, within=outer), outer, directory)

    @classmethod
    def for_session(
        cls, session: neta.SessionContext, *, workspace_trusted: bool = True
    ) -> SkillLibrary:
        """The directories ``session_directories`` gives ``session`` (see the module docs).

        ``workspace_trusted``: whether the workspace's own skills are used.

        Raises:
            neta.ConfigError: ``session.extras["skills_write_to"]`` is neither ``"workspace"``
                nor ``"home"``.
        """
        directories = session_directories(session, workspace_trusted=workspace_trusted)
        origin = "home" if writes_home(session) else "workspace"
        # without a workspace directory, new skills would go home: read-only unless opted in
        target = next((d for d in directories if d.origin == origin), directories[0])
        return cls(directories=directories, write_directory=target, workspace=session.workspace)

    def skills(self) -> list[Skill]:
        """Every skill folder the session sees, by name (a home copy hides a workspace copy)."""
        found: dict[str, Skill] = {}
        for directory in self.directories:
            for name in _skill_names(self.root(directory)):
                skill = self.skill(directory, name)
                if _has_skill_md(skill):
                    found.setdefault(name, skill)
        return [found[name] for name in sorted(found)]

    def find(self, name: str) -> Skill | None:
        """The skill called ``name`` that the session sees, or ``None``."""
        if not _NAME.fullmatch(name):
            return None
        for directory in self.directories:
            skill = self.skill(directory, name)
            if _has_skill_md(skill):
                return skill
        return None

    def link_named(self, name: str) -> Skill | None:
        """A symlink called ``name`` in a skills directory that is not a skill the session sees.

        Such a link (one leading out of its directory, say) is never read or written through;
        only ``delete`` removes it.
        """
        if not _NAME.fullmatch(name):
            return None
        for directory in self.directories:
            skill = self.skill(directory, name)
            with contextlib.suppress(neta.ToolError):
                info = neta.paths.path_stat(name, root=skill.directory, follow_symlinks=False)
                if info is not None and stat.S_ISLNK(info.st_mode):
                    return skill
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

    The result names the file (for messages and comparisons); reading and writing go through
    ``neta.read_text``/``neta.atomic_write`` with ``root=skill.root``, resolved again, pinned.

    Raises:
        neta.ToolError: the path is empty, absolute, contains ``..``, or leads outside the
            folder (through a symlink, say), or the folder leads outside its directory.
    """
    check_skill_path(skill, path)
    with confined(skill, path):
        return neta.resolve_in_workspace(skill.root, path)


def check_skill_path(skill: Skill, path: str) -> str:
    """Return ``path`` if it is a relative path without ``..``; otherwise a ``ToolError``."""
    if not path.strip():
        raise neta.ToolError("the path is empty; give a file path relative to the skill folder")
    shown = neta.printable(path)
    if path.startswith(("/", "\\")) or _WINDOWS_DRIVE.match(path) or Path(path).is_absolute():
        raise neta.ToolError(
            f"path {shown!r} is absolute; give a path relative to the skill {skill.name!r} folder"
        )
    if ".." in re.split(r"[\\/]", path):
        raise neta.ToolError(f"path {shown!r} contains '..'; skill files stay inside the skill")
    return path


@contextlib.contextmanager
def confined(skill: Skill, path: str) -> Iterator[None]:
    """Turn an escape from the skill (or of the skill's folder) into a ``ToolError`` saying so."""
    try:
        yield
    except neta.WorkspaceError as exc:
        if exc.path == path:
            where = f"path {neta.printable(path)!r} leads outside the skill {skill.name!r}"
        else:  # the skill's folder, or its skills directory, is what leads out
            where = (
                f"the skill {skill.name!r} ({neta.printable(exc.path)}) leads outside "
                f"{neta.printable(exc.root)}"
            )
        raise neta.ToolError(
            f"{where} (it resolves to {neta.printable(exc.resolved)!r}); skill files must "
            "stay inside the skill folder"
        ) from exc


def skill_file(skill: Skill, path: str) -> Path:
    """Resolve ``path`` like ``resolve_in_skill`` and make sure it can be read as a file.

    Raises:
        neta.ToolError: as ``resolve_in_skill``, or the path is a folder. Anything else that
            is not a regular file (a FIFO, a device) is refused when it is opened; a missing
            file is left for the reader to report.
    """
    target = resolve_in_skill(skill, path)
    with confined(skill, path):
        info = neta.paths.path_stat(path, root=skill.root)
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise neta.ToolError(
            f"{neta.printable(path)!r} is a folder in skill {skill.name!r}, not a file"
        )
    return target


def is_skill_md(skill: Skill, target: Path) -> bool:
    """Whether ``target`` (resolved) is the skill's SKILL.md, in any letter case.

    Case-insensitive file systems (macOS, Windows) give ``skill.md`` and ``SKILL.md`` one file.
    """
    skill_md = resolve_in_skill(skill, SKILL_FILE)
    return target.parent == skill_md.parent and target.name.casefold() == SKILL_FILE.casefold()


def _skill_names(directory: neta.PinnedRoot) -> list[str]:
    try:
        with neta.paths.open_directory(".", root=directory) as listing:
            entries = listing.entries()
    except (neta.ToolError, OSError):  # missing, unreadable or leading outside: no skills
        return []
    return [e.name for e in entries if _NAME.fullmatch(e.name) and e.kind in ("dir", "symlink")]


def _has_skill_md(skill: Skill) -> bool:
    """Whether the folder holds a SKILL.md (a symlink counts: reading it says where it leads)."""
    try:
        info = neta.paths.path_stat(SKILL_FILE, root=skill.root, follow_symlinks=False)
    except neta.ToolError:  # the folder is missing or leads outside its directory
        return False
    return info is not None and (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode))


def _cut(text: str) -> str:
    if len(text) <= MAX_LISTED_DESCRIPTION_CHARS:
        return text
    return text[: MAX_LISTED_DESCRIPTION_CHARS - 1].rstrip() + "\u2026"
