"""The openai provider through the real SDK against a fake server on a loopback port."""

import asyncio
import errno
import math
import socket
import ssl

import pytest

import neta
from neta.events import ToolResultEvent
from neta.messages import Message
from neta.providers.base import ModelRequest
from neta.providers.openai_compat import OpenAIProvider
from neta.runtime.agent import Agent
from tests.core.runtime import kit
from tests.fake_openai import FakeOpenAI, Reply


def request(text="hi", tools=None):
    return ModelRequest(messages=[Message(role="user", content=text)], tools=tools or [], model="m")


@pytest.mark.parametrize("stream", [True, False], ids=["streaming", "whole"])
def test_text_and_tool_calls_come_back_whole(stream):
    reply = Reply(
        text="Let me check.", tool_calls=[("echo", '{"text": "hello world"}')], usage=(12, 7)
    )
    with FakeOpenAI([reply]) as server:
        provider = OpenAIProvider("m", base_url=server.base_url, stream=stream, max_retries=0)
        pieces = []
        response = asyncio.run(provider.complete(request(), pieces.append))
    assert response.text == "Let me check."
    assert "".join(pieces) == "Let me check."
    [tool_call] = response.tool_calls
    assert (tool_call.name, tool_call.arguments) == ("echo", '{"text": "hello world"}')
    assert tool_call.id == "call_0"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (12, 7)
    assert server.requests[0]["messages"] == [{"role": "user", "content": "hi"}]
    assert server.requests[0]["model"] == "m"
    assert bool(server.requests[0].get("stream")) is stream


def test_streaming_sends_text_in_pieces():
    with FakeOpenAI([Reply(text="one two three")]) as server:
        provider = OpenAIProvider("m", base_url=server.base_url, max_retries=0)
        pieces = []
        asyncio.run(provider.complete(request(), pieces.append))
    assert pieces == ["one ", "two ", "three"]


def test_rate_limit_is_retried_with_backoff_then_succeeds():
    with FakeOpenAI([Reply(status=429, text="slow down"), Reply(text="fine")]) as server:
        provider = OpenAIProvider("m", base_url=server.base_url, max_retries=2)
        response = asyncio.run(provider.complete(request(), lambda _: None))
    assert response.text == "fine"
    assert len(server.requests) == 2


def test_client_error_is_a_non_retryable_provider_error():
    with FakeOpenAI([Reply(status=400, text="bad tool schema")]) as server:
        provider = OpenAIProvider("m", base_url=server.base_url, max_retries=2)
        with pytest.raises(neta.ProviderError, match="400: bad tool schema") as caught:
            asyncio.run(provider.complete(request(), lambda _: None))
    assert caught.value.retryable is False
    assert len(server.requests) == 1


def test_server_error_after_retries_is_retryable():
    with FakeOpenAI([Reply(status=503, text="busy")] * 2) as server:
        provider = OpenAIProvider("m", base_url=server.base_url, max_retries=1)
        with pytest.raises(neta.ProviderError) as caught:
            asyncio.run(provider.complete(request(), lambda _: None))
    assert caught.value.retryable is True


def test_no_key_and_no_url_is_a_clear_config_error(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(neta.ConfigError, match="needs an API key or a base URL"):
        OpenAIProvider("m")


def test_base_url_and_key_come_from_the_environment(monkeypatch):
    with FakeOpenAI([Reply(text="env works")]) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        response = asyncio.run(
            OpenAIProvider("m", max_retries=0).complete(request(), lambda _: None)
        )
    assert response.text == "env works"


def kit_agent(server, tmp_path, **options):
    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("kit", kit)])
    return Agent(
        permissions="auto",
        provider="openai",
        model="fake-model",
        plugin_manager=pm,
        workspace=tmp_path,
        provider_options={"base_url": server.base_url, "api_key": "sk-test", "max_retries": 0},
        **options,
    )


