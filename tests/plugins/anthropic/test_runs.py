"""Whole runs through ``Agent`` with the anthropic provider, the real SDK and a fake API."""

import asyncio
import json
import time

import neta
import neta_base.plugin
from neta.events import ProviderRetry, ToolResultEvent
from neta_anthropic import plugin
from tests.core.runtime import kit
from tests.fake_anthropic import FakeAnthropic, Reply
from tests.fake_openai import FakeOpenAI
from tests.fake_openai import Reply as OpenAIReply


def anthropic_provider(*args, **options):
    from neta_anthropic.provider import AnthropicProvider

    return AnthropicProvider(*args, **options)


KEY = "sk-ant-test"


def agent(server, tmp_path, *plugins, **options):
    pm = neta.create_plugin_manager(
        load_entrypoints=False, plugins=[("anthropic", plugin), *plugins]
    )
    return neta.Agent(
        permissions="auto",
        model="anthropic:claude-test",
        plugin_manager=pm,
        workspace=tmp_path,
        provider_options={"base_url": server.base_url, "api_key": KEY},
        **options,
    )


def kit_agent(server, tmp_path, **options):
    return agent(server, tmp_path, ("kit", kit), **options)


def tool_results(body):
    return [
        block
        for turn in body["messages"]
        if turn["role"] == "user"
        for block in turn["content"]
        if block["type"] == "tool_result"
    ]


def test_run_reads_and_patches_a_file(tmp_path):
    (tmp_path / "config.py").write_text("PORT = 8080\nDEBUG = True\n")
    patch_args = {"path": "config.py", "old_string": "DEBUG = True", "new_string": "DEBUG = False"}
    replies = [
        Reply(tool_calls=[("read_file", json.dumps({"path": "config.py"}))]),
        Reply(text="Turning debug off.", tool_calls=[("patch", json.dumps(patch_args))]),
        Reply(text="Debug is off."),
    ]
    with FakeAnthropic(replies) as server:
        result = asyncio.run(
            agent(server, tmp_path, ("base", neta_base.plugin)).run("turn debug off")
        )
    assert result.outcome == "completed", result.reason
    assert result.text == "Debug is off."
    assert (tmp_path / "config.py").read_text() == "PORT = 8080\nDEBUG = False\n"
    first, second, third = server.requests
    assert first["model"] == "claude-test"  # the provider: prefix is not sent
    assert {t["name"] for t in first["tools"]} == {
        "bash",
        "read_file",
        "write_file",
        "list_dir",
        "patch",
    }
    assert "patch" in first["system"][0]["text"]
    [read] = tool_results(second)
    assert read["tool_use_id"] == "toolu_0"
    assert "DEBUG = True" in read["content"]
    assert read["is_error"] is False
    assert second["messages"][1]["content"][0] == {
        "type": "tool_use",
        "id": "toolu_0",
        "name": "read_file",
        "input": {"path": "config.py"},
    }
    patched = tool_results(third)[-1]["content"]
    assert "-DEBUG = True" in patched
    assert "+DEBUG = False" in patched


def test_parallel_tool_calls_run_together_and_answer_in_one_turn(tmp_path):
    kit.LOG.clear()
    calls = [
        ("sleepy", json.dumps({"seconds": 0.2, "label": "a"})),
        ("sleepy", json.dumps({"seconds": 0.2, "label": "b"})),
    ]
    with FakeAnthropic([Reply(tool_calls=calls), Reply(text="both done")]) as server:
        result = asyncio.run(kit_agent(server, tmp_path).run("sleep twice"))
    assert result.text == "both done"
    assert kit.LOG[:2] == ["start a", "start b"]  # the second began before the first ended
    last_user_turn = server.requests[1]["messages"][-1]
    assert last_user_turn["role"] == "user"
    assert [b["tool_use_id"] for b in last_user_turn["content"]] == ["toolu_0", "toolu_1"]
    assert [b["content"] for b in last_user_turn["content"]] == ["slept 0.2", "slept 0.2"]


def test_a_failing_tool_is_sent_back_as_an_error_result(tmp_path):
    replies = [Reply(tool_calls=[("refuse", "{}"), ("boom", "{}")]), Reply(text="I see.")]
    with FakeAnthropic(replies) as server:
        result = asyncio.run(kit_agent(server, tmp_path).run("try"))
    assert result.outcome == "completed"
    refused, boomed = tool_results(server.requests[1])
    assert refused["is_error"] is True
    assert refused["content"] == "Error: this is what the model reads"
    assert boomed["is_error"] is True
    assert "RuntimeError: kaboom" in boomed["content"]


