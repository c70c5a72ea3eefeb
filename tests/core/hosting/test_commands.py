"""The hub's front door: commands as the worker running a session reads them, and ``act``."""

import asyncio

import pytest

from neta.errors import AnswerRefused, BadFrame, HostError
from neta.hosting.config import HostConfig
from neta.hosting.hub import SessionHub
from neta.hosting.protocol import (
    AnswerQuestion,
    Approve,
    Cancel,
    SendAndWait,
    SendMessage,
    command_from_json,
    command_json,
)
from neta.permissions import ApprovalAnswer
from neta.providers.scripted import ScriptedProvider
from tests.core.hosting.server_harness import builtin_pm


@pytest.mark.parametrize(
    "command",
    [
        SendMessage("hi"),
        SendMessage("", {"call-1": ApprovalAnswer("deny", "not that"), "call-2": "allow once"}),
        AnswerQuestion("r1", "blue"),
        Approve("r2", "allow_once"),
        Approve("r3", "deny", "keep it short"),
        Cancel(),
    ],
)
def test_a_command_sent_to_another_worker_reads_back_the_same(command):
    assert command_from_json(command_json(command)) == command


def test_a_message_command_keeps_the_wire_shape_other_workers_read():
    assert command_json(SendMessage("hi")) == {"type": "message", "text": "hi"}
    assert command_json(Cancel()) == {"type": "cancel_run"}


def test_an_unknown_or_malformed_command_is_refused():
    with pytest.raises(HostError) as unknown:
        command_from_json({"type": "dance"})
    assert unknown.value.code == "unknown_type"
    with pytest.raises(BadFrame):
        command_from_json({"type": "approval_response", "requestId": "r", "choice": "maybe"})


def test_act_runs_a_message_to_its_end_and_refuses_what_nothing_waits_for(tmp_path):
    async def scenario():
        hub = SessionHub(
            HostConfig(
                provider_factory=lambda: ScriptedProvider([{"text": "hello"}]),
                home=tmp_path / "home",
                workspace=tmp_path,
                plugin_manager=builtin_pm(),
            )
        )
        await hub.start()
        live = await hub.create("service")
        hub.release(live)
        await hub.released(live)
        reply = await hub.act(live.session_id, SendAndWait("hi"))
        with pytest.raises(HostError) as not_running:
            await hub.act(live.session_id, Cancel())
        with pytest.raises(AnswerRefused):
            await hub.act(live.session_id, AnswerQuestion("nobody-asked", "blue"))
        await hub.shutdown()
        return reply, not_running.value.code

    reply, code = asyncio.run(scenario())
    assert (reply.reply, reply.outcome) == ("hello", "completed")
    assert code == "not_running"
