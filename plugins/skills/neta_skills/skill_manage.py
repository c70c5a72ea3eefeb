"""The ``skill_manage`` tool: create, rewrite, patch and delete skills and their files.

One flat arguments model serves every action (a discriminated union would make the tool's
JSON schema a top-level ``anyOf``, which function-calling APIs reject); a validator says which
fields each action needs and refuses the ones it does not take. Every write is atomic, and a
change that would leave ``SKILL.md`` with invalid front matter is refused before anything is
written.
"""

from __future__ import annotations

import contextlib
import difflib
import stat
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Literal, Self

from pydantic import BaseModel, Field, model_validator

import neta
import neta.paths
from neta.fuzzy_match import fuzzy_replace
from neta_skills.frontmatter import (
    MAX_SKILL_NAME_CHARS,
    SKILL_NAME_PATTERN,
    parse_skill_md,
    render_skill_md,
)
from neta_skills.library import (
    SKILL_FILE,
    Skill,
    SkillLibrary,
    confined,
    is_skill_md,
    library_of,
    resolve_in_skill,
    skill_file,
)

MAX_WRITE_CHARS = 100_000
"""The most text one ``skill_manage`` call may write to a file."""

_MAX_DIFF_LINES = 60
_COPY_SUFFIX = "-local"

SkillAction = Literal["create", "edit", "patch", "delete", "write_file", "remove_file"]

# action -> (fields it needs, fields it may take)
_FIELDS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "create": (frozenset({"description", "body"}), frozenset()),
    "edit": (frozenset({"content"}), frozenset()),
    "patch": (frozenset({"old_string", "new_string"}), frozenset({"path", "replace_all"})),
    "delete": (frozenset(), frozenset()),
    "write_file": (frozenset({"path", "content"}), frozenset()),
    "remove_file": (frozenset({"path"}), frozenset()),
}


class SkillManageArgs(BaseModel):
    """Arguments of ``skill_manage``; which fields apply depends on ``action``."""

    action: SkillAction = Field(
        description=(
            "create (name, description, body): a new skill. "
            "edit (name, content): rewrite the whole SKILL.md, front matter included. "
            "patch (name, old_string, new_string, optional path, replace_all): replace a piece "
            "of SKILL.md, or of the file at path. "
            "delete (name): remove the skill and its files. "
            "write_file (name, path, content): create or replace a file inside the skill. "
            "remove_file (name, path): delete a file inside the skill."
        )
    )
    name: str = Field(
        pattern=SKILL_NAME_PATTERN,
        description="The skill (folder) name: lower-case letters, digits, '.', '_', '-'.",
    )
    description: str | None = Field(
        None, description="create: one line saying when to use the skill."
    )
    body: str | None = Field(
        None, max_length=MAX_WRITE_CHARS, description="create: the instructions (Markdown)."
    )
    content: str | None = Field(
        None,
        max_length=MAX_WRITE_CHARS,
        description="edit: the complete new SKILL.md; write_file: the file's complete text.",
    )
    old_string: str | None = Field(None, description="patch: the text to replace.")
    new_string: str | None = Field(None, description="patch: the text to put in its place.")
    replace_all: bool = Field(
        False, description="patch: replace every occurrence instead of requiring exactly one."
    )
    path: str | None = Field(
        None, description="write_file, remove_file, patch: a file relative to the skill folder."
    )

    @model_validator(mode="after")
    def _fields_fit_the_action(self) -> Self:
        needed, optional = _FIELDS[self.action]
        given = {
            name
            for name in ("description", "body", "content", "old_string", "new_string", "path")
            if getattr(self, name) is not None
        } | ({"replace_all"} if self.replace_all else set())
        missing = sorted(needed - given)
        unexpected = sorted(given - needed - optional)
        problems = []
        if missing:
            problems.append(f"needs {', '.join(missing)}")
        if unexpected:
            problems.append(f"does not take {', '.join(unexpected)}")
        if problems:
            takes = ", ".join(sorted(needed | optional)) or "nothing besides name"
            raise ValueError(f"action {self.action!r} {' and '.join(problems)} (it takes: {takes})")
        return self


def build(session: neta.SessionContext) -> neta.Tool:
    """The ``skill_manage`` tool for ``session``: it changes the session's skill directories."""

    def skill_manage(args: SkillManageArgs) -> neta.ToolResult:
        library = library_of(session)
        return _ACTIONS[args.action](library, args)

    return neta.Tool(name=SCHEMA.name, execute=skill_manage, sequential=True)


