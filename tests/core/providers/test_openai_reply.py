"""What an OpenAI-compatible reply says, read through the real SDK from a fake server.

Each run goes through ``Agent`` and the ``openai`` provider against the fake server on a
loopback port, which refuses an invalid history as the real API does; each test then shows the
session stays usable: a second run on it completes and no request was refused.
"""

import asyncio

import pytest

import neta
from neta.events import ProviderRetry, TextDelta
from neta.providers.openai_reply import StreamedReply, whole_reply
from neta.providers.sse import ServerSentEvent
from neta.runtime.agent import Agent
from tests.core.runtime import kit
from tests.fake_openai import FakeOpenAI, Reply

CONTENT_FILTER_NOTE = "the provider's content filter cut the reply off"


def agent_for(server, tmp_path, *, tries=1, stream=True):
    """An agent on the fake server; failed requests are tried ``tries`` times in all."""
    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("kit", kit)])
    return Agent(
        permissions="auto",
        provider="openai",
        model="fake-model",
        plugin_manager=pm,
        workspace=tmp_path,
        provider_options={"base_url": server.base_url, "api_key": "sk-test", "stream": stream},
        retry=neta.RetryPolicy(max_tries=tries, base_delay=0.01),
    )


def two_runs(server, tmp_path, **options):
    """Two runs on one session: the first, then ``again``."""
    agent = agent_for(server, tmp_path, **options)
    session = agent.new_session()
    first = asyncio.run(agent.run("go", session=session))
    second = asyncio.run(agent.run("again", session=session))
    return first, second


def streamed(result):
    return "".join(e.text for e in result.events if isinstance(e, TextDelta))


def retries(result):
    return [e for e in result.events if isinstance(e, ProviderRetry)]


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
def test_a_refusal_is_the_replys_text_and_the_run_says_the_reply_was_filtered(tmp_path, stream):
    replies = [Reply(refusal="I can't help with that request."), Reply(text="Here you go.")]
    with FakeOpenAI(replies) as server:
        refused, second = two_runs(server, tmp_path, stream=stream)
    assert (refused.outcome, refused.text) == ("completed", "I can't help with that request.")
    assert refused.reason == CONTENT_FILTER_NOTE  # as an Anthropic refusal ends
    assert streamed(refused) == "I can't help with that request."
    assert server.rejected == []
    assert (second.outcome, second.text) == ("completed", "Here you go.")
    assert {"role": "assistant", "content": "I can't help with that request."} in (
        server.requests[1]["messages"]
    )


@pytest.mark.parametrize(
    "error",
    [
        {"code": 502, "message": "Upstream provider failed"},
        {"code": "503", "message": "busy"},
        {"message": "The server had an error", "type": "server_error", "code": None},
        {"message": "slow down", "type": "rate_limit_error"},
        {"message": "Overloaded", "type": "overloaded_error"},
    ],
    ids=["code-502", "code-as-text", "server-error", "rate-limit", "overloaded"],
)
def test_a_retryable_error_in_the_middle_of_a_stream_is_tried_again(tmp_path, error):
    replies = [
        Reply(text="a first try that breaks", fail_after=(3, "error"), error=error),
        Reply(text="The whole answer."),
        Reply(text="Second run."),
    ]
    with FakeOpenAI(replies) as server:
        first, second = two_runs(server, tmp_path, tries=2)
    assert (first.outcome, first.text) == ("completed", "The whole answer.")
    [retry] = retries(first)
    assert retry.attempt == 1
    assert error["message"] in retry.message
    assert server.rejected == []
    assert (second.outcome, second.text) == ("completed", "Second run.")


def test_a_retry_after_an_error_mid_stream_says_what_failed(tmp_path):
    overloaded = {"code": 529, "message": "Overloaded"}
    replies = [
        Reply(text="half", fail_after=(2, "error"), error={"code": 502, "message": "bad gateway"}),
        Reply(text="half", fail_after=(2, "error"), error=overloaded),
        Reply(text="done"),
    ]
    with FakeOpenAI(replies) as server:
        result = asyncio.run(agent_for(server, tmp_path, tries=3).run("go"))
    assert [r.reason for r in retries(result)] == ["server error 502", "overloaded"]
    assert result.text == "done"


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
def test_an_error_no_retry_can_fix_ends_the_run_at_once_with_what_the_server_said(tmp_path, stream):
    error = {"code": 400, "message": "context length exceeded", "type": "invalid_request_error"}
    failing = (
        Reply(text="never whole", fail_after=(2, "error"), error=error)
        if stream
        else Reply(error=error)
    )
    with FakeOpenAI([failing, Reply(text="After that.")]) as server:
        first, second = two_runs(server, tmp_path, tries=3, stream=stream)
    assert first.outcome == "error"
    assert first.reason == (
        f"openai model 'fake-model' at {server.base_url}: model API answered 400: "
        "context length exceeded"
    )
    assert retries(first) == []
    assert server.rejected == []
    assert (second.outcome, second.text) == ("completed", "After that.")