def test_arguments_that_are_not_json_become_an_error_result_the_model_reads(tmp_path):
    replies = [
        Reply(tool_calls=[("echo", '{"text": ')]),
        Reply(tool_calls=[("echo", '{"text": "second try"}')]),
        Reply(text="Recovered."),
    ]
    with FakeAnthropic(replies) as server:
        result = asyncio.run(kit_agent(server, tmp_path).run("echo"))
    assert result.text == "Recovered."
    bad, good = [e for e in result.events if isinstance(e, ToolResultEvent)]
    assert "not valid JSON" in bad.content
    assert good.content == "echo: second try"
    [sent] = tool_results(server.requests[1])
    assert sent["is_error"] is True
    assert "not valid JSON" in sent["content"]
    # arguments that are not a JSON object are stored as an empty one (the error says why)
    assert server.requests[1]["messages"][1]["content"][0]["input"] == {}


def test_reply_cut_off_at_max_tokens_completes_with_the_cut_off_note(tmp_path):
    with FakeAnthropic([Reply(text="The answer is", stop_reason="max_tokens")]) as server:
        result = asyncio.run(kit_agent(server, tmp_path).run("q"))
    assert result.outcome == "completed"
    assert result.text == "The answer is"
    assert result.reason == "the reply was cut off at the model's output token limit"


def test_cache_tokens_add_up_over_a_run(tmp_path):
    replies = [
        Reply(tool_calls=[("echo", '{"text": "x"}')], usage=(50, 10, 0, 2000)),
        Reply(text="done", usage=(60, 5, 2000, 0)),
    ]
    with FakeAnthropic(replies) as server:
        result = asyncio.run(kit_agent(server, tmp_path).run("go"))
    usage = result.usage
    assert usage.cache_creation_tokens == 2000
    assert usage.cache_read_tokens == 2000
    assert usage.input_tokens == 50 + 2000 + 60 + 2000
    assert usage.output_tokens == 15
    # the breakpoints are the same on both turns, so the second reads what the first wrote
    first, second = server.requests
    assert first["system"] == second["system"]
    assert first["tools"] == second["tools"]


def test_rate_limit_with_retry_after_is_waited_out_and_retried(tmp_path):
    limited = Reply(
        status=429,
        error_type="rate_limit_error",
        text="slow down",
        headers={"retry-after": "1"},
    )
    with FakeAnthropic([limited, Reply(text="fine now")]) as server:
        started = time.perf_counter()
        result = asyncio.run(kit_agent(server, tmp_path).run("go"))
        elapsed = time.perf_counter() - started
    assert result.outcome == "completed"
    assert result.text == "fine now"
    assert len(server.requests) == 2
    [retry] = [e for e in result.events if isinstance(e, ProviderRetry)]
    assert (retry.attempt, retry.delay, retry.reason) == (1, 1.0, "rate limited")
    assert retry.max_tries == 4
    assert retry.session_id == result.session_id
    assert "429: slow down" in retry.message
    assert elapsed >= 1.0


def test_bad_key_fails_at_once_with_one_line(tmp_path):
    with FakeAnthropic([Reply(text="never")], api_key="the-right-key") as server:
        result = asyncio.run(kit_agent(server, tmp_path).run("go"))
    assert result.outcome == "error"
    assert result.reason == (
        f"anthropic model 'claude-test' at {server.base_url}: model API answered 401: "
        "invalid API key"
    )
    assert "\n" not in result.reason
    assert len(server.requests) == 1
    assert not [e for e in result.events if isinstance(e, ProviderRetry)]


def test_a_session_can_switch_provider_between_turns(tmp_path):
    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("kit", kit)])
    openai_turns = [OpenAIReply(tool_calls=[("echo", '{"text": "one"}')]), OpenAIReply(text="A")]
    anthropic_turns = [Reply(tool_calls=[("echo", '{"text": "two"}')]), Reply(text="B")]
    with FakeOpenAI(openai_turns) as openai_server, FakeAnthropic(anthropic_turns) as server:
        agent = neta.Agent(
            permissions="auto",
            provider="openai",
            model="gpt-test",
            plugin_manager=pm,
            workspace=tmp_path,
            provider_options={"base_url": openai_server.base_url, "api_key": "sk-test"},
        )
        session = agent.new_session()

        async def two_turns():
            first = await agent.run("first", session=session)
            session.provider = anthropic_provider(
                "claude-test", base_url=server.base_url, api_key=KEY
            )
            second = await agent.run("second", session=session)
            return first, second

        first, second = asyncio.run(two_turns())
    assert (first.text, second.text) == ("A", "B")
    turns = server.requests[0]["messages"]
    assert [t["role"] for t in turns] == ["user", "assistant", "user", "assistant", "user"]
    assert turns[1]["content"] == [
        {"type": "tool_use", "id": "call_0", "name": "echo", "input": {"text": "one"}}
    ]
    assert turns[2]["content"][0]["tool_use_id"] == "call_0"
    assert turns[2]["content"][0]["content"] == "echo: one"
    assert turns[3]["content"] == [{"type": "text", "text": "A"}]
    assert turns[4]["content"] == [{"type": "text", "text": "second"}]
