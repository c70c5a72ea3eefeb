"""The ``memory_save`` tool: remember a durable fact for later sessions."""

from __future__ import annotations

import asyncio

from pydantic import BaseModel, Field

import neta
from neta_memory.store import MAX_CONTENT_CHARS, MAX_TAG_CHARS, MAX_TAGS, check_entry, store_of


class MemorySaveArgs(BaseModel):
    """Arguments of ``memory_save``."""

    content: str = Field(
        description=(
            f"The fact to remember, self-contained and at most {MAX_CONTENT_CHARS:,} characters."
        )
    )
    tags: list[str] = Field(
        default_factory=list,
        description=(
            f"Up to {MAX_TAGS} one-word tags (at most {MAX_TAG_CHARS} characters each) that "
            "help find the fact again, e.g. ['preference', 'editor']."
        ),
    )


def build(session: neta.SessionContext) -> neta.Tool:
    """The ``memory_save`` tool for ``session``: it writes to the session's memory store."""

    async def memory_save(args: MemorySaveArgs) -> neta.ToolResult:
        content, tags = check_entry(args.content, args.tags)
        store = store_of(session)
        memory = await asyncio.to_thread(store.save, content, tags)
        return neta.ToolResult(
            content=f"Saved memory #{memory.id}: {memory.line()}",
            data={"id": memory.id, "tags": list(memory.tags)},
        )

    return neta.Tool(name=SCHEMA.name, execute=memory_save)


SCHEMA = neta.ToolSchema(
    effect="writes",
    name="memory_save",
    toolset="memory",
    description=(
        "Save a durable fact about the user or the project to long-term memory, for this "
        "user's later sessions in this workspace (or in every workspace, where the host "
        "shares memory). Returns the new memory's id."
    ),
    args=MemorySaveArgs,
    guidance=(
        "Save what will still be true and useful in a later session: the user's preferences "
        "and habits, facts about them and their environment, project conventions, decisions "
        "and their reasons. Do not save transient task state (what you are doing right now, "
        "intermediate results, the current todo list) or anything you can cheaply re-read "
        "from the workspace. Write each memory as one self-contained sentence that makes "
        "sense without this conversation (name the project or tool it is about), and add a "
        "few tags. Never save secrets such as passwords or API keys. When a fact you saved "
        "turns out wrong, forget it with memory_forget and save the corrected one."
    ),
    when_to_use=(
        "When you learn a lasting fact about the user or the project (a preference, a "
        "convention, a decision), save it with memory_save."
    ),
)