def _create(library: SkillLibrary, args: SkillManageArgs) -> neta.ToolResult:
    existing = library.find(args.name)
    if existing is not None:
        _check_writable(library, existing)
        raise neta.ToolError(
            f"skill {args.name!r} already exists ({existing.folder}); change it with edit or "
            "patch, or choose another name"
        )
    if not library.write_directory.writable:
        raise neta.ToolError(
            "this session may not create skills: they would go to "
            f"{library.write_directory.path}, which only the user may change"
        )
    if not (args.body or "").strip():
        raise neta.ToolError("the body is empty; write the skill's instructions in body")
    text = render_skill_md(args.name, args.description or "", args.body or "")
    parse_skill_md(text, expected_name=args.name)
    folder = library.write_directory.path / args.name
    root, inside = _creation_root(library.root(library.write_directory))
    try:
        neta.atomic_write(f"{inside}{args.name}/{SKILL_FILE}", text, make_parents=True, root=root)
    except neta.ToolError:
        with contextlib.suppress(neta.ToolError):  # leave no empty folder behind
            neta.paths.remove_empty_folder(f"{inside}{args.name}", root=root)
        raise
    return _done(f"Created skill {args.name!r} in {folder}.", args.name, folder)


def _creation_root(directory: neta.PinnedRoot) -> tuple[neta.PinnedRoot, str]:
    """The root to create skills under and the path of ``directory`` inside it ("" or "x/").

    A skills directory inside the workspace is made by a pinned walk from the workspace, so
    a symlink there cannot lead the new skill out; one the host chose is made as named.
    """
    if directory.within is None:
        try:
            directory.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise neta.ToolError(
                f"cannot create the skills directory {directory.path}: {exc.strerror or exc}"
            ) from exc
        return directory, ""
    return directory.within, f"{directory.path.relative_to(directory.within.path).as_posix()}/"


def _edit(library: SkillLibrary, args: SkillManageArgs) -> neta.ToolResult:
    skill = _check_writable(library, library.get(args.name))
    content = args.content or ""
    parse_skill_md(content, expected_name=skill.name)
    with confined(skill, SKILL_FILE):
        neta.atomic_write(SKILL_FILE, content, keep_mode=True, root=skill.root)
    return _done(f"Rewrote {SKILL_FILE} of skill {skill.name!r}.", skill.name, skill.folder)


def _patch(library: SkillLibrary, args: SkillManageArgs) -> neta.ToolResult:
    skill = _check_writable(library, library.get(args.name))
    path = args.path or SKILL_FILE
    target = skill_file(skill, path)
    of_skill_md = is_skill_md(skill, target)
    label = SKILL_FILE if of_skill_md else neta.printable(skill.relative(target))
    with confined(skill, path):
        original = neta.read_text(path, root=skill.root)
    replacement = fuzzy_replace(
        original.text, args.old_string or "", args.new_string or "", replace_all=args.replace_all
    )
    if of_skill_md:
        parse_skill_md(replacement.content, expected_name=skill.name)
    encoded = original.encode(replacement.content)
    if replacement.content != original.text:
        with confined(skill, path):
            neta.atomic_write(path, encoded, keep_mode=True, root=skill.root)
    summary = (
        f"Patched {label} of skill {skill.name!r} (strategy: {replacement.strategy}, "
        f"lines {replacement.start_line}\u2013{replacement.end_line}"
        + (f", {replacement.count} replacements)." if replacement.count > 1 else ").")
    )
    diff = _diff(original.text, replacement.content, f"{skill.name}/{label}")
    return neta.ToolResult(
        content="\n".join(part for part in (diff, summary) if part),
        data={
            "name": skill.name,
            "path": label,
            "strategy": replacement.strategy,
            "count": replacement.count,
            "start_line": replacement.start_line,
            "end_line": replacement.end_line,
        },
    )


def _delete(library: SkillLibrary, args: SkillManageArgs) -> neta.ToolResult:
    skill = library.find(args.name) or library.link_named(args.name) or library.get(args.name)
    _check_writable(library, skill)
    try:  # a symlinked skill loses the link, never what it points to
        neta.paths.remove(skill.name, root=skill.directory, tree=True)
    except neta.ToolError as exc:
        raise neta.ToolError(f"cannot delete skill {skill.name!r}: {exc}") from exc
    message = f"Deleted skill {skill.name!r} ({skill.folder})."
    revealed = library.find(skill.name)
    if revealed is not None:
        message += (
            f" Note: the skill {skill.name!r} in {revealed.folder} is now the one this session "
            "sees; delete it too if it should go."
        )
    return _done(message, skill.name, skill.folder)


def _write_file(library: SkillLibrary, args: SkillManageArgs) -> neta.ToolResult:
    skill = _check_writable(library, library.get(args.name))
    path = args.path or ""
    target = _other_file(skill, path, "write_file")
    with confined(skill, path):
        info = neta.paths.path_stat(path, root=skill.root)
        if info is not None and stat.S_ISDIR(info.st_mode):
            raise neta.ToolError(
                f"{neta.printable(path)!r} is a folder in skill {skill.name!r}, not a file"
            )
        written = neta.atomic_write(
            path, args.content or "", keep_mode=True, make_parents=True, root=skill.root
        )
    verb = "Overwrote" if info is not None else "Created"
    return _done(
        f"{verb} {neta.printable(skill.relative(target))} in skill {skill.name!r} "
        f"({written:,} bytes).",
        skill.name,
        skill.folder,
    )


