"""A stored history the anthropic provider must send whatever it holds.

Through the real SDK against the fake Messages API, which refuses (400) what the real API
would; each test shows the session stays usable: a later run on it completes and no request
was refused.
"""

import asyncio
import json

import pytest

import neta
from neta_anthropic import plugin
from neta_anthropic.history import MAX_INPUT_DEPTH, to_anthropic
from tests.core.runtime import kit
from tests.fake_anthropic import FakeAnthropic, Reply

KEY = "sk-ant-test"


def nested(depth):
    return "[" * depth + "]" * depth


UNSENDABLE = {
    "nested-past-the-parser": '{"text": ' + nested(5000) + "}",
    "nested-past-the-limit": '{"text": ' + nested(MAX_INPUT_DEPTH) + "}",
    "nan": '{"text": NaN}',
    "infinity": '{"text": -Infinity}',
    "overflowing-float": '{"text": 1e999}',
    "thousands-of-digits": '{"text": ' + "9" * 5000 + "}",
    "half-a-surrogate-pair": '{"text": "\\ud83d"}',
}


def stored(arguments, call_id="toolu_old"):
    """A history whose one tool call holds ``arguments``, answered with an error."""
    return [
        neta.Message(role="user", content="earlier"),
        neta.Message(
            role="assistant",
            tool_calls=[neta.ToolCall(id=call_id, name="echo", arguments=arguments)],
        ),
        neta.Message(
            role="tool", tool_call_id=call_id, name="echo", content="Error: bad", is_error=True
        ),
        neta.Message(role="assistant", content="That failed."),
    ]


def agent(server, tmp_path):
    pm = neta.create_plugin_manager(
        load_entrypoints=False, plugins=[("anthropic", plugin), ("kit", kit)]
    )
    return neta.Agent(
        permissions="auto",
        model="anthropic:claude-test",
        plugin_manager=pm,
        workspace=tmp_path,
        provider_options={"base_url": server.base_url, "api_key": KEY},
        retry=neta.RetryPolicy(max_tries=1),
    )


def sent_input(body):
    [use] = [
        block
        for turn in body["messages"]
        for block in turn["content"]
        if block["type"] == "tool_use"
    ]
    return use["input"]


@pytest.mark.parametrize("arguments", UNSENDABLE.values(), ids=UNSENDABLE.keys())
def test_stored_arguments_that_cannot_be_sent_go_as_an_empty_object(arguments):
    from neta_anthropic.provider import AnthropicProvider

    asked = neta.ModelRequest(
        messages=[*stored(arguments), neta.Message(role="user", content="go")]
    )
    with FakeAnthropic([Reply(text="Still here.")]) as server:
        provider = AnthropicProvider("claude-test", base_url=server.base_url, api_key=KEY)
        response = asyncio.run(provider.complete(asked, lambda _: None))
    assert response.text == "Still here."
    assert server.rejected == []
    assert sent_input(server.requests[0]) == {}


STORED = {k: v for k, v in UNSENDABLE.items() if k != "thousands-of-digits"}


@pytest.mark.parametrize("arguments", STORED.values(), ids=STORED.keys())
def test_a_session_holding_such_arguments_keeps_working(tmp_path, arguments):
    with FakeAnthropic([Reply(text="First."), Reply(text="Second.")]) as server:
        runner = agent(server, tmp_path)
        session = runner.new_session(history=stored(arguments))
        first = asyncio.run(runner.run("go", session=session))
        second = asyncio.run(runner.run("again", session=session))
    assert (first.outcome, first.text) == ("completed", "First.")
    assert (second.outcome, second.text) == ("completed", "Second.")
    assert server.rejected == []


@pytest.mark.parametrize(
    "arguments",
    ['{"text": NaN}', '{"text": "\\ud83d"}', '{"text": ' + nested(3000) + "}"],
    ids=["nan", "half-a-surrogate-pair", "nested-past-the-parser"],
)
def test_a_model_writing_such_arguments_gets_an_error_and_the_session_goes_on(tmp_path, arguments):
    replies = [Reply(tool_calls=[("echo", arguments)]), Reply(text="I see."), Reply(text="Again.")]
    with FakeAnthropic(replies) as server:
        runner = agent(server, tmp_path)
        session = runner.new_session()
        first = asyncio.run(runner.run("go", session=session))
        second = asyncio.run(runner.run("again", session=session))
    assert (first.outcome, first.text) == ("completed", "I see.")
    assert (second.outcome, second.text) == ("completed", "Again.")
    assert server.rejected == []


def test_arguments_nested_as_deep_as_the_limit_are_sent_as_they_are():
    value = {"text": json.loads(nested(MAX_INPUT_DEPTH - 1))}
    [_, assistant, _, _] = to_anthropic(stored(json.dumps(value)))
    assert assistant["content"][0]["input"] == value


def test_broken_or_non_object_arguments_still_go_back_as_the_text_they_were():
    for arguments in ('{"text": ', "[1, 2]"):
        [_, assistant, _, _] = to_anthropic(stored(arguments))
        assert assistant["content"][0]["input"] == {"unparsed_arguments": arguments}


def test_the_fake_api_refuses_a_tool_use_id_used_twice_in_a_request():
    from neta_anthropic.provider import AnthropicProvider

    history = [*stored("{}", "toolu_same"), *stored("{}", "toolu_same")[1:]]
    asked = neta.ModelRequest(messages=[*history, neta.Message(role="user", content="go")])
    with FakeAnthropic([Reply(text="never")]) as server:
        provider = AnthropicProvider("claude-test", base_url=server.base_url, api_key=KEY)
        with pytest.raises(neta.ProviderError, match=r"400: .*ids must be unique") as refused:
            asyncio.run(provider.complete(asked, lambda _: None))
    assert server.rejected == ["messages.3.content.1: `tool_use` ids must be unique"]
    assert refused.value.retryable is False


def test_text_a_request_cannot_hold_is_a_provider_error_and_nothing_is_sent():
    from neta_anthropic.provider import AnthropicProvider

    # a Message made without its checks (they replace such halves): the provider's own
    unchecked = neta.Message.model_construct(role="user", content="half \ud83d")
    asked = neta.ModelRequest(messages=[unchecked])
    with FakeAnthropic([Reply(text="never")]) as server:
        provider = AnthropicProvider("claude-test", base_url=server.base_url, api_key=KEY)
        with pytest.raises(neta.ProviderError, match="cannot be sent as JSON") as refused:
            asyncio.run(provider.complete(asked, lambda _: None))
    assert refused.value.retryable is False
    assert refused.value.provider == "anthropic"
    assert server.requests == []


def test_a_server_numbering_tool_uses_afresh_in_every_reply_keeps_the_session_usable(tmp_path):
    # the fake numbers each reply's tool uses from toolu_0, as a server reusing ids would
    replies = [
        Reply(tool_calls=[("echo", '{"text": "one"}')]),
        Reply(tool_calls=[("echo", '{"text": "two"}')]),
        Reply(text="done"),
        Reply(tool_calls=[("echo", '{"text": "three"}')]),
        Reply(text="again done"),
    ]
    with FakeAnthropic(replies) as server:
        runner = agent(server, tmp_path)
        session = runner.new_session()
        first = asyncio.run(runner.run("go", session=session))
        second = asyncio.run(runner.run("more", session=session))
    assert server.rejected == []
    assert (first.text, second.text) == ("done", "again done")
    ids = [c.id for m in session.history for c in m.tool_calls]
    assert len(ids) == len(set(ids)) == 3
