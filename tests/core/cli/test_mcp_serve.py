"""``neta mcp serve`` driven by the MCP SDK's own client, over stdio and streamable HTTP.

Starting ``neta`` costs seconds, so each scenario runs one server and one client session
(module-scoped fixtures) and the tests read what it recorded; the one ``--http`` server serves
every HTTP client but those of the tests that need a server of their own (one that makes its
token, one filled to its session limit). The test of the toolset flags runs the command in
this process, with an in-memory client where stdio would be.
"""

import asyncio
import contextlib
import json
import re
import subprocess
import sys
from dataclasses import dataclass, field

import httpx2
import mcp_types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

import neta
from neta.cli import mcp_cmd
from neta.cli.mcp_clients import MAX_SESSIONS
from neta.service.security_headers import HEADERS
from tests import http_clients
from tests.core.cli.cli_runner import neta_in_process
from tests.services import free_port, neta_environ, wait_until_serving

PLAN = [{"id": "1", "content": "write tests", "status": "in_progress"}]
CHOICE = {"question": "Tabs or spaces?", "choices": ["tabs", "spaces"]}


@dataclass
class Record:
    """What one client session saw."""

    tools: dict = field(default_factory=dict)
    results: dict = field(default_factory=dict)
    asked: list = field(default_factory=list)
    logged: list = field(default_factory=list)


@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
    root = tmp_path_factory.mktemp("serve")
    workspace, home = root / "ws", root / "home"
    workspace.mkdir()
    home.mkdir()
    (workspace / "greet.py").write_text('def greet():\n    return "hello"\n')
    (root / "secret.txt").write_text("outside")
    return workspace, home


def stdio(dirs, *options):
    workspace, home = dirs
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "neta", "mcp", "serve", "-w", str(workspace), *options],
        env={"NETA_HOME": str(home)},
    )


def session_with(target, calls, *, elicit=None, headers=None):
    """Run ``calls`` in one client session; answer elicitations from ``elicit``.

    With ``headers``, ``target`` is a streamable HTTP URL and every request carries them.
    """
    record = Record()

    async def answer(context, params):
        record.asked.append(params)
        return elicit.pop(0)

    async def log(params):
        record.logged.append(params)

    async def main():
        extra = {"elicitation_callback": answer} if elicit is not None else {}
        async with contextlib.AsyncExitStack() as stack:
            transport = target
            if headers is not None:
                # on the shared TLS context: a client's own would load the CA certificates
                http = httpx2.AsyncClient(headers=headers, verify=neta.tls_client_context())
                await stack.enter_async_context(http)
                transport = streamable_http_client(target, http_client=http)
            c = Client(transport, mode="legacy", logging_callback=log, **extra)
            await stack.enter_async_context(c)
            record.tools = {tool.name: tool for tool in (await c.list_tools()).tools}
            for key, name, arguments in calls:
                record.results[key] = await c.call_tool(name, arguments)
        return record

    return asyncio.run(main())


def text_of(result):
    return "".join(block.text for block in result.content if block.type == "text")


@pytest.fixture(scope="module")
def capable(dirs):
    """A client that declared elicitation: patch, confinement, clarify, todo."""
    edit = {"path": "greet.py", "old_string": 'return "hello"', "new_string": 'return "hi"'}
    calls = [
        ("patch", "patch", edit),
        ("outside", "read_file", {"path": "../secret.txt"}),
        ("invalid", "patch", {"path": "greet.py"}),
        ("accepted", "clarify", CHOICE),
        ("declined", "clarify", {"question": "Deploy now?"}),
        ("todo", "todo", {"todos": PLAN}),
    ]  # fmt: skip
    answers = [
        mcp_types.ElicitResult(action="accept", content={"answer": "tabs"}),
        mcp_types.ElicitResult(action="decline"),
    ]
    # --mode auto: its elicitations are clarify's, not requests to approve the patch
    return session_with(stdio(dirs, "--mode", "auto"), calls, elicit=answers)


def test_serve_lists_the_session_tools_with_the_catalog_schemas(capable):
    assert {"read_file", "write_file", "patch", "todo", "clarify"} <= set(capable.tools)
    assert "delegate_task" not in capable.tools  # no model here: no sub-agents
    assert capable.tools["patch"].input_schema["required"] == ["path", "old_string", "new_string"]


def test_patch_edits_a_file_in_the_workspace(capable, dirs):
    workspace, _ = dirs
    assert not capable.results["patch"].is_error, text_of(capable.results["patch"])
    assert (workspace / "greet.py").read_text() == 'def greet():\n    return "hi"\n'


