"""The ``delegate_task`` tool: run one sub-agent on a self-contained task and read its report."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field, StringConstraints

import neta
from neta_crew import report

DEFAULT_CHILD_TIMEOUT = 600.0
"""Seconds a child may take when the session's runner cannot say (it has none yet)."""

TIMEOUT_MARGIN = 30.0
"""Seconds the tool's own timeout exceeds the children's, so the runner reports a timeout first."""

_Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class DelegateTaskArgs(BaseModel):
    """Arguments of ``delegate_task`` (and one task of ``delegate_parallel``)."""

    goal: _Text = Field(
        description="What the sub-agent must achieve, and what counts as done, in a sentence "
        "or two."
    )
    context: str = Field(
        "",
        description="Everything else it needs: it sees nothing of your conversation. Paths, "
        "decisions already made, constraints, the form of the answer you want.",
    )
    toolsets: list[_Text] | None = Field(
        None,
        description="Toolsets to give it (default: base and planning). Only toolsets you have "
        "yourself are given.",
    )


def build(session: neta.SessionContext) -> neta.Tool:
    """The ``delegate_task`` tool for ``session``: runs children through its crew runner."""

    async def delegate_task(args: DelegateTaskArgs) -> neta.ToolResult:
        result = await crew_runner(session).run_child(args.goal, args.context, args.toolsets)
        return neta.ToolResult(
            content=report.describe(result),
            is_error=not report.succeeded(result),
            data={"children": [report.as_data(result)]},
        )

    return neta.Tool(name=SCHEMA.name, execute=delegate_task, timeout=delegation_timeout(session))


def crew_runner(session: neta.SessionContext) -> neta.SubAgentRunner:
    """The session's sub-agent runner; a session without one cannot delegate."""
    runner: neta.SubAgentRunner | None = session.crew_runner
    if runner is None:
        raise neta.ToolError("this session cannot start sub-agents (it has no crew runner)")
    return runner


def delegation_timeout(session: neta.SessionContext) -> float:
    """The tool's timeout: the runner's child timeout plus a margin."""
    runner: neta.SubAgentRunner | None = session.crew_runner
    child_timeout = runner.timeout if runner is not None else DEFAULT_CHILD_TIMEOUT
    return child_timeout + TIMEOUT_MARGIN


SCHEMA = neta.ToolSchema(
    effect="reads",
    name="delegate_task",
    toolset="crew",
    description=(
        "Run a sub-agent on one self-contained task in the same workspace and wait for it to "
        "finish. It sees nothing of this conversation: give it a clear goal and the context it "
        "needs. Returns its status (completed, escalated, failed, timed_out, max_turns, "
        "cancelled), its summary or its question, and how long it took."
    ),
    args=DelegateTaskArgs,
    guidance=(
        "Delegate with delegate_task a sub-task that stands on its own: it can be done and "
        "checked without the rest of your work, and doing it yourself would crowd your context "
        "(a broad search, a separate change, an investigation).\n"
        "A sub-agent starts from nothing and sees none of your conversation. Give it a clear "
        "goal that says what done looks like, and put in the context everything it needs: file "
        "paths, decisions already made, constraints, the form of the answer you want. It works "
        "in your workspace.\n"
        "Sub-agents cannot ask the user anything. One that is stuck stops with status escalated "
        "and its question: decide yourself, or ask the user if you can, then delegate again "
        "with the answer in the context.\n"
        "Read every result before you go on. A summary is the sub-agent's own account: check "
        "what matters (read the files it changed) and decide the next step yourself."
    ),
    when_to_use=(
        "When a sub-task is self-contained and would crowd your own context, hand it to a "
        "sub-agent with delegate_task, with a clear goal and the context it needs."
    ),
)
