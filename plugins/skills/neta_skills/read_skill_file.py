"""The ``read_skill_file`` tool: read one file inside a skill's folder."""

from __future__ import annotations

from pydantic import BaseModel, Field

import neta
from neta_skills.frontmatter import SKILL_NAME_PATTERN
from neta_skills.library import MAX_SKILL_FILE_BYTES, confined, library_of, skill_file


class ReadSkillFileArgs(BaseModel):
    """Arguments of ``read_skill_file``."""

    name: str = Field(pattern=SKILL_NAME_PATTERN, description="The skill's name.")
    path: str = Field(
        description="The file, relative to the skill's folder, e.g. 'reference/api.md'."
    )


def build(session: neta.SessionContext) -> neta.Tool:
    """The ``read_skill_file`` tool for ``session``: paths stay inside the skill's folder."""

    def read_skill_file(args: ReadSkillFileArgs) -> neta.ToolResult:
        skill = library_of(session).get(args.name)
        path = skill_file(skill, args.path)
        with confined(skill, args.path):  # resolved again and read in one step
            text = neta.read_text(args.path, max_bytes=MAX_SKILL_FILE_BYTES, root=skill.root).text
        return neta.ToolResult(
            content=text, data={"name": skill.name, "path": skill.relative(path)}
        )

    return neta.Tool(name=SCHEMA.name, execute=read_skill_file)


SCHEMA = neta.ToolSchema(
    effect="reads",
    name="read_skill_file",
    toolset="skill",
    description=(
        "Read a text file inside a skill's folder (a reference, template or script the skill "
        "mentions). The path is relative to the skill's folder and cannot leave it."
    ),
    args=ReadSkillFileArgs,
)
