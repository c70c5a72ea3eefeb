"""What a Messages API reply says, read through the real SDK from the fake API.

Each run goes through ``Agent`` and the anthropic provider; each test then shows the session
stays usable: a second run on it completes and no request was refused.
"""

import asyncio

import pytest

import neta
from neta.events import ProviderRetry, TextDelta
from neta_anthropic import plugin
from tests.core.runtime import kit
from tests.fake_anthropic import FakeAnthropic, Reply
from tests.fake_openai import FakeOpenAI
from tests.fake_openai import Reply as OpenAIReply

KEY = "sk-ant-test"


def agent(server, tmp_path, *, tries=1):
    pm = neta.create_plugin_manager(
        load_entrypoints=False, plugins=[("anthropic", plugin), ("kit", kit)]
    )
    return neta.Agent(
        permissions="auto",
        model="anthropic:claude-test",
        plugin_manager=pm,
        workspace=tmp_path,
        provider_options={"base_url": server.base_url, "api_key": KEY},
        retry=neta.RetryPolicy(max_tries=tries, base_delay=0.01),
    )


def two_runs(server, tmp_path, **options):
    """Two runs on one session: the first, then ``again``."""
    runner = agent(server, tmp_path, **options)
    session = runner.new_session()
    first = asyncio.run(runner.run("go", session=session))
    second = asyncio.run(runner.run("again", session=session))
    return first, second


def retries(result):
    return [e for e in result.events if isinstance(e, ProviderRetry)]


def test_a_stream_without_message_stop_whose_reply_is_whole_is_the_answer(tmp_path):
    replies = [
        Reply(text="The whole answer.", leave_out=("message_stop",)),
        Reply(text="Second run."),
    ]
    with FakeAnthropic(replies) as server:
        first, second = two_runs(server, tmp_path, tries=2)
    assert (first.outcome, first.text) == ("completed", "The whole answer.")
    assert retries(first) == []
    assert server.rejected == []
    assert (second.outcome, second.text) == ("completed", "Second run.")
    assert len(server.requests) == 2


def test_tool_uses_of_a_stream_without_message_stop_are_run(tmp_path):
    replies = [
        Reply(tool_calls=[("echo", '{"text": "hi"}')], leave_out=("message_stop",)),
        Reply(text="Echoed."),
        Reply(text="Second run."),
    ]
    with FakeAnthropic(replies) as server:
        first, second = two_runs(server, tmp_path)
    assert (first.outcome, first.text) == ("completed", "Echoed.")
    assert server.requests[1]["messages"][-1]["content"][0]["content"] == "echo: hi"
    assert server.rejected == []
    assert second.text == "Second run."


@pytest.mark.parametrize(
    "cut",
    [
        Reply(text="one two three four", leave_out=("content_block_stop", "message_stop")),
        Reply(text="one two three four", leave_out=("message_delta", "message_stop")),
        Reply(text="one two three four", cut_after=5),
    ],
    ids=["block-never-stopped", "no-stop-reason", "cut-mid-block"],
)
def test_a_stream_that_ends_before_the_reply_did_is_asked_again(tmp_path, cut):
    with FakeAnthropic([cut, Reply(text="Whole now."), Reply(text="ok")]) as server:
        first, second = two_runs(server, tmp_path, tries=2)
    assert first.text == "Whole now."
    [retry] = retries(first)
    assert "cut off on the way" in retry.message
    assert second.text == "ok"


@pytest.mark.parametrize(
    ("kind", "status"),
    [("overloaded_error", 529), ("api_error", 500), ("rate_limit_error", 429)],
)
def test_a_retryable_error_event_mid_stream_is_tried_again(tmp_path, kind, status):
    replies = [Reply(text="half", error_event=kind), Reply(text="Whole."), Reply(text="ok")]
    with FakeAnthropic(replies) as server:
        first, second = two_runs(server, tmp_path, tries=2)
    assert first.text == "Whole."
    [retry] = retries(first)
    assert f"model API answered {status}: overloaded mid-stream" in retry.message
    assert second.text == "ok"


@pytest.mark.parametrize(
    ("kind", "said"),
    [
        ("invalid_request_error", "model API answered 400: overloaded mid-stream"),
        ("mystery_error", "model API sent an error in its reply (mystery_error): overloaded"),
    ],
)
def test_an_error_event_no_retry_can_fix_ends_the_run_at_once(tmp_path, kind, said):
    with FakeAnthropic([Reply(text="half", error_event=kind), Reply(text="ok")]) as server:
        first, second = two_runs(server, tmp_path, tries=3)
    assert first.outcome == "error"
    assert first.reason.startswith(f"anthropic model 'claude-test' at {server.base_url}: {said}")
    assert retries(first) == []
    assert server.rejected == []
    assert second.text == "ok"


def test_comments_and_events_without_data_are_skipped(tmp_path):
    keep_alives = {1: b": keep-alive\n\n", 3: b"retry: 3000\n\nid: 7\n\n"}
    replies = [Reply(text="All here.", interleave=keep_alives), Reply(text="ok")]
    with FakeAnthropic(replies) as server:
        first, second = two_runs(server, tmp_path)
    assert (first.outcome, first.text) == ("completed", "All here.")
    assert second.text == "ok"


def test_an_event_whose_data_is_not_json_ends_the_run_with_a_clear_error(tmp_path):
    garbage = {3: b"event: content_block_delta\ndata: {not json\n\n"}
    replies = [Reply(text="one two three", interleave=garbage), Reply(text="ok")]
    with FakeAnthropic(replies) as server:
        first, second = two_runs(server, tmp_path)
    assert first.outcome == "error"
    assert "model API sent a malformed reply" in first.reason
    assert second.text == "ok"


def test_negative_token_counts_are_read_as_none(tmp_path):
    replies = [Reply(text="odd usage", usage=(-100, -5, -7, -3)), Reply(text="ok")]
    with FakeAnthropic(replies) as server:
        first, second = two_runs(server, tmp_path)
    usage = first.usage
    assert (usage.input_tokens, usage.output_tokens) == (0, 0)
    assert (usage.cache_read_tokens, usage.cache_creation_tokens) == (0, 0)
    assert second.usage.input_tokens == 10


def test_a_refusal_ends_a_run_as_an_openai_refusal_does(tmp_path):
    refusal = "I can't help with that request."
    with FakeAnthropic([Reply(text=refusal, stop_reason="refusal"), Reply(text="ok")]) as server:
        anthropic_run, second = two_runs(server, tmp_path)
    assert second.text == "ok"
    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("kit", kit)])
    with FakeOpenAI([OpenAIReply(refusal=refusal)]) as openai_server:
        openai_run = asyncio.run(
            neta.Agent(
                permissions="auto",
                provider="openai",
                model="gpt-test",
                plugin_manager=pm,
                workspace=tmp_path,
                provider_options={"base_url": openai_server.base_url, "api_key": "sk-test"},
            ).run("go")
        )
    for run in (anthropic_run, openai_run):
        assert (run.outcome, run.text) == ("completed", refusal)
        assert run.reason == "the provider's content filter cut the reply off"
        assert "".join(e.text for e in run.events if isinstance(e, TextDelta)) == refusal
