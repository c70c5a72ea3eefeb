"""The skill plugin's wiring: schemas in the catalog, the library equipped at session start."""

import asyncio

import pytest

import neta
from neta.session_tools import resolve_session_toolsets
from neta_skills.directories import SkillDirectory
from neta_skills.library import SkillLibrary


def test_skill_catalog_holds_three_schemas_in_the_skill_toolset(skills_pm):
    catalog = skills_pm.catalog()
    assert [s.name for s in catalog.schemas_by_toolset("skill")] == [
        "read_skill",
        "read_skill_file",
        "skill_manage",
    ]
    assert "patch" in catalog.get("skill_manage").guidance
    assert catalog.get("skill_manage").when_to_use


def test_skill_session_start_sets_a_library_of_read_only_home_then_workspace(started, neta_home):
    library = started.extras["skills"]
    assert isinstance(library, SkillLibrary)
    workspace_dir = started.workspace / ".neta" / "skills"
    assert library.directories == (
        SkillDirectory(neta_home / "skills", "home", writable=False),
        SkillDirectory(workspace_dir, "workspace", writable=True),
    )
    assert library.write_directory == library.directories[1]
    assert not workspace_dir.exists()


def test_skill_session_start_writes_to_home_when_extras_say_so(skills_pm, session, neta_home):
    session.extras["skills_write_to"] = "home"
    skills_pm.notify("neta_session_start", session=session)
    home = SkillDirectory(neta_home / "skills", "home", writable=True)
    assert session.extras["skills"].directories[0] == home
    assert session.extras["skills"].write_directory == home


def test_skill_session_start_keeps_a_host_library(skills_pm, session, tmp_path):
    directory = SkillDirectory(tmp_path / "s", "workspace", writable=True)
    mine = SkillLibrary(directories=(directory,), write_directory=directory)
    session.extras["skills"] = mine
    skills_pm.notify("neta_session_start", session=session)
    assert session.extras["skills"] is mine


def test_skill_session_start_bad_write_target_records_a_problem(skills_pm, session):
    session.extras["skills_write_to"] = "elsewhere"
    skills_pm.notify("neta_session_start", session=session)
    assert "use 'workspace' or 'home'" in str(skills_pm.problems[0])
    assert "skills" not in session.extras


def test_skill_toolset_is_on_after_session_start_and_off_before(skills_pm, session):
    assert not resolve_session_toolsets(skills_pm, session).decision("skill").enabled
    skills_pm.notify("neta_session_start", session=session)
    assert resolve_session_toolsets(skills_pm, session).decision("skill").enabled


def test_skill_tools_without_a_library_refuse(skills_pm, session):
    tools = neta.build_session_tools(skills_pm, session, ["skill"])
    assert tools["read_skill"].tool.session_guidance == ""
    bound = tools["read_skill"]
    with pytest.raises(neta.ToolError, match="no skill library"):
        asyncio.run(bound.tool.invoke(bound.schema.args(name="x")))
