"""Fallback models: a model that fails for good hands the same request to the next one."""

import asyncio
import json

import pytest

import neta
from neta.events import ModelFallback, ProviderRetry, TextDelta
from neta.hosting.protocol import event_frame
from neta.providers.fallback import fallback_reason
from neta.providers.retry import RetryPolicy
from tests.core.runtime import kit
from tests.fake_openai import FakeOpenAI, Reply

NO_WAIT = RetryPolicy(max_tries=2, base_delay=0, jitter=0)


class Models:
    """A plugin registering providers that hand out the given (scripted) providers."""

    def __init__(self, **providers):
        self.providers = providers
        self.options = []  # (provider name, the options its factory was given)

    @neta.hookimpl
    def neta_providers(self):
        return [
            neta.ProviderSpec(name=name, factory=self._factory(name)) for name in self.providers
        ]

    def _factory(self, name):
        def make(**options):
            self.options.append((name, options))
            return self.providers[name]

        return make


def fails(status, message="refused", retryable=False):
    return {"error": {"message": message, "status": status, "retryable": retryable}}


def agent(tmp_path, models, model, **options):
    pm = neta.create_plugin_manager(
        load_entrypoints=False, plugins=[("models", models), ("kit", kit)]
    )
    options.setdefault("retry", NO_WAIT)
    return neta.Agent(model=model, plugin_manager=pm, workspace=tmp_path, **options)


def fallbacks(result):
    return [e for e in result.events if isinstance(e, ModelFallback)]


def test_a_bad_key_falls_back_to_the_next_model_with_the_same_history_and_says_so(tmp_path):
    primary = neta.ScriptedProvider([fails(401, "invalid x-api-key")])
    backup = neta.ScriptedProvider([{"text": "Hello from the backup."}])
    models = Models(primary=primary, backup=backup)
    result = asyncio.run(agent(tmp_path, models, ["primary:big", "backup:small"]).run("hi"))
    assert result.outcome == "completed", result.reason
    assert result.text == "Hello from the backup."
    assert backup.received[0].messages == primary.received[0].messages
    assert (primary.received[0].model, backup.received[0].model) == ("big", "small")
    [event] = fallbacks(result)
    assert (event.failed, event.model) == ("primary:big", "backup:small")
    assert event.reason == "authentication failed (401)"
    assert "invalid x-api-key" in event.message


def test_retries_are_spent_before_a_model_is_given_up(tmp_path):
    overloaded = fails(529, "overloaded", retryable=True)
    primary = neta.ScriptedProvider([overloaded, overloaded])
    backup = neta.ScriptedProvider([{"text": "ok"}])
    result = asyncio.run(
        agent(tmp_path, Models(primary=primary, backup=backup), ["primary:a", "backup:b"]).run("hi")
    )
    assert result.text == "ok"
    kinds = [type(e) for e in result.events if isinstance(e, ProviderRetry | ModelFallback)]
    assert kinds == [ProviderRetry, ModelFallback]
    assert fallbacks(result)[0].reason == "overloaded"
    assert "gave up after 2 tries" in fallbacks(result)[0].message


def test_the_model_that_answered_answers_the_rest_of_the_run_and_the_next_run_starts_over(
    tmp_path,
):
    primary = neta.ScriptedProvider([fails(503, "down"), {"text": "primary is back"}])
    backup = neta.ScriptedProvider(
        [
            {"text": "Echoing.", "tool_calls": [{"name": "echo", "arguments": {"text": "x"}}]},
            {"text": "done"},
        ]
    )
    runner = agent(
        tmp_path,
        Models(primary=primary, backup=backup),
        ["primary:a", "backup:b"],
        retry=RetryPolicy(max_tries=1),
    )
    session = runner.new_session()
    first = asyncio.run(runner.run("echo x", session=session))
    assert first.text == "done"
    assert len(primary.received) == 1  # the second turn went to the backup at once
    assert fallbacks(first)[0].reason == "server error 503"
    texts = "".join(e.text for e in first.events if isinstance(e, TextDelta))
    assert texts == "Echoing.done"
    second = asyncio.run(runner.run("again", session=session))
    assert second.text == "primary is back"
    assert fallbacks(second) == []
    assert primary.received[1].messages[-1].content == "again"


def test_when_every_model_fails_the_run_ends_with_each_failure_named(tmp_path):
    primary = neta.ScriptedProvider([fails(404, "no such model")])
    backup = neta.ScriptedProvider([fails(400, "prompt is too long: 300000 tokens > 200000")])
    result = asyncio.run(
        agent(tmp_path, Models(primary=primary, backup=backup), ["primary:a", "backup:b"]).run("hi")
    )
    assert result.outcome == "error"
    assert result.reason == (
        "every model failed: primary:a: no such model; "
        "backup:b: prompt is too long: 300000 tokens > 200000"
    )
    assert [e.reason for e in fallbacks(result)] == ["model not found (404)"]