def test_file_tools_stay_confined_to_the_workspace(capable):
    outside = capable.results["outside"]
    assert outside.is_error
    assert "outside" not in text_of(outside).replace("outside the workspace", "")


def test_invalid_arguments_are_an_error_result_with_the_validation_message(capable):
    assert capable.results["invalid"].is_error
    assert "invalid arguments for 'patch'" in text_of(capable.results["invalid"])


def test_clarify_is_an_elicitation_with_the_choices_as_an_enum(capable):
    assert text_of(capable.results["accepted"]) == "User answered: tabs"
    first = capable.asked[0]
    assert first.message == "Tabs or spaces?"
    assert first.requested_schema["properties"]["answer"]["enum"] == ["tabs", "spaces"]


def test_a_declined_elicitation_lets_the_model_decide(capable):
    assert "enum" not in capable.asked[1].requested_schema["properties"]["answer"]
    assert text_of(capable.results["declined"]).startswith("The user gave no answer.")


def test_todo_updates_arrive_as_log_messages_before_the_result(capable):
    assert not capable.results["todo"].is_error, text_of(capable.results["todo"])
    [entry] = capable.logged
    assert entry.logger == "neta.todo"
    assert entry.data["todos"][0]["content"] == "write tests"
    assert entry.data["counts"]["in_progress"] == 1


def test_toolset_rules_decide_what_is_served(dirs, monkeypatch):
    # --only serves exactly the toolsets it names, and --deny takes one of those away again:
    # without either flag at work, more than the todo tool would be served. The command runs
    # in this process; where it would serve stdio (the tests above), a client lists its tools.
    served = set()

    async def list_the_tools(server):
        async with Client(server, mode="legacy") as client:
            served.update(tool.name for tool in (await client.list_tools()).tools)

    monkeypatch.setattr(mcp_cmd, "_serve_stdio", list_the_tools)
    workspace, home = dirs
    done = neta_in_process(
        "mcp", "serve", "-w", str(workspace), "--only", "planning", "--only", "base",
        "--deny", "base", env=neta_env(home),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert served == {"todo"}


def neta_env(home):
    return neta_environ(NETA_HOME=str(home))


@contextlib.contextmanager
def serving_http(dirs, name, *token_options):
    """A real ``neta mcp serve --http`` on a free port, its log in ``name.log``: its URL and
    the log's path, until the block ends."""
    workspace, home = dirs
    port = free_port()
    log = workspace.parent / f"{name}.log"
    with log.open("w") as printed:
        process = subprocess.Popen(
            [sys.executable, "-m", "neta", "mcp", "serve", "-w", str(workspace),
             "--http", f"127.0.0.1:{port}", *token_options],
            env=neta_env(home), stdout=printed, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        wait_until_serving(f"http://127.0.0.1:{port}", process, log, seconds=60)
        yield f"http://127.0.0.1:{port}/mcp", log
    finally:
        process.terminate()
        process.wait(timeout=15)


@pytest.fixture(scope="module")
def http_server(dirs):
    # --mode auto: the elicitations tested are clarify's, not requests to approve an edit
    with serving_http(dirs, "http-server", "--token", "s3cret", "--mode", "auto") as (url, _log):
        yield url


def over_http(url, token, calls, **options):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return session_with(url, calls, headers=headers, **options)


@pytest.fixture(scope="module")
def plain(http_server):
    """A client without elicitation (over HTTP: the server is running already)."""
    return over_http(http_server, "s3cret", [("clarify", "clarify", CHOICE)])


def test_clarify_degrades_as_over_rest_for_a_client_without_elicitation(plain):
    assert plain.asked == []
    expected = "[clarify] Question: Tabs or spaces?\nChoices: 1. tabs; 2. spaces"
    assert text_of(plain.results["clarify"]) == expected


def test_http_serves_the_tools_and_elicits_for_a_client_with_the_token(http_server, dirs):
    workspace, _ = dirs
    (workspace / "http.txt").write_text("one\n")
    calls = [
        ("patch", "patch", {"path": "http.txt", "old_string": "one", "new_string": "two"}),
        ("clarify", "clarify", CHOICE),
    ]
    answer = [mcp_types.ElicitResult(action="accept", content={"answer": "spaces"})]
    record = over_http(http_server, "s3cret", calls, elicit=answer)
    assert "patch" in record.tools
    assert not record.results["patch"].is_error, text_of(record.results["patch"])
    assert (workspace / "http.txt").read_text() == "two\n"
    assert text_of(record.results["clarify"]) == "User answered: spaces"


async def http_client(stack, url, token, **options):
    """An SDK client session to ``url`` with ``token``, open until ``stack`` closes."""
    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {token}"},
        verify=neta.tls_client_context(),
        timeout=60,  # a call held up fails by the test's own, shorter wait
    )
    await stack.enter_async_context(http)
    transport = streamable_http_client(url, http_client=http)
    options.setdefault("mode", "legacy")
    return await stack.enter_async_context(Client(transport, **options))


def test_http_gives_each_client_its_own_todo_list(http_server):
    async def main():
        async with contextlib.AsyncExitStack() as stack:
            first = await http_client(stack, http_server, "s3cret")
            second = await http_client(stack, http_server, "s3cret")
            written = await first.call_tool("todo", {"todos": PLAN})
            seen_by_second = await second.call_tool("todo", {})
            seen_by_first = await first.call_tool("todo", {})
            return written, seen_by_second, seen_by_first

    written, seen_by_second, seen_by_first = asyncio.run(main())
    assert not written.is_error, text_of(written)
    assert "(the list is empty)" in text_of(seen_by_second)
    assert "write tests" in text_of(seen_by_first)


def test_a_clarify_one_http_client_leaves_unanswered_holds_up_no_other(http_server):
    async def main():
        asked = asyncio.Event()

        async def never_answer(context, params):
            asked.set()
            await asyncio.Event().wait()

        async with contextlib.AsyncExitStack() as stack:
            silent = await http_client(
                stack, http_server, "s3cret", elicitation_callback=never_answer
            )
            other = await http_client(stack, http_server, "s3cret")
            question = asyncio.create_task(silent.call_tool("clarify", CHOICE))
            try:
                await asyncio.wait_for(asked.wait(), 30)
                # bash, like clarify, runs one call at a time: but per client, not per server
                return await asyncio.wait_for(other.call_tool("bash", {"command": "echo hi"}), 20)
            finally:
                question.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await question

    result = asyncio.run(main())
    assert "hi" in text_of(result) or result.is_error  # answered (bash may be refused here)


def test_http_requests_of_the_sessionless_revision_each_get_a_session_of_their_own(http_server):
    # the 2026-07-28 revision has no MCP session: no request can see another's todo list
    async def main():
        async with contextlib.AsyncExitStack() as stack:
            client = await http_client(stack, http_server, "s3cret", mode="2026-07-28")
            written = await client.call_tool("todo", {"todos": PLAN})
            read = await client.call_tool("todo", {})
            return written, read

    written, read = asyncio.run(main())
    assert not written.is_error, text_of(written)
    assert "write tests" in text_of(written)
    assert "(the list is empty)" in text_of(read)


AUTHORIZED = {"Authorization": "Bearer s3cret", "Accept": "application/json, text/event-stream"}
HANDSHAKE = "2025-11-25"
SESSIONLESS = "2026-07-28"


def answer_of(response):
    """The JSON-RPC answer of ``response``, sent as JSON or as server-sent events."""
    if not response.headers.get("content-type", "").startswith("text/event-stream"):
        return response.json()
    sent = [json.loads(line[5:]) for line in response.text.splitlines() if line[:5] == "data:"]
    [answer] = [message for message in sent if "result" in message or "error" in message]
    return answer


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": HANDSHAKE,
        "capabilities": {},
        "clientInfo": {"name": "by hand", "version": "1"},
    },
}


