"""The ``escalate`` tool: a sub-agent hands a question up to the agent that delegated its task.

Children cannot ask the user. This tool ends the child's run; the runner reports it with
status ``escalated`` and the question, and the parent decides.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field, StringConstraints

import neta
from neta.crew import ESCALATED_KEY

_Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class EscalateArgs(BaseModel):
    """Arguments of ``escalate``."""

    question: _Text = Field(
        description="The one decision or fact you need, with what you found and the options "
        "you see."
    )


def build(session: neta.SessionContext) -> neta.Tool:
    """The ``escalate`` tool for ``session`` (a crew child)."""
    del session  # the question travels in the result; the runner reads it there

    def escalate(args: EscalateArgs) -> neta.ToolResult:
        return neta.ToolResult(
            content=f"Question handed to the delegating agent: {args.question}\n"
            "Your run ends here; it will decide.",
            end_turn=True,
            data={ESCALATED_KEY: args.question},
        )

    return neta.Tool(name=SCHEMA.name, execute=escalate, sequential=True)


SCHEMA = neta.ToolSchema(
    effect="reads",
    name="escalate",
    toolset="crew_child",
    description=(
        "Stop and hand one question up to the agent that delegated your task. Your run ends; "
        "that agent reads the question and decides."
    ),
    args=EscalateArgs,
    guidance=(
        "You are working for another agent and cannot ask the user anything. Call escalate "
        "only when you cannot finish without a decision or a fact you cannot get yourself: the "
        "task is ambiguous in a way that changes the result, something it depends on is missing "
        "from the workspace, or the next step is risky or hard to undo.\n"
        "Ask one precise question, and say what you found and which options you see. Your run "
        "ends with it. Do not escalate what you can look up or sensibly decide on your own."
    ),
    when_to_use=(
        "When you cannot finish your task without a decision or information only the "
        "delegating agent can give, stop and ask it with escalate."
    ),
)
