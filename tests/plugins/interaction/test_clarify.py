"""The ``clarify`` tool: as a function, through the catalog, and through the runtime."""

import asyncio
import json

import pytest

import neta
import neta_interaction.plugin
import neta_planning.plugin
from neta.events import ClarifyRequest, ToolResultEvent
from neta.providers.scripted import ScriptedProvider
from neta.runtime.agent import Agent
from neta_interaction import clarify

NO_ANSWER = "The user did not answer in time. Decide for yourself from what you know and continue."


class Asker:
    """A clarify callback that records the questions and answers after ``delay`` seconds."""

    def __init__(self, answer="SQLite", delay=0.0):
        self.answer = answer
        self.delay = delay
        self.asked = []

    async def __call__(self, question, choices):
        self.asked.append((question, choices))
        await asyncio.sleep(self.delay)
        return self.answer


def run_clarify(session, **args):
    tool = clarify.build(session)
    return asyncio.run(tool.invoke(clarify.ClarifyArgs.model_validate(args)))


# -- as a function ------------------------------------------------------------------------------


def test_clarify_function_with_a_callback_returns_the_users_answer(session):
    asker = Asker("SQLite")
    session.clarify = asker
    result = run_clarify(session, question="Which database?", choices=["Postgres", "SQLite"])
    assert result.content == "User answered: SQLite"
    assert not result.end_turn
    assert not result.is_error
    assert asker.asked == [("Which database?", ["Postgres", "SQLite"])]


def test_clarify_function_strips_question_and_choices_and_passes_none_without_choices(session):
    asker = Asker("yes")
    session.clarify = asker
    run_clarify(session, question="  Proceed?  ")
    run_clarify(session, question="Proceed?", choices=[])
    assert asker.asked == [("Proceed?", None), ("Proceed?", None)]


def test_clarify_function_without_a_callback_returns_the_question_and_ends_the_turn(session):
    result = run_clarify(session, question="Which database?", choices=["Postgres", "SQLite"])
    assert result.content == "[clarify] Question: Which database?\nChoices: 1. Postgres; 2. SQLite"
    assert result.end_turn
    assert result.data == {"question": "Which database?", "choices": ["Postgres", "SQLite"]}


def test_clarify_function_without_a_callback_or_choices_has_no_choices_line(session):
    result = run_clarify(session, question="What should the file be called?")
    assert result.content == "[clarify] Question: What should the file be called?"
    assert result.end_turn


def test_clarify_function_times_out_with_the_decide_yourself_text(session):
    session.clarify = Asker(delay=2)  # forty times the timeout: a late timeout gets the answer
    session.clarify_timeout = 0.05
    result = run_clarify(session, question="Which one?")
    assert result.content == NO_ANSWER
    assert not result.is_error


def test_clarify_function_timeout_does_not_wait_for_a_callback_that_ignores_cancellation(
    session,
):
    seen = []

    async def stubborn(question, choices):
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            seen.append("cancelled")
            await asyncio.sleep(30)  # a host callback that keeps waiting once cancelled
        seen.append("returned")
        return "too late"

    session.clarify = stubborn
    session.clarify_timeout = 0.05

    async def scenario():
        tool = clarify.build(session)
        result = await tool.invoke(clarify.ClarifyArgs(question="Which one?"))
        return result, list(seen)

    result, seen_by_then = asyncio.run(scenario())
    assert result.content == NO_ANSWER
    assert seen_by_then == ["cancelled"]  # the callback still waited when the tool went on


def test_clarify_function_callback_raising_timeout_error_reads_as_no_answer_in_time(session):
    async def host_timed_out(question, choices):
        raise TimeoutError("nobody answered")

    session.clarify = host_timed_out
    result = run_clarify(session, question="Which one?")
    assert result.content == NO_ANSWER
    assert not result.is_error


