"""Memory tests run against a real SQLite file under a temporary NETA_HOME."""

import asyncio

import pytest

import neta
import neta_memory.plugin


@pytest.fixture(autouse=True)
def neta_home(tmp_path, monkeypatch):
    """A fresh NETA_HOME for every test, so no test reads or writes ~/.neta."""
    home = tmp_path / "home"
    monkeypatch.setenv("NETA_HOME", str(home))
    return home


@pytest.fixture
def memory_pm(make_pm):
    return make_pm(memory=neta_memory.plugin)


@pytest.fixture
def memory_tools(memory_pm, session):
    """The session's memory tools as the runtime gets them, after the plugin equipped a store."""
    memory_pm.notify("neta_session_start", session=session)
    tools = neta.build_session_tools(memory_pm, session, ["memory"])
    assert memory_pm.problems == []
    return tools


@pytest.fixture
def call(memory_tools):
    """Validate ``args`` with the tool's schema and run it: ``call("memory_save", content=...)``."""
    return caller(memory_tools)


@pytest.fixture
def call_in(memory_pm, tmp_path):
    """``call`` for a new session in workspace ``name``: ``call_in("a")("memory_save", ...)``."""

    def start(name, **extras):
        workspace = tmp_path / name
        workspace.mkdir(exist_ok=True)
        session = neta.SessionContext(workspace=workspace, entry="cli", extras=extras)
        memory_pm.notify("neta_session_start", session=session)
        assert memory_pm.problems == []
        return caller(neta.build_session_tools(memory_pm, session, ["memory"]))

    return start


def caller(tools):
    """A function that validates ``args`` with a tool's schema and runs the tool."""

    def run(name, **args):
        bound = tools[name]
        return asyncio.run(bound.tool.invoke(bound.schema.args.model_validate(args)))

    return run
