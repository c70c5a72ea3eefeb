"""Which skill directories a session uses: the user's home skills first, then the workspace's."""

import pytest

import neta
from neta_skills.directories import SkillDirectory, session_directories
from tests.plugins.skills.conftest import caller, write_skill


def test_session_directories_put_read_only_home_before_the_workspace(session, neta_home):
    assert session_directories(session) == (
        SkillDirectory(neta_home / "skills", "home", writable=False),
        SkillDirectory(session.workspace / ".neta" / "skills", "workspace", writable=True),
    )


def test_session_directories_make_home_writable_when_the_host_opts_in(session, neta_home):
    session.extras["skills_write_to"] = "home"
    assert [d.writable for d in session_directories(session)] == [True, True]


def test_session_directories_refuse_an_unknown_write_target(session):
    session.extras["skills_write_to"] = "elsewhere"
    with pytest.raises(neta.ConfigError, match="use 'workspace' or 'home'"):
        session_directories(session)


def test_a_workspace_holding_neta_home_sees_its_skills_as_read_only_home_skills(
    skills_pm, session, monkeypatch
):
    # a session started in the user's home folder: its .neta/skills is NETA_HOME/skills
    monkeypatch.setenv("NETA_HOME", str(session.workspace / ".neta"))
    path = write_skill(session.workspace / ".neta" / "skills", "deploy")
    before = path.read_bytes()
    [directory] = session_directories(session)
    assert (directory.origin, directory.writable) == ("home", False)
    skills_pm.notify("neta_session_start", session=session)
    with pytest.raises(neta.ToolError, match="home skills"):
        caller(skills_pm, session)(
            "skill_manage", action="patch", name="deploy", old_string="Step", new_string="x"
        )
    assert path.read_bytes() == before
