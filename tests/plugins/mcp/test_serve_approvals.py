"""``neta mcp serve``'s approvals: a call the policy asks about is asked of the MCP client.

Most tests serve one session to the SDK's own client in memory (the server object
``neta mcp serve`` builds, without the process around it); one runs the real command over
stdio, one a client of its streamable HTTP app on a loopback port.
"""

import asyncio
import contextlib
import socket
import sys
import threading
import time

import httpx2
import mcp_types
import pytest
import uvicorn
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

import neta
import neta_base.plugin
from neta.cli.mcp_clients import ClientSessions
from neta.cli.mcp_server import ServedSession, SessionServer
from neta.runtime.agent import Agent
from tests.services import neta_environ

GREET = 'def greet():\n    return "hello"\n'
EDIT = {"path": "greet.py", "old_string": 'return "hello"', "new_string": 'return "hi"'}


class Answers:
    """An elicitation callback that gives ``answers`` in turn and records what it is asked."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.asked = []

    async def __call__(self, context, params):
        self.asked.append(params)
        return self.answers.pop(0)


def accept(**content):
    return mcp_types.ElicitResult(action="accept", content=content)


@pytest.fixture
def project(workspace):
    (workspace / "greet.py").write_text(GREET)
    return workspace


def base_agent(workspace, **options):
    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("base", neta_base.plugin)])
    return Agent(provider=None, plugin_manager=pm, workspace=workspace, **options)


def serve_in_memory(agent, calls, answers=None):
    """Serve one session of ``agent`` to an in-memory SDK client making ``calls`` (name,
    arguments); the client declares elicitation when ``answers`` answers it. The results."""

    async def main():
        session = agent.new_session(crew_runner=None)
        server = SessionServer.of(ServedSession(session, policy=agent.policy)).build()
        extra = {"elicitation_callback": answers} if answers is not None else {}
        try:
            async with Client(server, mode="legacy", **extra) as client:
                return [await client.call_tool(name, arguments) for name, arguments in calls]
        finally:
            agent.end_session(session)

    return asyncio.run(main())


def text_of(result):
    return "".join(block.text for block in result.content if block.type == "text")


def test_a_client_allowing_once_gets_the_edit_made_after_reading_the_diff(project):
    answers = Answers(accept(choice="allow_once"))
    [result] = serve_in_memory(base_agent(project), [("patch", EDIT)], answers)
    assert not result.is_error, text_of(result)
    assert (project / "greet.py").read_text() == GREET.replace("hello", "hi")
    [asked] = answers.asked
    assert asked.message.startswith("Approval needed: allow patch to edit?")
    assert '-    return "hello"' in asked.message
    assert '+    return "hi"' in asked.message
    assert "mode 'ask' asks before a tool that writes" in asked.message
    choice = asked.requested_schema["properties"]["choice"]
    assert choice["enum"] == ["allow_once", "allow_always", "deny"]
    assert asked.requested_schema["properties"]["reason"]["type"] == "string"
    assert asked.requested_schema["required"] == ["choice"]


def test_a_client_denying_with_a_reason_leaves_the_command_unrun_and_the_caller_reads_why(
    project,
):
    answers = Answers(accept(choice="deny", reason="no new files today"))
    calls = [("bash", {"command": "touch made.txt"})]
    [result] = serve_in_memory(base_agent(project, sandbox=False), calls, answers)
    assert result.is_error
    assert text_of(result) == "Error: not run: the user denied it: no new files today"
    assert not (project / "made.txt").exists()
    [asked] = answers.asked
    assert asked.message.startswith("Approval needed: allow bash to run?\n\n$ touch made.txt\n")
    assert "\n\nWhy it asks: no rule decides it; mode 'ask'" in asked.message


def test_a_client_allowing_a_command_once_gets_it_run(project):
    answers = Answers(accept(choice="allow_once"))
    calls = [("bash", {"command": "touch made.txt"})]
    [result] = serve_in_memory(base_agent(project, sandbox=False), calls, answers)
    assert not result.is_error, text_of(result)
    assert (project / "made.txt").exists()


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_a_declined_or_cancelled_approval_denies_the_call(project, action):
    answers = Answers(mcp_types.ElicitResult(action=action))
    [result] = serve_in_memory(base_agent(project), [("patch", EDIT)], answers)
    assert result.is_error
    assert text_of(result) == "Error: not run: the user denied it."
    assert (project / "greet.py").read_text() == GREET


def test_an_answer_that_was_not_offered_denies_the_call(project):
    answers = Answers(accept(choice="sure"))
    [result] = serve_in_memory(base_agent(project), [("patch", EDIT)], answers)
    assert result.is_error
    assert "not an offered answer: 'sure'" in text_of(result)
    assert (project / "greet.py").read_text() == GREET


def test_a_client_without_elicitation_is_denied_and_told_nobody_can_approve_it(project):
    [result] = serve_in_memory(base_agent(project), [("patch", EDIT)])
    assert result.is_error
    assert "no one can be asked here to approve it" in text_of(result)
    assert (project / "greet.py").read_text() == GREET


def test_a_call_the_policy_allows_or_denies_asks_nobody(project):
    answers = Answers()
    agent = base_agent(project, permissions={"deny": ["bash"], "allow": ["patch"]})
    calls = [("read_file", {"path": "greet.py"}), ("patch", EDIT), ("bash", {"command": "ls"})]
    read, patched, ran = serve_in_memory(agent, calls, answers)
    assert answers.asked == []
    assert "hello" in text_of(read)
    assert not patched.is_error, text_of(patched)
    assert ran.is_error
    assert text_of(ran).startswith("Error: not run: ")


def test_allow_always_keeps_the_rule_so_the_next_such_call_runs_without_asking(project, neta_home):
    answers = Answers(accept(choice="allow_always"))
    calls = [
        ("write_file", {"path": "notes.txt", "content": "one\n"}),
        ("write_file", {"path": "notes.txt", "content": "two\n"}),
    ]
    first, second = serve_in_memory(base_agent(project), calls, answers)
    assert not first.is_error, text_of(first)
    assert not second.is_error, text_of(second)
    assert (project / "notes.txt").read_text() == "two\n"
    [asked] = answers.asked
    assert "'allow_always' keeps: write_file(/notes.txt)" in asked.message
    assert "write_file(/notes.txt)" in (neta_home / "approvals.json").read_text()


def test_neta_mcp_serve_over_stdio_asks_its_client_before_an_edit_and_a_command(project):
    # the real command, in its default mode: the edit is allowed once, the command denied
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "neta", "mcp", "serve", "-w", str(project)],
        env=neta_environ(),
    )
    answers = Answers(
        accept(choice="allow_once"), accept(choice="deny", reason="not on this machine")
    )

    async def main():
        async with Client(params, mode="legacy", elicitation_callback=answers) as client:
            patched = await client.call_tool("patch", EDIT)
            ran = await client.call_tool("bash", {"command": "touch made.txt"})
            return patched, ran

    patched, ran = asyncio.run(main())
    assert not patched.is_error, text_of(patched)
    assert (project / "greet.py").read_text() == GREET.replace("hello", "hi")
    assert text_of(ran) == "Error: not run: the user denied it: not on this machine"
    assert not (project / "made.txt").exists()
    assert [asked.message.splitlines()[0] for asked in answers.asked] == [
        "Approval needed: allow patch to edit?",
        "Approval needed: allow bash to run?",
    ]


@contextlib.contextmanager
def serving_http(agent):
    """``agent``'s client sessions served over streamable HTTP on a loopback port: the URL."""
    clients = ClientSessions(agent)
    app = clients.http_app(SessionServer(clients.session_for).build(), host="127.0.0.1")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    finally:
        server.should_exit = True
        thread.join(timeout=15)
        clients.close()