def test_end_to_end_bad_json_then_recovery_through_the_sdk(tmp_path):
    replies = [
        Reply(tool_calls=[("echo", '{"text": ')]),
        Reply(tool_calls=[("echo", '{"text": "second try"}')]),
        Reply(text="Recovered."),
    ]
    with FakeOpenAI(replies) as server:
        result = asyncio.run(kit_agent(server, tmp_path).run("echo something"))
    assert result.outcome == "completed"
    assert result.text == "Recovered."
    bad, good = [e for e in result.events if isinstance(e, ToolResultEvent)]
    assert "not valid JSON" in bad.content
    assert good.content == "echo: second try"
    # the model was shown its error, tied to its own call id
    tool_message = server.requests[1]["messages"][-1]
    assert tool_message["role"] == "tool"
    assert tool_message["tool_call_id"] == "call_0"
    assert "not valid JSON" in tool_message["content"]
    assert (result.usage.input_tokens, result.usage.output_tokens) == (30, 15)


def test_end_to_end_unknown_tool_through_the_sdk(tmp_path):
    with FakeOpenAI([Reply(tool_calls=[("delete_everything", "{}")]), Reply(text="ok")]) as server:
        result = asyncio.run(kit_agent(server, tmp_path).run("go"))
    [event] = [e for e in result.events if isinstance(e, ToolResultEvent)]
    assert "unknown tool 'delete_everything'" in event.content
    assert "Available tools:" in event.content
    assert server.requests[0]["tools"][0]["function"]["name"] == "echo"


def test_end_to_end_tool_timeout_through_the_sdk(tmp_path):
    replies = [Reply(tool_calls=[("quick", '{"seconds": 10}')]), Reply(text="moved on")]
    with FakeOpenAI(replies) as server:
        result = asyncio.run(kit_agent(server, tmp_path).run("go"))
    [event] = [e for e in result.events if isinstance(e, ToolResultEvent)]
    assert "timed out after 0.2 s" in event.content
    assert result.text == "moved on"


def test_end_to_end_max_turns_through_the_sdk(tmp_path):
    replies = [Reply(tool_calls=[("echo", '{"text": "again"}')]) for _ in range(3)]
    with FakeOpenAI(replies) as server:
        result = asyncio.run(kit_agent(server, tmp_path, max_turns=2).run("loop forever"))
    assert result.outcome == "max_turns"
    assert len(server.requests) == 2


def test_strict_schemas_are_sent_when_asked(tmp_path):
    with FakeOpenAI([Reply(text="ok")]) as server:
        asyncio.run(kit_agent(server, tmp_path, strict_schemas=True).run("go"))
    function = server.requests[0]["tools"][0]["function"]
    assert function["strict"] is True
    assert function["parameters"]["additionalProperties"] is False


def test_end_to_end_run_reads_and_patches_a_file_through_the_sdk(tmp_path):
    import json

    import neta_base.plugin

    (tmp_path / "config.py").write_text("PORT = 8080\nDEBUG = True\n")
    patch_args = {"path": "config.py", "old_string": "DEBUG = True", "new_string": "DEBUG = False"}
    replies = [
        Reply(tool_calls=[("read_file", json.dumps({"path": "config.py"}))]),
        Reply(text="Turning debug off.", tool_calls=[("patch", json.dumps(patch_args))]),
        Reply(text="Debug is off."),
    ]
    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("base", neta_base.plugin)])
    with FakeOpenAI(replies) as server:
        agent = Agent(
            permissions="auto",
            provider="openai",
            model="fake-model",
            plugin_manager=pm,
            workspace=tmp_path,
            provider_options={"base_url": server.base_url, "api_key": "sk-test", "max_retries": 0},
        )
        result = asyncio.run(agent.run("turn debug off in config.py"))
    assert result.outcome == "completed"
    assert (tmp_path / "config.py").read_text() == "PORT = 8080\nDEBUG = False\n"
    read_result = server.requests[1]["messages"][-1]
    assert read_result["role"] == "tool"
    assert "DEBUG = True" in read_result["content"]
    patch_result = server.requests[2]["messages"][-1]["content"]
    assert "-DEBUG = True" in patch_result
    assert "+DEBUG = False" in patch_result
    assert "strategy: exact" in patch_result
    offered = {t["function"]["name"] for t in server.requests[0]["tools"]}
    assert offered == {"bash", "read_file", "write_file", "list_dir", "patch"}
    assert server.requests[0]["messages"][0]["role"] == "system"


def choice(delta=None, finish=None, **extra):
    entry = {"index": 0, "finish_reason": finish, **extra}
    if delta is not None:
        entry["delta"] = delta
    return {"choices": [entry]}


def calls_delta(*parts):
    return choice({"tool_calls": list(parts)})


