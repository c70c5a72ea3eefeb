"""The ``read_skill`` tool: read a skill's instructions; its session guidance lists the skills."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, Field

import neta
from neta_skills.frontmatter import SKILL_NAME_PATTERN
from neta_skills.library import SKILL_FILE, SkillLibrary, library_of

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
        files = _other_files(skill.folder)
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


def _other_files(folder: Path) -> list[str]:
    """The skill's files other than SKILL.md, relative and sorted (hidden ones left out)."""
    found: list[str] = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for file in files:
            relative = (Path(root) / file).relative_to(folder).as_posix()
            if relative != SKILL_FILE and not file.startswith("."):
                found.append(relative)
    return sorted(found)


SCHEMA = neta.ToolSchema(
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
