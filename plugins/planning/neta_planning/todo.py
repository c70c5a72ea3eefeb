"""The ``todo`` tool: the plan the agent works through and the user watches."""

from __future__ import annotations

from pydantic import BaseModel, Field

import neta
from neta.events import TodoUpdate
from neta.todos import MAX_TODOS, TodoChange


class TodoArgs(BaseModel):
    """Arguments of ``todo``."""

    todos: list[TodoChange] | None = Field(
        None,
        description=(
            "The items, in priority order. Leave out to read the current list. "
            f"At most {MAX_TODOS} items."
        ),
    )
    merge: bool = Field(
        False,
        description=(
            "false: `todos` replaces the whole list. true: items whose id is listed get the "
            "fields you give; other items are appended."
        ),
    )


def build(session: neta.SessionContext) -> neta.Tool:
    """The ``todo`` tool for ``session``: reads and writes the session's todo store."""

    def todo(args: TodoArgs) -> neta.ToolResult:
        store: neta.TodoStore | None = session.todo_store
        if store is None:
            raise neta.ToolError("this session has no todo list")
        if args.todos is None:
            return _result(store.snapshot())
        snapshot = store.write(args.todos, merge=args.merge)
        session.emit(
            TodoUpdate(
                todos=snapshot.item_dicts(), counts=snapshot.counts, revision=snapshot.revision
            )
        )
        return _result(snapshot)

    return neta.Tool(name=SCHEMA.name, execute=todo)


def _result(snapshot: neta.TodoSnapshot) -> neta.ToolResult:
    counts = ", ".join(f"{n} {status}" for status, n in snapshot.counts.items())
    header = f"Todo list, revision {snapshot.revision}: {counts}"
    lines = [f"- [{item.status}] {item.id}: {item.content}" for item in snapshot.items]
    text = "\n".join([header, *lines]) if lines else f"{header}\n(the list is empty)"
    return neta.ToolResult(content=text, data=snapshot.model_dump(mode="json"))


SCHEMA = neta.ToolSchema(
    effect="reads",
    name="todo",
    toolset="planning",
    description=(
        "Read or write your todo list for this session. Each item has an id, content and a "
        "status (pending, in_progress, completed, cancelled). Returns the whole list, the "
        "number of items in each status and the list's revision."
    ),
    args=TodoArgs,
    guidance=(
        "Plan with todo when a request needs two or more steps, touches several files, needs "
        "research before you change anything, or holds several requests at once. Skip it for "
        "a single, simple step: a list of one item is noise.\n"
        "The order of the list is the priority. Keep exactly one item in_progress while you "
        "work, and none once everything is finished; mark an item completed the moment it is "
        "done, not in a batch at the end. Use merge=true with just the id and the new status "
        "to move one item along. If the work changes, add, rewrite or cancel items rather than "
        "leaving stale ones.\n"
        "The user watches this list as it changes: it is your contract with them, so it must "
        "always tell the truth about what is done and what is left."
    ),
    when_to_use=(
        "When a task takes two or more steps or several files, plan it with todo first and "
        "keep the list current as you go."
    ),
)
