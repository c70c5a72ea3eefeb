"""The session's todo list: items, snapshots, the store protocol and an in-memory store.

The list lives in core so hosts can persist it and the runtime can re-inject the open items
after compacting a long history. Every rule (one item in progress, unique ids, non-empty
content, size limits) is checked by ``apply_todo_changes``; a refused change raises
``ToolError`` with a message the model can act on, and the stored list stays as it was.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from typing import Literal, Protocol, get_args, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from neta.errors import ConfigError, ToolError

__all__ = [
    "MAX_TODOS",
    "MAX_TODO_CHARS",
    "OPEN_STATUSES",
    "TODO_STATUSES",
    "InMemoryTodoStore",
    "TodoChange",
    "TodoItem",
    "TodoSnapshot",
    "TodoStatus",
    "TodoStore",
    "apply_todo_changes",
]

TodoStatus = Literal["pending", "in_progress", "completed", "cancelled"]
"""Where an item stands: not started, being worked on, done, or dropped."""

TODO_STATUSES: tuple[TodoStatus, ...] = get_args(TodoStatus)
"""Every status, in the order counts are reported."""

OPEN_STATUSES: frozenset[TodoStatus] = frozenset({"pending", "in_progress"})
"""The statuses of items that still need work (those re-injected after compaction)."""

MAX_TODOS = 256
"""Items a list may hold at most."""

MAX_TODO_CHARS = 4_000
"""Characters an item's id, content or active form may have at most."""


class TodoItem(BaseModel):
    """One item of a todo list.

    Attributes:
        id: a short identifier, unique in the list, used to update the item later.
        content: what is to be done, in the imperative ("Add tests for the parser").
        status: ``pending``, ``in_progress``, ``completed`` or ``cancelled``.
        active_form: the same task in the progressive ("Adding tests"), shown while it runs.
    """

    model_config = ConfigDict(frozen=True)

    id: str
    content: str
    status: TodoStatus = "pending"
    active_form: str | None = None


class TodoChange(BaseModel):
    """A todo item as the caller gives it; every field but id may be left out.

    When the whole list is replaced, content is required and status defaults to pending.
    When merging, the fields given replace those of the item with the same id, and an unknown
    id adds a new item (which then needs content).
    """

    # Models often send ids as numbers ({"id": 1}); take them as the text they spell.
    model_config = ConfigDict(frozen=True, coerce_numbers_to_str=True)

    id: str = Field(description="A short id, unique in the list (e.g. '1', 'tests').")
    content: str | None = Field(
        None, description="What is to be done, in the imperative. Required for a new item."
    )
    status: TodoStatus | None = Field(
        None, description="pending, in_progress, completed or cancelled (new items: pending)."
    )
    active_form: str | None = Field(
        None, description="Optional: the task in the progressive ('Adding tests'), shown live."
    )


class TodoSnapshot(BaseModel):
    """The whole list at one revision, with the number of items in each status.

    Attributes:
        items: the items, in priority order.
        counts: how many items have each status (every status is present).
        revision: 0 for a list never written, then one more for every accepted change.
    """

    model_config = ConfigDict(frozen=True)

    items: tuple[TodoItem, ...] = ()
    counts: dict[str, int] = Field(default_factory=lambda: _zero_counts())
    revision: int = 0

    @classmethod
    def of(cls, items: Iterable[TodoItem], revision: int) -> TodoSnapshot:
        """A snapshot of ``items`` at ``revision``, with the counts computed."""
        listed = tuple(items)
        counts = _zero_counts()
        for item in listed:
            counts[item.status] += 1
        return cls(items=listed, counts=counts, revision=revision)

    @property
    def open_items(self) -> tuple[TodoItem, ...]:
        """The items still to do: pending or in progress, in list order."""
        return tuple(item for item in self.items if item.status in OPEN_STATUSES)

    def to_json(self) -> str:
        """The list and its revision as JSON text (what ``InMemoryTodoStore.from_json`` reads)."""
        return self.model_dump_json(include={"items", "revision"})

    def item_dicts(self) -> list[dict[str, object]]:
        """The items as plain data (what ``TodoUpdate`` events carry)."""
        return [item.model_dump() for item in self.items]


@runtime_checkable
class TodoStore(Protocol):
    """Where a session's todo list is kept; hosts may implement it over their own storage.

    A store must refuse a change that breaks a rule (``apply_todo_changes`` checks them all)
    by raising ``ToolError``, leaving the stored list unchanged.
    """

    def snapshot(self) -> TodoSnapshot:
        """The current list."""
        ...

    def write(self, changes: Sequence[TodoChange], *, merge: bool = False) -> TodoSnapshot:
        """Replace the list with ``changes`` (or merge them into it) and return the new list."""
        ...


