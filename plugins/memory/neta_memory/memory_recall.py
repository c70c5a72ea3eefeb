"""The ``memory_recall`` tool: find saved facts relevant to a query."""

from __future__ import annotations

import asyncio

from pydantic import BaseModel, Field

import neta
from neta_memory.store import store_of

MAX_RECALL_LIMIT = 50
"""The most memories one recall may return."""


class MemoryRecallArgs(BaseModel):
    """Arguments of ``memory_recall``."""

    query: str = Field(
        min_length=1,
        max_length=1000,
        description="Keywords describing what to look for, e.g. 'preferred editor'.",
    )
    limit: int = Field(
        5, ge=1, le=MAX_RECALL_LIMIT, description="The most memories to return, best first."
    )


def build(session: neta.SessionContext) -> neta.Tool:
    """The ``memory_recall`` tool for ``session``: it searches the session's memory store."""

    async def memory_recall(args: MemoryRecallArgs) -> neta.ToolResult:
        store = store_of(session)
        found = await asyncio.to_thread(store.recall, args.query, args.limit)
        data = {
            "memories": [
                {
                    "id": m.id,
                    "content": m.content,
                    "tags": list(m.tags),
                    "date": m.created.date().isoformat(),
                }
                for m in found
            ]
        }
        if not found:
            return neta.ToolResult(
                content=f"No memory matches {args.query!r}. Try other keywords or ask the user.",
                data=data,
            )
        heading = f"{len(found)} memor{'y' if len(found) == 1 else 'ies'}, most relevant first:"
        lines = "\n".join(memory.line() for memory in found)
        return neta.ToolResult(content=f"{heading}\n{lines}", data=data)

    return neta.Tool(name=SCHEMA.name, execute=memory_recall)


SCHEMA = neta.ToolSchema(
    effect="reads",
    name="memory_recall",
    toolset="memory",
    description=(
        "Search long-term memory by keywords. Returns the most relevant saved facts, best "
        "first, each with its id, date and tags."
    ),
    args=MemoryRecallArgs,
    guidance=(
        "Recall before you ask the user something they may have told you in an earlier "
        "session (a preference, a name, a path, a convention), and at the start of a task "
        "that depends on such facts. Search with a few distinctive keywords rather than a "
        "whole sentence; any memory sharing a word is a candidate and the best matches come "
        "first. A recalled fact may be out of date: when it contradicts what you see in the "
        "workspace, trust the workspace."
    ),
    when_to_use=(
        "Before asking the user something they may have said in an earlier session, search "
        "with memory_recall."
    ),
)