def open_mcp_session(http, url):
    """Initialize an MCP session by hand, as a client of the handshake revisions does: its id."""
    opened = http.post(url, json=INITIALIZE, headers=AUTHORIZED)
    assert opened.status_code == 200, opened.text
    session_id = opened.headers["mcp-session-id"]
    ready = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    headers = {**AUTHORIZED, "Mcp-Session-Id": session_id, "MCP-Protocol-Version": HANDSHAKE}
    assert http.post(url, json=ready, headers=headers).status_code == 202
    return session_id


def in_session(http, url, session_id, method, params):
    """``method`` asked in MCP session ``session_id``: its JSON-RPC answer."""
    headers = {**AUTHORIZED, "Mcp-Session-Id": session_id, "MCP-Protocol-Version": HANDSHAKE}
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return answer_of(http.post(url, json=body, headers=headers))


def sessionless_call(http, url, name, arguments, **headers):
    """A tools/call of the 2026-07-28 revision (no MCP session), with ``headers`` added."""
    meta = {
        mcp_types.PROTOCOL_VERSION_META_KEY: SESSIONLESS,
        mcp_types.CLIENT_CAPABILITIES_META_KEY: {},
    }
    params = {"name": name, "arguments": arguments, "_meta": meta}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    headers = {
        **AUTHORIZED, "MCP-Protocol-Version": SESSIONLESS, "Mcp-Method": "tools/call",
        "Mcp-Name": name, **headers,
    }  # fmt: skip
    return answer_of(http.post(url, json=body, headers=headers))


