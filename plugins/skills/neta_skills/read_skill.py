"""The ``read_skill`` tool: read a skill's instructions; its session guidance lists the skills."""

from __future__ import annotations

import contextlib
from pathlib import PurePosixPath

from pydantic import BaseModel, Field

import neta
import neta.paths
from neta_skills.frontmatter import SKILL_NAME_PATTERN
from neta_skills.library import SKILL_FILE, Skill, SkillLibrary, library_of

MAX_LISTED_FILES = 50
"""``read_skill`` names at most this many of a skill's other files."""


class ReadSkillArgs(BaseModel):
    """Arguments of ``read_skill``."""

    name: str = Field(pattern=SKILL_NAME_PATTERN, description="The skill's name.")


def build(session: neta.SessionContext) -> neta.Tool:
    """The ``read_skill`` tool for ``session``, with the session's skills as its guidance.

    The listing is taken now, so it shows the skills present when the session's tools are built.
    """

    def read_skill(args: ReadSkillArgs) -> neta.ToolResult:
        skill = library_of(session).get(args.name)
        document = skill.load()
        files = _other_files(skill)
        parts = [f"Skill {skill.name}: {document.description}", document.body.strip("\n")]
        if files:
            shown = ", ".join(files[:MAX_LISTED_FILES])
            more = (
                f" (and {len(files) - MAX_LISTED_FILES} more)"
                if len(files) > MAX_LISTED_FILES
                else ""
            )
            parts.append(f"Files in this skill (read them with read_skill_file): {shown}{more}")
        return neta.ToolResult(
            content="\n\n".join(part for part in parts if part),
            data={"name": skill.name, "folder": str(skill.folder), "files": files},
        )

    library = session.extras.get("skills")
    guidance = library.listing() if isinstance(library, SkillLibrary) else ""
    return neta.Tool(name=SCHEMA.name, execute=read_skill, session_guidance=guidance)


def _other_files(skill: Skill) -> list[str]:
    """The skill's files other than SKILL.md, relative and sorted (hidden ones left out).

    Listed through ``neta.paths``: symlinked folders are not entered.
    """
    found: list[str] = []
    try:
        with neta.paths.open_directory(".", root=skill.root) as folder:
            _collect(folder, PurePosixPath(), found)
    except (neta.ToolError, OSError):
        return []
    return sorted(name for name in found if name != SKILL_FILE)


def _collect(folder: neta.paths.Directory, prefix: PurePosixPath, found: list[str]) -> None:
    for entry in folder.entries():
        if entry.name.startswith("."):
            continue
        relative = prefix / entry.name
        if entry.kind == "dir":
            with contextlib.suppress(OSError), folder.child(entry.name) as child:
                _collect(child, relative, found)
        else:
            found.append(neta.printable(relative.as_posix()))


SCHEMA = neta.ToolSchema(
    effect="reads",
    name="read_skill",
    toolset="skill",
    description=(
        "Read a skill: the instructions in its SKILL.md (without the front matter) and the "
        "names of the other files it holds."
    ),
    args=ReadSkillArgs,
    guidance=(
        "Skills are short, tested procedures saved from earlier work in this project or by "
        "this user. Before a task that one of them covers, read it and follow it rather than "
        "working the procedure out again; read the extra files it points to with "
        "read_skill_file. If a skill is wrong or out of date, fix it after the task."
    ),
    when_to_use="When a task matches one of the listed skills, read it with read_skill first.",
)