def test_clarify_function_with_duplicate_choices_offers_each_once(session):
    asker = Asker("SQLite")
    session.clarify = asker
    run_clarify(session, question="Which?", choices=["SQLite", " Postgres", "sqlite ", "Postgres"])
    assert asker.asked == [("Which?", ["SQLite", "Postgres"])]


def test_clarify_function_with_an_empty_answer_tells_the_model_to_decide(session):
    session.clarify = Asker("   ")
    result = run_clarify(session, question="Which one?")
    assert result.content == clarify.EMPTY_ANSWER


def test_clarify_function_emits_no_clarify_request_itself(session):
    events = []
    session.emit = events.append
    session.clarify = Asker()
    run_clarify(session, question="Which one?")
    assert not any(isinstance(e, ClarifyRequest) for e in events)
    assert events == []


def test_clarify_tool_is_sequential_and_outlasts_its_clarify_timeout(session):
    default = clarify.build(session)
    assert default.sequential
    assert default.timeout is not None
    assert default.timeout > clarify.DEFAULT_CLARIFY_TIMEOUT
    session.clarify_timeout = 900
    configured = clarify.build(session)
    assert configured.timeout is not None
    assert configured.timeout > 900


@pytest.mark.parametrize("bad", [0, -1, "soon", True, float("nan"), float("inf")])
def test_clarify_with_a_bad_clarify_timeout_set_later_is_a_config_error(session, bad):
    session.clarify_timeout = bad
    with pytest.raises(neta.ConfigError, match="clarify_timeout"):
        clarify.build(session)


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ({"question": "   "}, "question"),
        ({"question": "Which?", "choices": ["a", "b", "c", "d", "e"]}, "choices"),
        ({"question": "Which?", "choices": ["a", " "]}, "choices.1"),
    ],
)
def test_clarify_arguments_are_validated(args, problem):
    with pytest.raises(ValueError, match=problem):
        clarify.ClarifyArgs.model_validate(args)


# -- through the catalog ------------------------------------------------------------------------


def test_interaction_plugin_registers_clarify_in_a_toolset_needing_a_user_channel(make_pm):
    pm = make_pm(interaction=neta_interaction.plugin)
    schema = pm.catalog().get("clarify")
    assert schema.toolset == "interaction"
    assert [(s.name, s.requires) for s in pm.toolset_specs()] == [("interaction", "user_channel")]
    assert "\n" not in schema.when_to_use
    assert schema.parameters(strict=True)["properties"]["choices"]["anyOf"][0]["maxItems"] == 4
    assert pm.problems == []


def test_clarify_through_the_catalog_asks_the_sessions_callback(make_pm, session):
    session.clarify = Asker("Postgres")
    pm = make_pm(interaction=neta_interaction.plugin)
    bound = neta.build_session_tools(pm, session, ["interaction"])["clarify"]
    args = bound.schema.args.model_validate_json(
        json.dumps({"question": "Which database?", "choices": ["Postgres", "SQLite"]})
    )
    assert asyncio.run(bound.tool.invoke(args)).content == "User answered: Postgres"
    assert pm.problems == []


# -- through the runtime ------------------------------------------------------------------------


def agent_for(tmp_path, turns, **options):
    pm = neta.create_plugin_manager(
        load_entrypoints=False,
        plugins=[("planning", neta_planning.plugin), ("interaction", neta_interaction.plugin)],
    )
    provider = ScriptedProvider(turns)
    return Agent(provider=provider, plugin_manager=pm, workspace=tmp_path, **options), provider


def ask(question="Which database?", choices=("Postgres", "SQLite")):
    arguments = {"question": question, "choices": list(choices) if choices else None}
    return {"tool_calls": [{"name": "clarify", "arguments": arguments}]}


