"""A server's elicitation reaches a WebSocket client as a clarify_request, like clarify does."""

import asyncio
import json

from websockets.asyncio.client import connect

import neta
import neta_interaction.plugin
from neta.hosting.config import HostConfig
from neta.providers.scripted import ScriptedProvider
from neta_mcp import plugin as mcp_plugin
from tests.core.hosting.server_harness import start_server

TURNS = [
    {"tool_calls": [{"name": "pick_colour", "arguments": {}}]},
    {"text": "Red it is.", "expect": {"last_message_contains": "painting the shed red"}},
]


def test_an_elicitation_travels_the_websocket_as_a_clarify_request(workspace, asking, neta_home):
    pm = neta.create_plugin_manager(
        load_entrypoints=False,
        plugins=[("interaction", neta_interaction.plugin), ("mcp", mcp_plugin)],
    )
    config = HostConfig(
        workspace=workspace,
        home=neta_home,
        plugin_manager=pm,
        provider_factory=lambda: ScriptedProvider(TURNS),
        agent_options={"mcp_servers": {"asker": {"url": asking.url}}},
    )
    server = start_server(config)

    async def scenario():
        async with connect(server.ws_url()) as ws:

            async def until(kind):
                while True:
                    frame = json.loads(await asyncio.wait_for(ws.recv(), 30))
                    if frame["type"] == kind:
                        return frame

            ready = await until("session_ready")
            sid = ready["data"]["sessionId"]
            message = {"type": "user_message", "sessionId": sid, "data": {"text": "paint it"}}
            await ws.send(json.dumps(message))
            request = (await until("clarify_request"))["data"]
            answer = {"requestId": request["requestId"], "answer": "red"}
            await ws.send(
                json.dumps({"type": "clarify_response", "sessionId": sid, "data": answer})
            )
            result = (await until("tool_result"))["data"]
            finished = (await until("run_finished"))["data"]
            return request, result, finished

    try:
        request, result, finished = asyncio.run(scenario())
    finally:
        server.stop()
    assert request["question"] == "Which colour for the shed?"
    assert request["choices"] == ["red", "green", "blue"]
    assert result["content"] == "painting the shed red"
    assert finished["outcome"] == "completed"
    assert finished["text"] == "Red it is."
