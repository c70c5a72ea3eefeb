"""The ``base`` toolset built through the catalog for a session rooted at a temp workspace."""

import asyncio

import pytest

import neta
import neta_base.plugin


@pytest.fixture
def base_tools(make_pm, session):
    """The session's ``base`` tools, as the runtime gets them (schema + instance)."""
    pm = make_pm(base=neta_base.plugin)
    tools = neta.build_session_tools(pm, session, ["base"])
    assert pm.problems == []
    return tools


@pytest.fixture
def call(base_tools):
    """Validate ``args`` with the tool's schema and run it: ``call("read_file", path="x")``."""

    def run(name, **args):
        bound = base_tools[name]
        return asyncio.run(bound.tool.invoke(bound.schema.args.model_validate(args)))

    return run
