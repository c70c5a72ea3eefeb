"""The ``memory_forget`` tool: delete a saved fact by id."""

from __future__ import annotations

import asyncio

from pydantic import BaseModel, Field

import neta
from neta_memory.store import store_of


class MemoryForgetArgs(BaseModel):
    """Arguments of ``memory_forget``."""

    id: int = Field(ge=1, description="The id of the memory to delete, as recall shows it (#id).")


def build(session: neta.SessionContext) -> neta.Tool:
    """The ``memory_forget`` tool for ``session``: it deletes from the session's memory store."""

    async def memory_forget(args: MemoryForgetArgs) -> neta.ToolResult:
        store = store_of(session)
        removed = await asyncio.to_thread(store.forget, args.id)
        if removed is None:
            raise neta.ToolError(
                f"there is no memory #{args.id}; recall first to see the ids that exist"
            )
        return neta.ToolResult(
            content=f"Forgot memory #{removed.id}: {removed.content}", data={"id": removed.id}
        )

    return neta.Tool(name=SCHEMA.name, execute=memory_forget)


SCHEMA = neta.ToolSchema(
    effect="writes",
    name="memory_forget",
    toolset="memory",
    description="Delete one saved fact from long-term memory by its id.",
    args=MemoryForgetArgs,
)