def test_an_http_client_is_asked_and_each_answer_decides_its_own_call(project):
    answers = Answers(accept(choice="deny", reason="keep it hello"), accept(choice="allow_once"))

    async def visit(url):
        http = httpx2.AsyncClient(verify=neta.tls_client_context())
        transport = streamable_http_client(url, http_client=http)
        async with http, Client(transport, mode="legacy", elicitation_callback=answers) as c:
            return await c.call_tool("patch", EDIT), await c.call_tool("patch", EDIT)

    with serving_http(base_agent(project)) as url:
        denied, allowed = asyncio.run(visit(url))
    assert text_of(denied) == "Error: not run: the user denied it: keep it hello"
    assert not allowed.is_error, text_of(allowed)
    assert (project / "greet.py").read_text() == GREET.replace("hello", "hi")
    assert len(answers.asked) == 2


def test_a_client_that_fails_to_answer_gets_the_call_denied_and_told_why(project):
    async def broken(context, params):
        return mcp_types.ErrorData(code=mcp_types.INTERNAL_ERROR, message="no screen attached")

    [result] = serve_in_memory(base_agent(project), [("patch", EDIT)], broken)
    assert result.is_error
    assert text_of(result).startswith("Error: not run: the user could not be asked: ")
    assert "no screen attached" in text_of(result)
    assert (project / "greet.py").read_text() == GREET
