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
    return Agent(
        provider=ScriptedProvider(turns), plugin_manager=pm, workspace=workspace, permissions="auto"
    )


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


def test_scripted_run_in_another_workspace_neither_recalls_nor_forgets_a_memory(
    tmp_path, neta_home
):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    save = {"name": "memory_save", "arguments": {"content": "The staging password is hunter2."}}
    first = agent_for(tmp_path / "a", [{"tool_calls": [save]}, {"text": "Noted."}])
    assert asyncio.run(first.run("Remember the staging password.")).outcome == "completed"

    recall = {"name": "memory_recall", "arguments": {"query": "staging password"}}
    forget = {"name": "memory_forget", "arguments": {"id": 1}}
    second = agent_for(
        tmp_path / "b",
        [
            {"tool_calls": [recall]},
            {"tool_calls": [forget], "expect": {"last_message_contains": "No memory matches"}},
            {"text": "Nothing.", "expect": {"last_message_contains": "there is no memory #1"}},
        ],
    )
    result = asyncio.run(second.run("What is the staging password?"))
    assert result.outcome == "completed", result.reason
    assert "hunter2" not in str([e for e in result.events if isinstance(e, ToolResultEvent)])


def test_scripted_runs_sharing_the_global_scope_recall_across_workspaces(tmp_path, neta_home):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    save = {"name": "memory_save", "arguments": {"content": "The user prefers tabs."}}
    first = agent_for(tmp_path / "a", [{"tool_calls": [save]}, {"text": "Noted."}])
    shared = first.new_session(extras={"memory_scope": "global"})
    assert asyncio.run(first.run("Remember: tabs.", session=shared)).outcome == "completed"

    recall = {"name": "memory_recall", "arguments": {"query": "tabs"}}
    second = agent_for(
        tmp_path / "b",
        [
            {"tool_calls": [recall]},
            {"text": "Tabs.", "expect": {"last_message_contains": "The user prefers tabs."}},
        ],
    )
    shared = second.new_session(extras={"memory_scope": "global"})
    result = asyncio.run(second.run("Tabs or spaces?", session=shared))
    assert result.outcome == "completed", result.reason


def test_agent_session_and_prompt_do_not_open_the_database(tmp_path, neta_home):
    agent = agent_for(tmp_path, [])
    session = agent.new_session()
    assert "memory_save" in session.tools
    assert "## memory_save" in agent.system_prompt(session)
    assert not neta_home.exists()