def stream_once(reply, on_text=None):
    with FakeOpenAI([reply]) as server:
        provider = OpenAIProvider("m", base_url=server.base_url, max_retries=0)
        return asyncio.run(provider.complete(request(), on_text or (lambda _: None)))


def test_streamed_tool_calls_without_an_index_are_told_apart_by_their_ids():
    chunks = [
        calls_delta({"id": "a", "function": {"name": "echo", "arguments": '{"te'}}),
        calls_delta({"function": {"arguments": 'xt": "1"}'}}),
        calls_delta({"id": "b", "function": {"name": "echo", "arguments": '{"text": "2"}'}}),
        choice({}, "tool_calls"),
    ]
    response = stream_once(Reply(raw_chunks=chunks))
    assert [(c.id, c.arguments) for c in response.tool_calls] == [
        ("a", '{"text": "1"}'),
        ("b", '{"text": "2"}'),
    ]


def test_streamed_tool_calls_all_at_index_zero_with_new_ids_are_separate_calls():
    chunks = [
        calls_delta({"index": 0, "id": "c", "function": {"name": "echo", "arguments": "{}"}}),
        calls_delta({"index": 0, "id": "d", "function": {"name": "boom", "arguments": ""}}),
        calls_delta({"index": 0, "function": {"arguments": "{}"}}),
        choice({}, "tool_calls"),
    ]
    response = stream_once(Reply(raw_chunks=chunks))
    assert [(c.id, c.name, c.arguments) for c in response.tool_calls] == [
        ("c", "echo", "{}"),
        ("d", "boom", "{}"),
    ]


def test_streamed_tool_call_name_repeated_in_every_chunk_is_not_doubled():
    chunks = [
        calls_delta({"index": 0, "id": "e", "function": {"name": "echo", "arguments": ""}}),
        calls_delta({"index": 0, "function": {"name": "echo", "arguments": '{"text": "x"}'}}),
        choice({}, "tool_calls"),
    ]
    [tool_call] = stream_once(Reply(raw_chunks=chunks)).tool_calls
    assert (tool_call.name, tool_call.arguments) == ("echo", '{"text": "x"}')


def test_stream_chunks_without_choices_or_delta_are_skipped():
    chunks = [
        {"choices": None},
        choice(None),
        choice({"content": "still "}),
        choice({"content": "here"}, "stop"),
    ]
    pieces = []
    response = stream_once(Reply(raw_chunks=chunks), pieces.append)
    assert response.text == "still here"
    assert pieces == ["still ", "here"]


def test_stream_values_of_the_wrong_kind_are_ignored():
    chunks = [
        {"choices": {"0": "not a list"}},
        choice({"content": 42, "tool_calls": "not a list"}),
        choice({"content": "fine", "tool_calls": [{"index": 0, "function": "odd"}]}),
        {"choices": [{"delta": {}, "finish_reason": 7}], "usage": {"prompt_tokens": "x"}},
        choice({}, "stop"),
    ]
    response = stream_once(Reply(raw_chunks=chunks), lambda _: None)
    assert response.text == "fine"
    assert [(c.name, c.arguments) for c in response.tool_calls] == [("", "")]
    assert response.finish_reason == "stop"
    assert response.usage is not None
    assert response.usage.input_tokens == 0


def test_tool_calls_without_ids_get_ids_unique_across_turns():
    chunks = [
        calls_delta({"index": 0, "function": {"name": "echo", "arguments": "{}"}}),
        choice({}, "tool_calls"),
    ]
    with FakeOpenAI([Reply(raw_chunks=chunks), Reply(raw_chunks=chunks)]) as server:
        provider = OpenAIProvider("m", base_url=server.base_url, max_retries=0)
        first = asyncio.run(provider.complete(request(), lambda _: None)).tool_calls[0].id
        second = asyncio.run(provider.complete(request(), lambda _: None)).tool_calls[0].id
    assert first
    assert second
    assert first != second


def test_whole_reply_tool_call_without_id_or_type_is_still_a_call():
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"function": {"name": "echo", "arguments": '{"text": "w"}'}}],
    }
    with FakeOpenAI([Reply(raw_message=message)]) as server:
        provider = OpenAIProvider("m", base_url=server.base_url, stream=False, max_retries=0)
        response = asyncio.run(provider.complete(request(), lambda _: None))
    [tool_call] = response.tool_calls
    assert (tool_call.name, tool_call.arguments) == ("echo", '{"text": "w"}')
    assert tool_call.id