def todo_text(answer):
    assert "result" in answer, answer
    return "".join(block["text"] for block in answer["result"]["content"])


def test_a_sessionless_request_naming_another_client_session_does_not_get_into_it(http_server):
    writing, reading = (
        {"name": "todo", "arguments": arguments} for arguments in ({"todos": PLAN}, {})
    )
    with http_clients.client(timeout=30) as http:
        session_id = open_mcp_session(http, http_server)
        written = in_session(http, http_server, session_id, "tools/call", writing)
        assert "write tests" in todo_text(written)
        other = sessionless_call(http, http_server, "todo", {}, **{"Mcp-Session-Id": session_id})
        own = in_session(http, http_server, session_id, "tools/call", reading)
    assert "(the list is empty)" in todo_text(other)
    assert "write tests" in todo_text(own)


def test_a_made_up_session_id_gets_no_lasting_session(http_server):
    made_up = {"Mcp-Session-Id": "made-up"}
    with http_clients.client(timeout=30) as http:
        written = sessionless_call(http, http_server, "todo", {"todos": PLAN}, **made_up)
        read = sessionless_call(http, http_server, "todo", {}, **made_up)
    assert "write tests" in todo_text(written)
    assert "(the list is empty)" in todo_text(read)


def test_http_responses_carry_the_security_headers(http_server):
    with http_clients.client(timeout=30) as http:
        refused = http.post(http_server, json={"jsonrpc": "2.0"})
        answered = http.post(http_server, json=INITIALIZE, headers=AUTHORIZED)
        ending = {**AUTHORIZED, "Mcp-Session-Id": answered.headers["mcp-session-id"]}
        http.delete(http_server, headers=ending)
    assert (refused.status_code, answered.status_code) == (401, 200)
    for response in (refused, answered):
        for name, value in HEADERS.items():
            if name == "Cache-Control" and response.status_code == 200:
                # the MCP SDK's event stream sets its own, which the middleware keeps
                assert response.headers[name].startswith("no-"), response.headers[name]
                continue
            assert response.headers.get(name) == value, (response.status_code, name)


def test_http_refuses_clients_past_the_session_limit_and_says_why(dirs):
    with (
        serving_http(dirs, "http-crowded", "--token", "s3cret") as (url, _log),
        http_clients.client(timeout=30) as http,
    ):
        sessions = [open_mcp_session(http, url) for _ in range(MAX_SESSIONS)]
        for session_id in sessions:  # each has a Neta session now
            assert "result" in in_session(http, url, session_id, "tools/list", {})
        one_more = http.post(url, json=INITIALIZE, headers=AUTHORIZED)
        sessionless = sessionless_call(http, url, "todo", {})
        left = http.delete(url, headers={**AUTHORIZED, "Mcp-Session-Id": sessions[0]})
        after_one_left = sessionless_call(http, url, "todo", {})
    assert one_more.status_code == 503
    assert "Too many open sessions" in one_more.text
    assert f"at most {MAX_SESSIONS} client sessions" in sessionless["error"]["message"]
    assert left.status_code == 200
    assert "(the list is empty)" in todo_text(after_one_left)


def test_http_refuses_a_client_without_the_token(http_server):
    with pytest.raises(ExceptionGroup):  # the SDK's client cannot even initialize
        over_http(http_server, None, [])
    for headers in ({}, {"Authorization": "Bearer wrong"}):
        raw = http_clients.post(http_server, json={"jsonrpc": "2.0"}, headers=headers, timeout=30)
        assert raw.status_code == 401
        assert raw.json() == {"error": "missing or wrong token"}


def test_http_without_a_token_makes_one_says_it_once_and_refuses_clients_without_it(dirs):
    with serving_http(dirs, "http-made-token") as (url, log):
        raw = http_clients.post(url, json={"jsonrpc": "2.0"}, timeout=30)
        assert raw.status_code == 401
        assert raw.json() == {"error": "missing or wrong token"}
        said = log.read_text()
        [token] = re.findall(rf"^Token for {re.escape(url)}: (\S+) ", said, re.MULTILINE)
        assert len(token) >= 43  # secrets.token_urlsafe(32)
        assert said.count(token) == 1
        assert "todo" in over_http(url, token, []).tools


def test_http_off_loopback_without_a_token_is_refused_at_start(dirs):
    workspace, home = dirs
    done = neta_in_process(
        "mcp", "serve", "-w", str(workspace), "--http", "0.0.0.0:8799", env=neta_env(home)
    )
    assert done.returncode == 2
    assert "NETA_TOKEN" in done.stderr
