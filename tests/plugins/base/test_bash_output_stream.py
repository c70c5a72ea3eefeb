"""bash passes on what a command writes while it runs (``tool_output`` events)."""

import asyncio
import json

import neta
import neta_base.plugin
from neta.events import ToolCallStart, ToolOutput, ToolResultEvent
from neta_base import bash


def streamed_run(session, command, on_event=None, timeout=30):
    """Run ``command`` with ``session``'s bash tool; the events it emitted and its result."""
    events = []

    def emit(event):
        events.append(event)
        if on_event is not None:
            on_event(event)

    session.emit = emit
    tool = bash.build(session)
    result = asyncio.run(tool.invoke(bash.BashArgs(command=command, timeout=timeout)))
    return [e for e in events if isinstance(e, ToolOutput)], result


def test_bash_output_arrives_while_the_command_still_runs(unsandboxed):
    go = unsandboxed.workspace / "go"
    # the command goes on only once its first line was passed on: never, without streaming
    command = "echo first; while [ ! -e go ]; do sleep 0.05; done; echo second"

    def on_event(event):
        if "first" in event.text:
            go.touch()

    outputs, result = streamed_run(unsandboxed, command, on_event, timeout=20)
    assert not result.data["timed_out"], result.content
    assert "".join(e.text for e in outputs) == "first\nsecond\n"
    assert {e.name for e in outputs} == {"bash"}
    assert result.content == "first\nsecond\n[exit code 0]"


def test_bash_streams_only_the_start_of_a_long_output_which_the_result_keeps(unsandboxed):
    outputs, result = streamed_run(unsandboxed, "head -c 50000 /dev/zero | tr '\\0' x")
    streamed = "".join(e.text for e in outputs)
    assert streamed == "x" * bash.STREAM_CHARS
    assert result.content.startswith(streamed)
    assert len(outputs) < 50  # gathered, not one event per read


def test_bash_output_events_come_between_the_call_and_its_result_in_a_run(tmp_path):
    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("base", neta_base.plugin)])
    command = {"command": "echo one; echo two"}
    provider = neta.ScriptedProvider(
        [{"tool_calls": [{"name": "bash", "arguments": command}]}, {"text": "done"}]
    )
    agent = neta.Agent(
        provider=provider,
        plugin_manager=pm,
        workspace=tmp_path,
        sandbox="off",
        permissions="auto",
    )
    result = asyncio.run(agent.run("go"))
    kinds = [
        type(e).__name__
        for e in result.events
        if isinstance(e, ToolCallStart | ToolOutput | ToolResultEvent)
    ]
    assert kinds[0] == "ToolCallStart"
    assert kinds[-1] == "ToolResultEvent"
    assert set(kinds[1:-1]) == {"ToolOutput"}
    outputs = [e for e in result.events if isinstance(e, ToolOutput)]
    assert "".join(e.text for e in outputs) == "one\ntwo\n"
    assert all(e.session_id == result.session_id for e in outputs)
    assert json.loads(outputs[0].model_dump_json())["type"] == "tool_output"