def test_a_fallback_without_a_prefix_asks_the_first_models_provider_with_its_options(tmp_path):
    primary = neta.ScriptedProvider([fails(401), {"text": "second model"}])
    other = neta.ScriptedProvider([])
    models = Models(primary=primary, other=other)
    runner = agent(
        tmp_path,
        models,
        ["a", "b", "other:c"],
        provider="primary",
        provider_options={"api_key": "for primary"},
        model_timeout=9.0,
    )
    assert models.options == [
        ("primary", {"model": "a", "api_key": "for primary", "timeout": 9.0}),
        ("primary", {"model": "b", "api_key": "for primary", "timeout": 9.0}),
        ("other", {"model": "c", "timeout": 9.0}),
    ]
    assert [m.label for m in runner.fallbacks] == ["primary:b", "other:c"]
    result = asyncio.run(runner.run("hi"))
    assert result.text == "second model"
    assert [r.model for r in primary.received] == ["a", "b"]


def test_a_fallback_naming_no_provider_is_a_config_error(tmp_path):
    with pytest.raises(neta.ConfigError, match="'m2' names no provider"):
        agent(tmp_path, Models(), ["m1", "m2"])


def test_a_fallback_whose_prefix_is_no_providers_name_is_a_model_of_the_first_provider(tmp_path):
    models = Models(primary=neta.ScriptedProvider([]))
    runner = agent(tmp_path, models, ["primary:a", "qwen2.5-coder:7b"])  # an Ollama tag
    assert [m.label for m in runner.fallbacks] == ["primary:qwen2.5-coder:7b"]


def test_a_session_with_its_own_provider_asks_only_it(tmp_path):
    primary = neta.ScriptedProvider([])
    backup = neta.ScriptedProvider([])
    runner = agent(tmp_path, Models(primary=primary, backup=backup), ["primary:a", "backup:b"])
    own = neta.ScriptedProvider([fails(401)])
    result = asyncio.run(runner.run("hi", session=runner.new_session(provider=own)))
    assert result.outcome == "error"
    assert backup.received == []


@pytest.mark.parametrize(
    ("status", "message", "retryable", "reason"),
    [
        (401, "bad key", False, "authentication failed (401)"),
        (403, "forbidden", False, "authentication failed (403)"),
        (404, "unknown model", False, "model not found (404)"),
        (400, "This model's maximum context length is 8192 tokens", False, "context too long"),
        (413, "request too large", False, "request refused (413)"),
        (422, "bad request", False, "request refused (422)"),
        (429, "slow down", True, "rate limited"),
        (529, "overloaded", True, "overloaded"),
        (502, "bad gateway", True, "server error 502"),
        (None, "cannot reach the model API", True, "no answer (connection failed or cut off)"),
    ],
)
def test_the_reason_for_a_fallback_is_a_few_words(status, message, retryable, reason):
    error = neta.ProviderError(message, status=status, retryable=retryable)
    assert fallback_reason(error) == reason


def test_a_fallback_event_reaches_clients_as_a_model_fallback_frame():
    event = ModelFallback(session_id="s1", failed="a:x", model="b:y", reason="overloaded")
    frame = event_frame("s1", event)
    assert frame["type"] == "model_fallback"
    assert frame["data"] == {
        "agent_id": None,
        "failed": "a:x",
        "model": "b:y",
        "reason": "overloaded",
        "message": "",
    }


def test_through_the_openai_sdk_a_context_too_long_answer_falls_back_to_the_next_model(
    tmp_path,
):
    too_long = Reply(
        status=400,
        text="This model's maximum context length is 128000 tokens.",
        code="context_length_exceeded",
    )
    with FakeOpenAI([too_long, Reply(text="Short answer.")]) as server:
        pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[])
        runner = neta.Agent(
            provider="openai",
            model=["fake-model", "fake-model-mini"],
            plugin_manager=pm,
            workspace=tmp_path,
            provider_options={"base_url": server.base_url, "api_key": "k"},
        )
        result = asyncio.run(runner.run("summarise"))
    assert result.text == "Short answer."
    first, second = server.requests
    assert (first["model"], second["model"]) == ("fake-model", "fake-model-mini")
    assert first["messages"] == second["messages"]
    [event] = fallbacks(result)
    assert (event.failed, event.model, event.reason) == (
        "openai:fake-model",
        "openai:fake-model-mini",
        "context too long",
    )
    assert json.loads(event.model_dump_json())["type"] == "model_fallback"
