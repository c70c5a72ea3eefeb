"""Skills tests: a session rooted at a temp workspace, NETA_HOME in a temp folder."""

import asyncio

import pytest

import neta
import neta_skills.plugin


@pytest.fixture(autouse=True)
def neta_home(tmp_path, monkeypatch):
    """A fresh NETA_HOME for every test, so no test reads or writes ~/.neta."""
    home = tmp_path / "home"
    monkeypatch.setenv("NETA_HOME", str(home))
    return home


@pytest.fixture
def skills_pm(make_pm):
    return make_pm(skill=neta_skills.plugin)


@pytest.fixture
def workspace_skills(session):
    """The workspace's skills directory (created lazily by the tools)."""
    return session.workspace / ".neta" / "skills"


@pytest.fixture
def home_skills(neta_home):
    return neta_home / "skills"


@pytest.fixture
def started(skills_pm, session):
    """The session after the skill plugin's ``neta_session_start``."""
    skills_pm.notify("neta_session_start", session=session)
    assert skills_pm.problems == []
    return session


@pytest.fixture
def call(skills_pm, started):
    """Build the session's skill tools now and run one: ``call("read_skill", name="x")``."""

    def run(tool_name, /, **args):
        tools = neta.build_session_tools(skills_pm, started, ["skill"])
        assert skills_pm.problems == []
        bound = tools[tool_name]
        return asyncio.run(bound.tool.invoke(bound.schema.args.model_validate(args)))

    return run


def write_skill(directory, name, description="Does a thing.", body="Step one.\n", **fields):
    """Write ``directory/name/SKILL.md`` by hand (no tool involved) and return its path."""
    folder = directory / name
    folder.mkdir(parents=True, exist_ok=True)
    extra = "".join(f"{key}: {value}\n" for key, value in fields.items())
    path = folder / "SKILL.md"
    path.write_text(f"---\nname: {name}\ndescription: {description}\n{extra}---\n\n{body}")
    return path
