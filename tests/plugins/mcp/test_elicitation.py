"""A server's elicitation as the user reads it: always naming the server that asks."""

import asyncio

import mcp_types as t

from neta import SessionContext
from neta_mcp.elicitation import ServerQuestions

COLOUR = {
    "type": "object",
    "properties": {"colour": {"type": "string", "enum": ["red", "green"]}},
    "required": ["colour"],
}
COPIES = {
    "type": "object",
    "properties": {
        "confirm": {"type": "boolean", "title": "Confirm"},
        "copies": {"type": "integer", "title": "Copies", "description": "How many"},
    },
    "required": ["confirm", "copies"],
}


def params(message, schema):
    return t.ElicitRequestFormParams(message=message, requested_schema=schema)


def answering(*answers):
    asked = []
    replies = list(answers)

    async def clarify(question, choices):
        asked.append((question, choices))
        return replies.pop(0)

    return clarify, asked


def test_a_question_says_which_server_asks(tmp_path):
    clarify, asked = answering("green")
    questions = ServerQuestions(SessionContext(workspace=tmp_path, clarify=clarify), "asker")
    result = asyncio.run(questions(params("Which colour?", COLOUR)))
    assert asked == [("MCP server 'asker' asks: Which colour?", ["red", "green"])]
    assert result.action == "accept"
    assert result.content == {"colour": "green"}


def test_every_question_of_a_form_says_which_server_asks(tmp_path):
    clarify, asked = answering("yes", "2")
    questions = ServerQuestions(SessionContext(workspace=tmp_path, clarify=clarify), "printer")
    result = asyncio.run(questions(params("Print it?", COPIES)))
    assert [question for question, _ in asked] == [
        "MCP server 'printer' asks: Print it?\nConfirm",
        "MCP server 'printer' asks: Print it?\nCopies: How many",
    ]
    assert result.content == {"confirm": True, "copies": 2}


def test_a_confirmation_without_fields_says_which_server_asks(tmp_path):
    clarify, asked = answering("accept")
    questions = ServerQuestions(SessionContext(workspace=tmp_path, clarify=clarify), "deploy")
    result = asyncio.run(questions(params("Deploy now?", {"type": "object", "properties": {}})))
    assert asked == [("MCP server 'deploy' asks: Deploy now?", ["accept", "decline"])]
    assert result.action == "accept"


def test_a_session_nobody_can_be_asked_declines_and_notes_who_asked_what(tmp_path):
    questions = ServerQuestions(SessionContext(workspace=tmp_path, entry="service"), "asker")
    result = asyncio.run(questions(params("Which colour?", COLOUR)))
    assert result.action == "decline"
    assert questions.take_notes() == [
        "[MCP server 'asker' asks: Which colour? (declined: nobody can be asked in this session)]"
    ]
    assert questions.take_notes() == []  # each note is told once