def test_a_whole_reply_answered_200_with_a_server_error_is_tried_again(tmp_path):
    error = {"message": "The server had an error", "type": "server_error"}
    replies = [Reply(error=error), Reply(text="Fine now."), Reply(text="Second run.")]
    with FakeOpenAI(replies) as server:
        first, second = two_runs(server, tmp_path, tries=2, stream=False)
    assert (first.outcome, first.text) == ("completed", "Fine now.")
    assert [r.reason for r in retries(first)] == ["server error 500"]
    assert (second.outcome, second.text) == ("completed", "Second run.")


def test_an_error_event_that_names_no_status_is_not_retried(tmp_path):
    error = {"message": "something odd", "type": "mystery"}
    replies = [Reply(text="half an answer", fail_after=(2, "error"), error=error)]
    with FakeOpenAI([*replies, Reply(text="ok")]) as server:
        first, second = two_runs(server, tmp_path, tries=3)
    assert first.outcome == "error"
    assert first.reason.endswith("model API sent an error in its reply (mystery): something odd")
    assert retries(first) == []
    assert second.text == "ok"


def test_an_event_named_error_is_an_error_whatever_its_data(tmp_path):
    event = b'event: error\ndata: {"message": "quota gone", "code": 429}\n\n'
    replies = [Reply(text="one two", interleave={2: event}), Reply(text="retried")]
    with FakeOpenAI([*replies, Reply(text="ok")]) as server:
        first, second = two_runs(server, tmp_path, tries=2)
    assert first.text == "retried"
    assert "429: quota gone" in retries(first)[0].message
    assert second.text == "ok"


KEEP_ALIVES = {
    0: b"retry: 3000\n\n",
    1: b": keep-alive\n\n",
    2: b"id: 7\n\n",
    3: b": OPENROUTER PROCESSING\n\nid: 8\nretry: 10\n\nevent: ping\n\ndata:\n\n",
}


@pytest.mark.parametrize("line_end", ["\n", "\r\n", "\r"], ids=["LF", "CRLF", "CR"])
def test_events_without_data_comments_and_any_line_end_are_read_as_the_format_says(
    tmp_path, line_end
):
    replies = [
        Reply(text="The answer is here.", interleave=KEEP_ALIVES, line_end=line_end),
        Reply(text="Second run.", interleave={0: b"\xef\xbb\xbf"}),  # a byte order mark first
    ]
    with FakeOpenAI(replies) as server:
        first, second = two_runs(server, tmp_path)
    assert (first.outcome, first.text) == ("completed", "The answer is here.")
    assert streamed(first) == "The answer is here."
    assert server.rejected == []
    assert (second.outcome, second.text) == ("completed", "Second run.")


def test_what_follows_done_is_not_part_of_the_reply():
    reply = StreamedReply(lambda _: None)
    for data in [
        '{"choices": [{"delta": {"content": "All of it."}, "finish_reason": "stop"}]}',
        "[DONE]",
        '{"choices": [{"delta": {"content": " And more."}}]}',
        "not even JSON",
    ]:
        reply.add(ServerSentEvent(data))
    assert reply.done
    assert reply.finish().text == "All of it."


def test_a_whole_reply_with_arguments_sent_as_an_object_has_them_as_json_text():
    data = {
        "choices": [
            {
                "message": {
                    "content": None,
                    "tool_calls": [{"id": "c1", "function": {"name": "echo", "arguments": {}}}],
                },
                "finish_reason": "tool_calls",
            }
        ]
    }
    [call] = whole_reply(data, lambda _: None).tool_calls
    assert (call.id, call.name, call.arguments) == ("c1", "echo", "{}")


def test_data_that_is_not_json_ends_the_run_with_a_clear_error(tmp_path):
    replies = [Reply(text="one two three", interleave={2: b"data: keep going\n\n"})]
    with FakeOpenAI([*replies, Reply(text="ok")]) as server:
        first, second = two_runs(server, tmp_path, tries=3)
    assert first.outcome == "error"
    assert first.reason == (
        f"openai model 'fake-model' at {server.base_url}: model API sent a malformed reply: "
        "an event's data is not JSON: 'keep going'"
    )
    assert server.rejected == []
    assert (second.outcome, second.text) == ("completed", "ok")


def test_a_stream_of_nothing_but_garbage_ends_as_an_error_not_an_empty_answer(tmp_path):
    garbage = Reply(raw_chunks=[], interleave={0: b"<html>Bad gateway</html>\n\nnot sse\n\n"})
    with FakeOpenAI([garbage, garbage, Reply(text="ok")]) as server:
        first, second = two_runs(server, tmp_path, tries=2)
    assert first.outcome == "error"
    assert "cut off: the stream ended before any chunk of the reply" in first.reason
    assert "gave up after 2 tries" in first.reason
    assert (second.outcome, second.text) == ("completed", "ok")


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
def test_negative_token_counts_are_read_as_none(tmp_path, stream):
    replies = [Reply(text="odd usage", usage=(-100, -5)), Reply(text="ok", usage=(10, 2))]
    with FakeOpenAI(replies) as server:
        first, second = two_runs(server, tmp_path, stream=stream)
    assert (first.usage.input_tokens, first.usage.output_tokens) == (0, 0)
    assert first.usage.total_tokens == 0
    assert (second.usage.input_tokens, second.usage.output_tokens) == (10, 2)
    assert server.rejected == []
