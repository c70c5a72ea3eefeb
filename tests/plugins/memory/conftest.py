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

    def run(name, **args):
        bound = memory_tools[name]
        return asyncio.run(bound.tool.invoke(bound.schema.args.model_validate(args)))

    return run