@pytest.mark.parametrize("stream", [True, False], ids=["streaming", "whole"])
def test_finish_reason_length_is_reported(stream):
    with FakeOpenAI([Reply(text="The answer is", finish_reason="length")]) as server:
        provider = OpenAIProvider("m", base_url=server.base_url, stream=stream, max_retries=0)
        response = asyncio.run(provider.complete(request(), lambda _: None))
    assert response.finish_reason == "length"
    assert response.text == "The answer is"


@pytest.mark.parametrize(
    ("how", "message"),
    [
        ("error", "overloaded mid-stream"),
        ("garbage", "malformed"),
        ("drop", "cut off"),
        ("truncate", "cut off.*connection broke"),
    ],
)
def test_stream_failing_midway_is_a_provider_error(how, message):
    with FakeOpenAI([Reply(text="one two three four", fail_after=(3, how))]) as server:
        provider = OpenAIProvider("m", base_url=server.base_url, max_retries=0)
        pieces = []
        with pytest.raises(neta.ProviderError, match=message):
            asyncio.run(provider.complete(request(), pieces.append))
    assert pieces == ["one ", "two "]


def test_a_whole_reply_cut_short_is_a_cut_off_not_an_unreachable_server():
    reply = Reply(text="one two three four", fail_after=(0, "truncate"))
    with FakeOpenAI([reply]) as server:
        provider = OpenAIProvider("m", base_url=server.base_url, stream=False, max_retries=0)
        with pytest.raises(neta.ProviderError, match=r"cut off.*connection broke") as cut:
            asyncio.run(provider.complete(request(), lambda _: None))
    assert cut.value.retryable
    assert "cannot reach" not in str(cut.value)


@pytest.mark.parametrize(
    ("messages", "tools"),
    [
        ([Message(role="user", content="hi")], [{"type": "function", "x": math.inf}]),
        # a Message made without its checks (they replace such halves): the provider's own
        ([Message.model_construct(role="user", content="half an emoji \ud83d")], []),
    ],
    ids=["infinity-in-a-schema", "lone-surrogate"],
)
def test_a_request_json_cannot_hold_is_a_provider_error_and_nothing_is_sent(messages, tools):
    with FakeOpenAI([Reply(text="never")]) as server:
        provider = OpenAIProvider("m", base_url=server.base_url, max_retries=0)
        asked = ModelRequest(messages=messages, tools=tools, model="m")
        with pytest.raises(neta.ProviderError, match="cannot be sent as JSON") as refused:
            asyncio.run(provider.complete(asked, lambda _: None))
    assert not refused.value.retryable
    assert server.requests == []


def test_end_to_end_stream_failing_midway_ends_the_run_with_outcome_error(tmp_path):
    with FakeOpenAI([Reply(text="partial answer", fail_after=(2, "error"))]) as server:
        result = asyncio.run(kit_agent(server, tmp_path).run("go"))
    assert result.outcome == "error"
    assert "overloaded mid-stream" in result.reason


def test_cancelling_the_run_while_the_model_streams_stops_at_once(tmp_path):
    from neta.events import TextDelta

    with FakeOpenAI([Reply(text="slow words here", stall_after=2)]) as server:
        agent = kit_agent(server, tmp_path)
        events = []

        async def scenario():
            task = asyncio.create_task(agent.run("go", on_event=events.append))
            while not any(isinstance(e, TextDelta) for e in events):
                await asyncio.sleep(0.01)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

        asyncio.run(asyncio.wait_for(scenario(), 5))
    assert events[-1].type == "run_finished"
    assert events[-1].outcome == "cancelled"


def test_an_empty_reply_goes_back_as_empty_text_not_null_in_the_next_request(tmp_path):
    # APIs reject an assistant message with neither content nor tool calls
    with FakeOpenAI([Reply(text=""), Reply(text="second")]) as server:
        agent = kit_agent(server, tmp_path)
        session = agent.new_session()
        asyncio.run(agent.run("first", session=session))
        asyncio.run(agent.run("again", session=session))
    assistant = server.requests[1]["messages"][2]
    assert assistant == {"role": "assistant", "content": ""}