def _remove_file(library: SkillLibrary, args: SkillManageArgs) -> neta.ToolResult:
    skill = _check_writable(library, library.get(args.name))
    path = args.path or ""
    _other_file(skill, path, "remove_file")
    shown = neta.printable(path)
    with confined(skill, path):
        info = neta.paths.path_stat(path, root=skill.root, follow_symlinks=False)
        if info is None or stat.S_ISDIR(info.st_mode):
            raise neta.ToolError(f"skill {skill.name!r} has no file {shown!r}")
        try:  # a symlink is removed itself, never what it points to
            neta.paths.remove(path, root=skill.root)
        except neta.ToolError as exc:
            raise neta.ToolError(f"cannot remove {shown!r}: {exc}") from exc
        for folder in PurePosixPath(path).parents:
            if str(folder) == "." or not neta.paths.remove_empty_folder(folder, root=skill.root):
                break
    return _done(f"Removed {shown} from skill {skill.name!r}.", skill.name, skill.folder)


def _check_writable(library: SkillLibrary, skill: Skill) -> Skill:
    """Return ``skill`` if this session may change it; refuse one among the home skills."""
    if skill.source.writable:
        return skill
    if not library.write_directory.writable:
        advice = "ask the user to change it if it should change"
    else:
        other = f"{skill.name[: MAX_SKILL_NAME_CHARS - len(_COPY_SUFFIX)]}{_COPY_SUFFIX}"
        advice = (
            f"to adapt it for this project, create a workspace skill under another name (such "
            f"as {other!r}) from its text (read_skill), or ask the user to change the home skill"
        )
    raise neta.ToolError(
        f"skill {skill.name!r} is one of the user's home skills ({skill.folder}), which every "
        f"workspace uses; this session may change only the workspace's skills: {advice}"
    )


def _other_file(skill: Skill, path: str, action: str) -> Path:
    """A file of ``skill`` other than its SKILL.md (which only create, edit and patch change)."""
    target = resolve_in_skill(skill, path)
    if is_skill_md(skill, target):
        raise neta.ToolError(f"{action} does not change {SKILL_FILE}; use edit or patch for it")
    return target


def _done(message: str, name: str, folder: Path) -> neta.ToolResult:
    return neta.ToolResult(content=message, data={"name": name, "folder": str(folder)})


def _diff(before: str, after: str, label: str) -> str:
    lines = [
        line.rstrip("\r\n")
        for line in difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=f"a/{label}",
            tofile=f"b/{label}",
            n=1,
        )
    ]
    if len(lines) > _MAX_DIFF_LINES:
        lines = [*lines[:_MAX_DIFF_LINES], f"... {len(lines) - _MAX_DIFF_LINES} more diff lines"]
    return "\n".join(lines)


_ACTIONS: dict[str, Callable[[SkillLibrary, SkillManageArgs], neta.ToolResult]] = {
    "create": _create,
    "edit": _edit,
    "patch": _patch,
    "delete": _delete,
    "write_file": _write_file,
    "remove_file": _remove_file,
}


SCHEMA = neta.ToolSchema(
    effect="writes",
    name="skill_manage",
    toolset="skill",
    description=(
        "Create, change or delete a skill: a folder with a SKILL.md (front matter with name "
        "and description, then instructions) and optional extra files. Actions: create, edit, "
        "patch, delete, write_file, remove_file. Changes that would make SKILL.md invalid are "
        "refused and nothing is written."
    ),
    args=SkillManageArgs,
    guidance=(
        "When a procedure worked and is likely to recur (a release checklist, how this "
        "project runs its tests, a fix for a recurring environment problem), save it as a "
        "skill with action create: a specific name, a one-line description that says when to "
        "use it, and a body of concrete steps and commands. Do not save one-off work.\n"
        "Keep skills short and specific: one procedure per skill, steps rather than prose; "
        "move long reference material into extra files (write_file) and name them in the body.\n"
        "To improve a skill, patch it (old_string/new_string) rather than rewriting it; use "
        "edit only when most of it changes. Fix a skill as soon as you find it wrong or out of "
        "date. SKILL.md must keep its front matter: a '---' line, 'name: <folder name>', "
        "'description: <one line>', and a closing '---' line."
    ),
    when_to_use=(
        "When a multi-step procedure worked and will recur, save it as a skill with "
        "skill_manage (or patch the skill you followed if it was wrong)."
    ),
)