def test_clarify_answered_through_the_callback_feeds_the_answer_to_the_model(tmp_path):
    agent, provider = agent_for(
        tmp_path,
        [
            ask(),
            {"text": "Using SQLite.", "expect": {"last_message_contains": "User answered: SQLite"}},
        ],
    )
    asker = Asker("SQLite")
    session = agent.new_session(clarify=asker)
    result = asyncio.run(agent.run("set up a database", session=session))
    assert result.outcome == "completed", result.reason
    assert result.text == "Using SQLite."
    assert asker.asked == [("Which database?", ["Postgres", "SQLite"])]
    assert not any(isinstance(e, ClarifyRequest) for e in result.events)
    assert provider.remaining == 0


def test_clarify_without_a_callback_ends_the_run_awaiting_input_and_the_next_message_answers(
    tmp_path,
):
    agent, provider = agent_for(
        tmp_path,
        [
            ask(),
            {"text": "Using Postgres.", "expect": {"last_message_contains": "Postgres, please"}},
        ],
        entry="service",
    )
    session = agent.new_session()
    first = asyncio.run(agent.run("set up a database", session=session))
    assert first.outcome == "awaiting_input"
    assert first.text == "[clarify] Question: Which database?\nChoices: 1. Postgres; 2. SQLite"
    assert provider.remaining == 1
    second = asyncio.run(agent.run("Postgres, please", session=session))
    assert second.outcome == "completed", second.reason
    assert [m.role for m in second.messages] == ["user", "assistant", "tool", "user", "assistant"]
    assert second.messages[2].content == first.text
    last_sent = provider.received[1].messages[-1]
    assert (last_sent.role, last_sent.content) == ("user", "Postgres, please")


def test_clarify_timeout_through_the_runtime_lets_the_model_continue(tmp_path):
    agent, _ = agent_for(
        tmp_path,
        [ask(), {"text": "Chose SQLite myself.", "expect": {"last_message_contains": NO_ANSWER}}],
    )
    # the answer comes at thirty times the timeout: a late timeout would pass it on
    session = agent.new_session(clarify=Asker(delay=3), clarify_timeout=0.1)
    result = asyncio.run(agent.run("set up a database", session=session))
    assert result.outcome == "completed", result.reason
    [event] = [e for e in result.events if isinstance(e, ToolResultEvent)]
    assert event.content == NO_ANSWER
    assert not event.is_error


def test_runtime_default_tool_timeout_does_not_cut_a_waiting_question_short(tmp_path):
    agent, _ = agent_for(
        tmp_path,
        [ask(), {"text": "ok", "expect": {"last_message_contains": "User answered: SQLite"}}],
        tool_timeout=0.05,
    )
    session = agent.new_session(clarify=Asker("SQLite", delay=0.3))
    result = asyncio.run(agent.run("go", session=session))
    assert result.outcome == "completed", result.reason


def test_crew_child_prompt_never_mentions_clarify_while_a_cli_prompt_does(tmp_path):
    agent, _ = agent_for(tmp_path, [])
    cli = agent.new_session(clarify=Asker())
    child = agent.new_session(entry="crew")
    assert "clarify" in cli.tools
    assert "clarify" in agent.system_prompt(cli)
    assert "todo" in child.tools
    assert "clarify" not in child.tools
    assert "clarify" not in agent.system_prompt(child).lower()
    assert "user_channel" in child.toolsets.decision("interaction").reason


def test_crew_agent_offers_no_clarify_to_the_model(tmp_path):
    expect = {"tools_exclude": ["clarify"], "system_excludes": ["clarify", "Clarify"]}
    agent, provider = agent_for(tmp_path, [{"text": "done", "expect": expect}], entry="crew")
    result = asyncio.run(agent.run("sub-task"))
    assert result.outcome == "completed", result.reason
    assert provider.received[0].tool_names == ["todo"]


def test_rest_session_offers_clarify_even_without_a_live_callback(tmp_path):
    expect = {"tools_include": ["clarify", "todo"], "system_includes": ["## clarify"]}
    agent, _ = agent_for(tmp_path, [{"text": "done", "expect": expect}], entry="service")
    assert asyncio.run(agent.run("hello")).outcome == "completed"
