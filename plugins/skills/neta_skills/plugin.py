"""Hook implementations of the ``skill`` toolset (wiring only)."""

from __future__ import annotations

import neta
from neta_skills import read_skill, read_skill_file, skill_manage
from neta_skills.library import SkillLibrary

TOOLSET = neta.ToolsetSpec(
    name="skill",
    description="Read, create and refine skills (SKILL.md folders).",
    requires="skills",
)

PLUGIN = neta.ToolsetPlugin(
    TOOLSET,
    tools=[
        (read_skill.SCHEMA, read_skill.build),
        (read_skill_file.SCHEMA, read_skill_file.build),
        (skill_manage.SCHEMA, skill_manage.build),
    ],
)

# The entry point names this module, so the module takes the three hooks by name.
neta_toolsets = PLUGIN.neta_toolsets
neta_tools = PLUGIN.neta_tools
neta_build_tools = PLUGIN.neta_build_tools


@neta.hookimpl
def neta_session_start(session: neta.SessionContext, host: neta.HostSettings) -> None:
    """Give the session its skill library (unless the host set one), which turns the toolset on.

    The library searches ``NETA_HOME/skills`` then, while the workspace is trusted, the
    workspace's ``.neta/skills``.
    """
    if "skills" not in session.extras:
        trusted = host.workspace_trusted() if host.workspace == session.workspace else False
        session.extras["skills"] = SkillLibrary.for_session(session, workspace_trusted=trusted)