class InMemoryTodoStore:
    """A todo store held in memory (the CLI's); ``to_json``/``from_json`` save and restore it."""

    def __init__(self, items: Iterable[TodoItem] = (), *, revision: int = 0) -> None:
        listed = list(items)
        _check_rules(listed)
        self._snapshot = TodoSnapshot.of(listed, revision)
        self._lock = threading.Lock()  # tools may run in worker threads

    def snapshot(self) -> TodoSnapshot:
        """The current list."""
        return self._snapshot

    def write(self, changes: Sequence[TodoChange], *, merge: bool = False) -> TodoSnapshot:
        """Apply ``changes`` (see ``apply_todo_changes``); a refused change alters nothing."""
        with self._lock:
            items = apply_todo_changes(self._snapshot.items, changes, merge=merge)
            self._snapshot = TodoSnapshot.of(items, self._snapshot.revision + 1)
            return self._snapshot

    def to_json(self) -> str:
        """The list and its revision as JSON text, for a host to persist."""
        return self._snapshot.to_json()

    @classmethod
    def from_json(cls, text: str | bytes) -> InMemoryTodoStore:
        """Restore a store saved with ``to_json``; malformed data raises ``ConfigError``."""
        try:
            saved = TodoSnapshot.model_validate_json(text)
            return cls(saved.items, revision=saved.revision)
        except (ValidationError, ToolError) as exc:
            raise ConfigError(f"cannot restore the todo list: {exc}") from exc


def apply_todo_changes(
    current: Sequence[TodoItem], changes: Sequence[TodoChange], *, merge: bool = False
) -> list[TodoItem]:
    """The list that results from applying ``changes`` to ``current``, with every rule checked.

    Without ``merge`` the changes become the whole new list. With ``merge`` an item whose id
    is already listed gets the fields the change gives; any other change is appended.

    Raises:
        ToolError: an id given twice, an empty id or content, a new item without content,
            more than ``MAX_TODOS`` items, a text over ``MAX_TODO_CHARS``, or more than one
            item in progress. The message says which item and what to do instead.
    """
    _check_unique_ids(changes)
    if merge:
        result = list(current)
        position = {item.id: index for index, item in enumerate(result)}
        for change in changes:
            if change.id.strip() in position:
                index = position[change.id.strip()]
                result[index] = _updated(result[index], change)
            else:
                result.append(_new_item(change, merge=True))
    else:
        result = [_new_item(change, merge=False) for change in changes]
    _check_rules(result)
    return result


def _zero_counts() -> dict[str, int]:
    return dict.fromkeys(TODO_STATUSES, 0)


def _check_unique_ids(changes: Sequence[TodoChange]) -> None:
    seen: set[str] = set()
    for change in changes:
        key = change.id.strip()
        if not key:
            raise ToolError("a todo item has an empty id; give every item a short unique id")
        if key in seen:
            raise ToolError(f"todo id {key!r} appears more than once; each item needs a unique id")
        seen.add(key)


def _new_item(change: TodoChange, *, merge: bool) -> TodoItem:
    if change.content is None:
        hint = (
            "it is not in the list yet, so give its content to add it"
            if merge
            else "when merge is false every item needs its content"
        )
        raise ToolError(f"todo item {change.id.strip()!r} has no content: {hint}")
    return TodoItem(
        id=change.id.strip(),
        content=change.content.strip(),
        status=change.status or "pending",
        active_form=_clean(change.active_form),
    )


def _updated(item: TodoItem, change: TodoChange) -> TodoItem:
    fields: dict[str, object] = {}
    if change.content is not None:
        fields["content"] = change.content.strip()
    if change.status is not None:
        fields["status"] = change.status
    if change.active_form is not None:
        fields["active_form"] = _clean(change.active_form)
    return item.model_copy(update=fields)


def _clean(text: str | None) -> str | None:
    if text is None:
        return None
    return text.strip() or None


def _check_rules(items: Sequence[TodoItem]) -> None:
    if len(items) > MAX_TODOS:
        raise ToolError(
            f"the todo list would hold {len(items)} items; at most {MAX_TODOS} are allowed "
            "(group small steps into larger items)"
        )
    seen: set[str] = set()
    for item in items:
        if item.id in seen:
            raise ToolError(f"todo id {item.id!r} appears more than once; ids must be unique")
        seen.add(item.id)
        if not item.content.strip():
            raise ToolError(f"todo item {item.id!r} has empty content; say what is to be done")
        for name, text in (
            ("id", item.id),
            ("content", item.content),
            ("active_form", item.active_form),
        ):
            if text is not None and len(text) > MAX_TODO_CHARS:
                raise ToolError(
                    f"the {name} of todo item {item.id[:40]!r} has {len(text):,} characters; "
                    f"the limit is {MAX_TODO_CHARS:,} (keep items short, one step each)"
                )
    running = [item.id for item in items if item.status == "in_progress"]
    if len(running) > 1:
        listed = ", ".join(repr(i) for i in running)
        raise ToolError(
            f"only one todo item may be in_progress at a time, but {listed} would be; "
            "finish or pause the current one (completed or pending) before starting the next"
        )
