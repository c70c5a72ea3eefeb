"""``neta mcp serve`` driven by the MCP SDK's own client, over stdio and streamable HTTP."""

import asyncio
import os
import socket
import subprocess
import sys
import time

import httpx
import httpx2
import mcp_types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client


@pytest.fixture
def workspace(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "greet.py").write_text('def greet():\n    return "hello"\n')
    return root


@pytest.fixture
def home(tmp_path):
    path = tmp_path / "home"
    path.mkdir()
    return path


def stdio(workspace, home, *options):
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "neta", "mcp", "serve", "-w", str(workspace), *options],
        env={"NETA_HOME": str(home)},
    )


def with_client(target, work, **client_options):
    async def main():
        async with Client(target, mode="legacy", **client_options) as client:
            return await work(client)

    return asyncio.run(main())


def text_of(result):
    return "".join(block.text for block in result.content if block.type == "text")


def test_serve_lists_the_session_tools_with_the_catalog_schemas(workspace, home):
    async def work(client):
        return (await client.list_tools()).tools

    tools = {tool.name: tool for tool in with_client(stdio(workspace, home), work)}
    assert {"read_file", "write_file", "patch", "todo", "clarify"} <= set(tools)
    assert "delegate_task" not in tools  # no model here: no sub-agents
    assert tools["patch"].input_schema["required"] == ["path", "old_string", "new_string"]


def test_toolset_rules_decide_what_is_served(workspace, home):
    async def work(client):
        return {tool.name for tool in (await client.list_tools()).tools}

    denied = with_client(stdio(workspace, home, "--deny", "base"), work)
    assert "patch" not in denied
    assert "todo" in denied
    only = with_client(stdio(workspace, home, "--only", "planning"), work)
    assert only == {"todo"}


def test_patch_edits_a_file_in_the_workspace_and_stays_confined_to_it(workspace, home, tmp_path):
    (tmp_path / "secret.txt").write_text("outside")

    async def work(client):
        patched = await client.call_tool(
            "patch",
            {"path": "greet.py", "old_string": 'return "hello"', "new_string": 'return "hi"'},
        )
        outside = await client.call_tool("read_file", {"path": "../secret.txt"})
        invalid = await client.call_tool("patch", {"path": "greet.py"})
        return patched, outside, invalid

    patched, outside, invalid = with_client(stdio(workspace, home), work)
    assert not patched.is_error, text_of(patched)
    assert (workspace / "greet.py").read_text() == 'def greet():\n    return "hi"\n'
    assert outside.is_error
    assert "outside" not in text_of(outside).replace("outside the workspace", "")
    assert invalid.is_error
    assert "invalid arguments for 'patch'" in text_of(invalid)


def test_clarify_is_an_elicitation_with_the_choices_as_an_enum(workspace, home):
    asked = []

    async def answer(context, params):
        asked.append(params)
        return mcp_types.ElicitResult(action="accept", content={"answer": "tabs"})

    async def work(client):
        return await client.call_tool(
            "clarify", {"question": "Tabs or spaces?", "choices": ["tabs", "spaces"]}
        )

    result = with_client(stdio(workspace, home), work, elicitation_callback=answer)
    assert text_of(result) == "User answered: tabs"
    [params] = asked
    assert params.message == "Tabs or spaces?"
    assert params.requested_schema["properties"]["answer"]["enum"] == ["tabs", "spaces"]


def test_a_declined_elicitation_lets_the_model_decide(workspace, home):
    async def decline(context, params):
        return mcp_types.ElicitResult(action="decline")

    async def work(client):
        return await client.call_tool("clarify", {"question": "Deploy now?"})

    result = with_client(stdio(workspace, home), work, elicitation_callback=decline)
    assert text_of(result).startswith("The user gave no answer. Decide for yourself")


def test_clarify_degrades_as_over_rest_for_a_client_without_elicitation(workspace, home):
    async def work(client):
        return await client.call_tool(
            "clarify", {"question": "Tabs or spaces?", "choices": ["tabs", "spaces"]}
        )

    result = with_client(stdio(workspace, home), work)
    assert text_of(result) == "[clarify] Question: Tabs or spaces?\nChoices: 1. tabs; 2. spaces"


def test_todo_updates_arrive_as_log_messages_before_the_result(workspace, home):
    logged = []

    async def log(params):
        logged.append(params)

    async def work(client):
        plan = [{"id": "1", "content": "write tests", "status": "in_progress"}]
        return await client.call_tool("todo", {"todos": plan})

    result = with_client(stdio(workspace, home), work, logging_callback=log)
    assert not result.is_error, text_of(result)
    [entry] = logged
    assert entry.logger == "neta.todo"
    assert entry.data["todos"][0]["content"] == "write tests"
    assert entry.data["counts"]["in_progress"] == 1


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def http_server(workspace, home):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("NETA_")}
    env["NETA_HOME"] = str(home)
    process = subprocess.Popen(
        [sys.executable, "-m", "neta", "mcp", "serve", "-w", str(workspace),
         "--http", f"127.0.0.1:{port}", "--token", "s3cret"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            assert process.poll() is None, process.stderr.read().decode()
            assert time.monotonic() < deadline, "neta mcp serve --http did not start"
            time.sleep(0.1)
    yield f"http://127.0.0.1:{port}/mcp"
    process.terminate()
    process.wait(timeout=15)
    process.stderr.close()


def over_http(url, token, work):
    async def main():
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with httpx2.AsyncClient(headers=headers) as http:
            transport = streamable_http_client(url, http_client=http)
            async with Client(transport, mode="legacy") as client:
                return await work(client)

    return asyncio.run(main())


def test_http_serves_the_tools_to_a_client_with_the_token(http_server, workspace):
    async def work(client):
        names = {tool.name for tool in (await client.list_tools()).tools}
        read = await client.call_tool("read_file", {"path": "greet.py"})
        return names, read

    names, read = over_http(http_server, "s3cret", work)
    assert "patch" in names
    assert "return" in text_of(read)


def test_http_refuses_a_client_without_the_token(http_server):
    async def work(client):
        return await client.list_tools()

    with pytest.raises(ExceptionGroup):  # the SDK's client cannot even initialize
        over_http(http_server, None, work)
    for headers in ({}, {"Authorization": "Bearer wrong"}):
        raw = httpx.post(http_server, json={"jsonrpc": "2.0"}, headers=headers, timeout=30)
        assert raw.status_code == 401
        assert raw.json() == {"error": "missing or wrong token"}


def test_http_off_loopback_without_a_token_is_refused_at_start(workspace, home):
    env = {k: v for k, v in os.environ.items() if not k.startswith("NETA_")}
    env["NETA_HOME"] = str(home)
    done = subprocess.run(
        [sys.executable, "-m", "neta", "mcp", "serve", "-w", str(workspace),
         "--http", "0.0.0.0:8799"],
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert "NETA_TOKEN" in done.stderr
