"""An in-test MCPServer over streamable HTTP: elicitation, progress, images, data, errors."""

import asyncio
from pathlib import Path

import pytest

from neta.events import ToolProgress
from neta.providers.scripted import ScriptedProvider
from neta.runtime.agent import Agent
from tests.plugins.mcp.conftest import mcp_pm


class Person:
    """A user at the other end of the clarify channel, answering from a script."""

    def __init__(self, answers):
        self.answers = dict(answers)
        self.asked = []

    async def __call__(self, question, choices):
        self.asked.append((question, list(choices) if choices else None))
        return self.answers[question.splitlines()[-1]]


def open_session(workspace, asking, **session_options):
    agent = Agent(
        provider=None,
        plugin_manager=mcp_pm(),
        workspace=workspace,
        mcp_servers={"asker": {"url": asking.url}},
    )
    return agent, agent.new_session(**session_options)


def invoke(session, name, arguments=None):
    bound = session.tools[name]
    return asyncio.run(bound.tool.invoke(bound.schema.validate_arguments(arguments or {})))


def test_elicitation_is_asked_through_clarify_with_the_enum_as_choices(workspace, asking):
    person = Person({"MCP server 'asker' asks: Which colour for the shed?": "green"})
    agent, session = open_session(workspace, asking, clarify=person)
    try:
        result = invoke(session, "pick_colour")
    finally:
        agent.end_session(session)
    assert result.content == "painting the shed green"
    question = "MCP server 'asker' asks: Which colour for the shed?"
    assert person.asked == [(question, ["red", "green", "blue"])]


def test_links_to_http_servers_after_the_first_load_no_certificates(
    workspace, asking, certificate_loads
):
    # a session's link makes an HTTP client; the CA certificates are loaded once a process
    for round_ in range(4):
        if round_ == 1:
            certificate_loads.clear()  # whatever the first link and its imports loaded
        agent, session = open_session(workspace, asking)
        try:
            assert not invoke(session, "forecast", {"city": "Oslo"}).is_error
        finally:
            agent.end_session(session)
    assert certificate_loads == []


def test_each_field_of_an_elicitation_is_asked_and_converted_to_its_type(workspace, asking):
    person = Person({"Confirm": "yes", "Copies": "3"})
    agent, session = open_session(workspace, asking, clarify=person)
    try:
        result = invoke(session, "print_copies")
    finally:
        agent.end_session(session)
    assert result.content == "confirm=True copies=3"
    assert person.asked == [
        ("MCP server 'asker' asks: Print the report?\nConfirm", ["yes", "no"]),
        ("MCP server 'asker' asks: Print the report?\nCopies", None),
    ]


def test_an_answer_that_does_not_fit_the_field_declines(workspace, asking):
    person = Person({"Confirm": "yes", "Copies": "a few"})
    agent, session = open_session(workspace, asking, clarify=person)
    try:
        result = invoke(session, "print_copies")
    finally:
        agent.end_session(session)
    assert result.content == "not printed: decline"


@pytest.mark.parametrize(
    "options",
    [{"entry": "service"}, {"entry": "crew", "clarify": Person({})}],
    ids=["no clarify channel", "crew child"],
)
def test_a_session_without_a_live_channel_declines_the_elicitation(workspace, asking, options):
    agent, session = open_session(workspace, asking, **options)
    try:
        result = invoke(session, "pick_colour")
    finally:
        agent.end_session(session)
    assert result.content == (
        "no colour: decline\n[MCP server 'asker' asks: Which colour for the shed? "
        "(declined: nobody can be asked in this session)]"
    )
    if "clarify" in options:
        assert options["clarify"].asked == []


def test_progress_notifications_become_tool_progress_events_of_the_run(workspace, asking):
    turns = [
        {"tool_calls": [{"name": "count_up", "arguments": {"steps": 3}}]},
        {"text": "counted", "expect": {"last_message_contains": "counted to 3"}},
    ]
    agent = Agent(
        provider=ScriptedProvider(turns),
        plugin_manager=mcp_pm(),
        workspace=workspace,
        mcp_servers={"asker": {"url": asking.url}},
        permissions="auto",
    )
    session = agent.new_session()
    try:
        result = asyncio.run(agent.run("count", session=session))
    finally:
        agent.end_session(session)
    assert result.outcome == "completed", result.reason
    progress = [e for e in result.events if isinstance(e, ToolProgress)]
    assert [(e.name, e.progress, e.total, e.message) for e in progress] == [
        ("count_up", 1, 3, "step 1"),
        ("count_up", 2, 3, "step 2"),
        ("count_up", 3, 3, "step 3"),
    ]
    assert {e.session_id for e in progress} == {result.session_id}


def test_an_image_is_shown_to_the_model_and_saved_with_its_path_in_the_text(
    workspace, asking, neta_home
):
    agent, session = open_session(workspace, asking)
    try:
        result = invoke(session, "snapshot")
    finally:
        agent.end_session(session)
    [saved] = result.data["files"]
    path = Path(saved)
    assert path.is_relative_to(neta_home)
    assert path.suffix == ".png"
    assert path.read_bytes().startswith(b"\x89PNG")
    [image] = result.images  # and the model is shown it
    assert result.content.startswith(f"one picture:\n[image: {path.name} 1x1] (image/png, ")
    assert image.data_url().startswith("data:image/png;base64,iVBORw0KGgo")
    assert str(path) in result.content


def test_structured_content_is_the_text_and_the_data(workspace, asking):
    agent, session = open_session(workspace, asking)
    try:
        result = invoke(session, "forecast", {"city": "Oslo"})
    finally:
        agent.end_session(session)
    assert result.data["structured"] == {"city": "Oslo", "sky": "clear", "high": 21}
    assert '"sky": "clear"' in result.content


def test_is_error_from_the_server_is_an_error_result(workspace, asking):
    agent, session = open_session(workspace, asking)
    try:
        result = invoke(session, "explode")
    finally:
        agent.end_session(session)
    assert result.is_error
    assert result.content.startswith("Error: ")
    assert "explode" in result.content


def test_an_http_server_that_is_not_there_is_unavailable_with_the_reason(workspace):
    agent = Agent(
        provider=None,
        plugin_manager=mcp_pm(),
        workspace=workspace,
        mcp_servers={"gone": {"url": "http://127.0.0.1:9/mcp", "timeout": 5}},
    )
    session = agent.new_session()
    agent.end_session(session)
    decision = session.toolsets.decision("mcp-gone")
    assert not decision.enabled
    assert decision.reason.startswith("the server did not start")