def test_a_long_conversation_with_many_tools_costs_little_cpu_per_call():
    # The SDK's typed create() walked every message and schema on each call: ~130 ms of CPU
    # here. The body is plain JSON and goes out as it is (~11 ms, the fake server included).
    import time

    from neta.providers.client_pool import ClientPool

    schema = {"type": "string", "description": "x" * 50}
    tools = [
        {
            "type": "function",
            "function": {
                "name": f"tool_{i}",
                "description": "d" * 200,
                "parameters": {
                    "type": "object",
                    "properties": {f"p{j}": schema for j in range(6)},
                    "required": ["p0"],
                },
            },
        }
        for i in range(20)
    ]
    roles = ("user", "assistant")
    messages = [Message(role=roles[i % 2], content="word " * 40) for i in range(300)]
    long_request = ModelRequest(messages=messages, tools=tools, model="m")
    with FakeOpenAI([Reply(text="ok")] * 11) as server:
        provider = OpenAIProvider("m", base_url=server.base_url, max_retries=0)

        async def calls() -> float:
            pool = ClientPool()
            with pool.active():
                await provider.complete(long_request, lambda _: None)
                started = time.process_time()
                for _ in range(10):
                    await provider.complete(long_request, lambda _: None)
                spent = time.process_time() - started
            await pool.aclose()
            return spent / 10

        per_call = asyncio.run(calls())
    assert server.requests[-1]["tools"] == tools
    assert len(server.requests[-1]["messages"]) == 300
    assert per_call < 0.05, f"{per_call * 1000:.0f} ms of CPU per call"


def test_a_run_without_a_host_makes_one_client_for_all_its_turns_and_closes_it(
    tmp_path, monkeypatch
):
    # Each client costs CPU to make and its own connections; a run needs only one.
    made = []
    new_client = OpenAIProvider._new_client

    def counted(self):
        made.append(new_client(self))
        return made[-1]

    monkeypatch.setattr(OpenAIProvider, "_new_client", counted)
    replies = [Reply(tool_calls=[("echo", '{"text": "again"}')]) for _ in range(2)]
    with FakeOpenAI([*replies, Reply(text="done"), Reply(text="done again")]) as server:
        agent = kit_agent(server, tmp_path)
        first = asyncio.run(agent.run("three turns"))
        second = asyncio.run(agent.run("three more"))
    assert (first.turns, second.outcome) == (3, "completed")
    assert len(made) == 2  # one per run (each asyncio.run is a new event loop)
    assert all(client.is_closed() for client in made)


def test_clients_after_the_first_load_no_certificates(tmp_path, certificate_loads):
    # Loading the CA certificates costs ~40 ms of CPU; every run without a host makes a client.
    replies = [Reply(text="first"), Reply(text="one"), Reply(text="two"), Reply(text="three")]
    with FakeOpenAI(replies) as server:
        agent = kit_agent(server, tmp_path)
        assert asyncio.run(agent.run("first")).outcome == "completed"
        certificate_loads.clear()  # whatever the first client and its imports loaded
        for prompt in ("one", "two", "three"):
            assert asyncio.run(agent.run(prompt)).outcome == "completed"
    assert certificate_loads == []


def test_a_failed_connection_is_told_in_plain_words_whatever_the_transport_wraps_it_in():
    from neta.providers.openai_compat import _connect_failure

    def wrapped(cause: BaseException) -> Exception:
        try:
            raise RuntimeError("Cannot connect to host … [Connect call failed …]") from cause
        except RuntimeError as outer:
            return outer

    refused = ConnectionRefusedError(errno.ECONNREFUSED, "Connect call failed")
    assert _connect_failure(wrapped(refused)) == "connection refused"
    unknown = socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    assert _connect_failure(wrapped(unknown)) == "the host name does not resolve"
    untrusted = ssl.SSLCertVerificationError(1, "[SSL: CERTIFICATE_VERIFY_FAILED] …")
    untrusted.verify_message = "self-signed certificate"
    assert _connect_failure(wrapped(untrusted)) == (
        "its TLS certificate was not accepted (self-signed certificate)"
    )
    unreachable = OSError(errno.ENETUNREACH, "Network is unreachable")
    assert _connect_failure(wrapped(unreachable)) == "network is unreachable"
