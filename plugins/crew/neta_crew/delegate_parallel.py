"""The ``delegate_parallel`` tool: run sub-agents on independent tasks at the same time."""

from __future__ import annotations

import asyncio
from collections import Counter

from pydantic import BaseModel, Field

import neta
from neta_crew import report
from neta_crew.delegate_task import DelegateTaskArgs, crew_runner, delegation_timeout

MAX_TASKS = 10
"""The most tasks one call may hand out (the runner still runs only a few at once)."""

_GOAL_PREVIEW = 80


class DelegateParallelArgs(BaseModel):
    """Arguments of ``delegate_parallel``."""

    tasks: list[DelegateTaskArgs] = Field(
        min_length=1,
        max_length=MAX_TASKS,
        description="The independent tasks, each with its goal, context and toolsets as for "
        "delegate_task. Results come back in this order.",
    )


def build(session: neta.SessionContext) -> neta.Tool:
    """The ``delegate_parallel`` tool for ``session``: runs children through its crew runner.

    All children share one deadline, the runner's timeout counted from the start of the call
    (waiting for a free slot included), so the call as a whole ends within that timeout.
    """

    async def delegate_parallel(args: DelegateParallelArgs) -> neta.ToolResult:
        runner = crew_runner(session)
        # one deadline for the whole call: every child stops at the same moment
        deadline = asyncio.get_running_loop().time() + runner.timeout

        async def one(task: DelegateTaskArgs) -> neta.ChildResult:
            try:
                return await runner.run_child(
                    task.goal, task.context, task.toolsets, deadline=deadline
                )
            except Exception as exc:  # a runner should report failures; keep the others anyway
                reason = f"the sub-agent could not run: {type(exc).__name__}: {exc}"
                return neta.ChildResult(child_id="", status="failed", reason=reason)

        # a task group, not a bare gather: cancelled, it cancels every child and waits until
        # all have ended (their final events sent) before the cancellation goes on
        async with asyncio.TaskGroup() as group:
            running = [group.create_task(one(task)) for task in args.tasks]
        results = [child.result() for child in running]
        return neta.ToolResult(
            content=_describe_all(args.tasks, results),
            is_error=not any(report.succeeded(r) for r in results),
            data={"children": [report.as_data(r) for r in results]},
        )

    return neta.Tool(
        name=SCHEMA.name, execute=delegate_parallel, timeout=delegation_timeout(session)
    )


def _describe_all(tasks: list[DelegateTaskArgs], results: list[neta.ChildResult]) -> str:
    counts = Counter(result.status for result in results)
    tally = ", ".join(f"{n} {status}" for status, n in counts.items())
    sections = [f"{len(results)} sub-agents ran: {tally}."]
    limits = report.shares(results)
    for number, (task, result, limit) in enumerate(zip(tasks, results, limits, strict=True), 1):
        goal = " ".join(task.goal.split())
        if len(goal) > _GOAL_PREVIEW:
            goal = goal[: _GOAL_PREVIEW - 3] + "..."
        sections.append(f"## Task {number}: {goal}\n{report.describe(result, limit)}")
    return "\n\n".join(sections)


SCHEMA = neta.ToolSchema(
    effect="reads",
    name="delegate_parallel",
    toolset="crew",
    description=(
        f"Run sub-agents on up to {MAX_TASKS} independent tasks at the same time, each as "
        "delegate_task would, and wait for all of them. Returns each one's status and summary "
        "or question, in the order of the tasks; one failing does not stop the others."
    ),
    args=DelegateParallelArgs,
    guidance=(
        "Use delegate_parallel for sub-tasks that do not depend on each other: none needs "
        "another's result and they do not edit the same files. They run at the same time (a "
        "few at once) and their results come back in the order you gave.\n"
        "Each task is briefed like delegate_task: a clear goal and all the context it needs, "
        "since no sub-agent sees your conversation or the other tasks.\n"
        "Tasks that build on each other go one after another with delegate_task. Read every "
        "result, including the failed ones, before you decide what comes next."
    ),
    when_to_use=(
        "When several sub-tasks are independent of each other, run them at the same time with "
        "delegate_parallel."
    ),
)
