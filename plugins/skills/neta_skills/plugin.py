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


@neta.hookimpl
def neta_toolsets() -> list[neta.ToolsetSpec]:
    """Announce the ``skill`` toolset."""
    return [TOOLSET]


@neta.hookimpl
def neta_tools() -> list[neta.ToolSchema]:
    """Register the schemas of read_skill, read_skill_file and skill_manage."""
    return [read_skill.SCHEMA, read_skill_file.SCHEMA, skill_manage.SCHEMA]


@neta.hookimpl
def neta_session_start(session: neta.SessionContext, host: neta.HostSettings) -> None:
    """Give the session its skill library (unless the host set one), which turns the toolset on.

    The library searches ``NETA_HOME/skills`` then, while the workspace is trusted, the
    workspace's ``.neta/skills``.
    """
    if "skills" not in session.extras:
        trusted = host.workspace_trusted() if host.workspace == session.workspace else False
        session.extras["skills"] = SkillLibrary.for_session(session, workspace_trusted=trusted)


@neta.hookimpl
def neta_build_tools(session: neta.SessionContext) -> list[neta.Tool]:
    """Build this session's instances; read_skill carries the listing of the session's skills."""
    return [read_skill.build(session), read_skill_file.build(session), skill_manage.build(session)]
