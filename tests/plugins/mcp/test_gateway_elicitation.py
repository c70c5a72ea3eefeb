"""A server's elicitation through the hosts: a WebSocket client gets a clarify_request, like
clarify's, naming the server that asks; over REST (nobody to ask) the model is told who asked."""

import asyncio
import json

from websockets.asyncio.client import connect

import neta
import neta_interaction.plugin
from neta.hosting.config import HostConfig
from neta.providers.scripted import ScriptedProvider
from neta_mcp import plugin as mcp_plugin
from tests import http_clients
from tests.core.hosting.server_harness import start_server

TURNS = [
    {"tool_calls": [{"name": "pick_colour", "arguments": {}}]},
    {"text": "Red it is.", "expect": {"last_message_contains": "painting the shed red"}},
]


def start_host(workspace, home, asking, turns):
    pm = neta.create_plugin_manager(
        load_entrypoints=False,
        plugins=[("interaction", neta_interaction.plugin), ("mcp", mcp_plugin)],
    )
    config = HostConfig(
        workspace=workspace,
        home=home,
        plugin_manager=pm,
        provider_factory=lambda: ScriptedProvider(turns),
        permissions="auto",
        agent_options={"mcp_servers": {"asker": {"url": asking.url}}},
    )
    return start_server(config)


def test_an_elicitation_travels_the_websocket_as_a_clarify_request(workspace, asking, neta_home):
    server = start_host(workspace, neta_home, asking, TURNS)

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
    assert request["question"] == "MCP server 'asker' asks: Which colour for the shed?"
    assert request["choices"] == ["red", "green", "blue"]
    assert result["content"] == "painting the shed red"
    assert finished["outcome"] == "completed"
    assert finished["text"] == "Red it is."


def test_over_rest_an_elicitation_is_declined_and_the_model_reads_which_server_asked(
    workspace, asking, neta_home
):
    asked = "MCP server 'asker' asks: Which colour for the shed?"
    turns = [
        {"tool_calls": [{"name": "pick_colour", "arguments": {}}]},
        {"text": "Nobody to ask.", "expect": {"last_message_contains": asked}},
    ]
    server = start_host(workspace, neta_home, asking, turns)
    try:
        with http_clients.client(base_url=server.http, timeout=30) as http:
            sid = http.post("/v1/sessions").json()["sessionId"]
            reply = http.post(f"/v1/sessions/{sid}/messages", json={"text": "paint it"}).json()
    finally:
        server.stop()
    [result] = [e for e in reply["events"] if e["type"] == "tool_result"]
    assert result["content"].startswith("no colour: decline\n")
    assert f"[{asked} (declined: nobody can be asked in this session)]" in result["content"]
    assert reply["outcome"] == "completed", reply
