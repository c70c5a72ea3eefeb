"""Skills tests: a session rooted at a temp workspace, NETA_HOME in a temp folder."""

import asyncio

import pytest

import neta
import neta_skills.plugin
from neta.providers.scripted import ScriptedProvider
from neta.runtime.agent import Agent


@pytest.fixture(autouse=True)
def neta_home(tmp_path, monkeypatch):
    """A fresh NETA_HOME for every test, so no test reads or writes ~/.neta."""
    home = tmp_path / "home"
    monkeypatch.setenv("NETA_HOME", str(home))
    return home


@pytest.fixture
def skills_pm(make_pm, session):
    """The skill plugin, serving a host whose workspace the user trusts (its skills are used;
    ``test_trust`` has the untrusted case)."""
    pm = make_pm(skill=neta_skills.plugin)
    pm.configure_host(session.workspace, {"trust_workspace": True})
    return pm


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
    return caller(skills_pm, started)


@pytest.fixture
def call_writing_home(skills_pm, session):
    """Like ``call``, in a session whose host lets skill_manage change the home skills."""
    session.extras["skills_write_to"] = "home"
    skills_pm.notify("neta_session_start", session=session)
    assert skills_pm.problems == []
    return caller(skills_pm, session)


def caller(pm, session):
    """A function that builds ``session``'s skill tools and runs one, as the runtime does."""

    def run(tool_name, /, **args):
        tools = neta.build_session_tools(pm, session, ["skill"])
        assert pm.problems == []
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


def agent_for(workspace, turns=()):
    """An ``Agent`` with only the skill plugin, rooted at ``workspace``, replaying ``turns``."""
    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("skill", neta_skills.plugin)])
    return Agent(
        provider=ScriptedProvider(list(turns)),
        plugin_manager=pm,
        workspace=workspace,
        trust_workspace=True,  # its skills are used (test_trust has the untrusted case)
    )
