"""A scripted agent run that saves a memory, and a later session that recalls it."""

import asyncio

import neta
import neta_memory.plugin
from neta.events import ToolResultEvent
from neta.providers.scripted import ScriptedProvider
from neta.runtime.agent import Agent


def agent_for(workspace, turns):
    pm = neta.create_plugin_manager(
        load_entrypoints=False, plugins=[("memory", neta_memory.plugin)]
    )
    return Agent(provider=ScriptedProvider(turns), plugin_manager=pm, workspace=workspace)


def test_scripted_run_saves_then_recalls_a_memory_across_sessions(tmp_path, neta_home):
    first = agent_for(
        tmp_path,
        [
            {
                "tool_calls": [
                    {
                        "name": "memory_save",
                        "arguments": {"content": "The user prefers tabs.", "tags": ["style"]},
                    }
                ],
                "expect": {
                    "tools_include": ["memory_save", "memory_recall", "memory_forget"],
                    "system_includes": ["transient task state", "## memory_recall"],
                },
            },
            {"text": "Noted.", "expect": {"last_message_contains": "Saved memory #1"}},
        ],
    )
    saved = asyncio.run(first.run("Remember that I prefer tabs."))
    assert saved.outcome == "completed", saved.reason

    second = agent_for(
        tmp_path,
        [
            {"tool_calls": [{"name": "memory_recall", "arguments": {"query": "tabs or spaces"}}]},
            {
                "text": "You prefer tabs.",
                "expect": {"last_message_contains": "tags: style] The user prefers tabs."},
            },
        ],
    )
    recalled = asyncio.run(second.run("Tabs or spaces for me?"))
    assert recalled.outcome == "completed", recalled.reason
    assert recalled.text == "You prefer tabs."
    [event] = [e for e in recalled.events if isinstance(e, ToolResultEvent)]
    assert not event.is_error
    assert (neta_home / "memory" / "default.db").is_file()


def test_agent_session_and_prompt_do_not_open_the_database(tmp_path, neta_home):
    agent = agent_for(tmp_path, [])
    session = agent.new_session()
    assert "memory_save" in session.tools
    assert "## memory_save" in agent.system_prompt(session)
    assert not neta_home.exists()
