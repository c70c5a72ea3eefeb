"""The todo store: replacing and merging lists, the rules, snapshots and persistence."""

import json
import threading
import time

import pytest

import neta
import neta.todos
from neta.todos import InMemoryTodoStore, TodoChange, TodoItem


def change(id, content=None, status=None, **kw):
    return TodoChange(id=id, content=content, status=status, **kw)


def plan(store, *items, merge=False):
    return store.write([change(*item) for item in items], merge=merge)


def test_new_store_is_empty_at_revision_zero():
    snapshot = InMemoryTodoStore().snapshot()
    assert snapshot.items == ()
    assert snapshot.revision == 0
    assert snapshot.counts == {"pending": 0, "in_progress": 0, "completed": 0, "cancelled": 0}


def test_store_satisfies_the_protocol():
    assert isinstance(InMemoryTodoStore(), neta.TodoStore)


def test_write_replaces_the_list_and_counts_statuses():
    store = InMemoryTodoStore()
    plan(store, ("a", "Read", "completed"), ("b", "Write", "in_progress"), ("c", "Test"))
    snapshot = plan(store, ("x", "Start over"))
    assert [item.id for item in snapshot.items] == ["x"]
    assert snapshot.items[0].status == "pending"
    assert snapshot.counts == {"pending": 1, "in_progress": 0, "completed": 0, "cancelled": 0}
    assert snapshot.revision == 2


def test_merge_updates_given_fields_and_appends_new_ids_in_order():
    store = InMemoryTodoStore()
    plan(store, ("a", "Read", "in_progress"), ("b", "Write"))
    snapshot = store.write(
        [change("a", status="completed"), change("b", status="in_progress"), change("c", "Ship")],
        merge=True,
    )
    assert [(i.id, i.content, i.status) for i in snapshot.items] == [
        ("a", "Read", "completed"),
        ("b", "Write", "in_progress"),
        ("c", "Ship", "pending"),
    ]
    assert snapshot.revision == 2


def test_merge_replaces_content_and_active_form_when_given():
    store = InMemoryTodoStore()
    plan(store, ("a", "Read"))
    snapshot = store.write([change("a", "Read the spec", active_form="Reading")], merge=True)
    assert snapshot.items[0] == TodoItem(id="a", content="Read the spec", active_form="Reading")


def test_empty_list_without_merge_clears_the_list():
    store = InMemoryTodoStore()
    plan(store, ("a", "Read"))
    assert plan(store).items == ()


def test_two_items_in_progress_are_refused_and_the_list_is_unchanged():
    store = InMemoryTodoStore()
    before = plan(store, ("a", "Read", "in_progress"), ("b", "Write"))
    with pytest.raises(neta.ToolError, match="only one todo item may be in_progress"):
        store.write([change("b", status="in_progress")], merge=True)
    assert store.snapshot() == before


def test_empty_content_is_refused():
    with pytest.raises(neta.ToolError, match="todo item 'a' has empty content"):
        plan(InMemoryTodoStore(), ("a", "   "))


def test_item_without_content_is_refused_when_replacing():
    with pytest.raises(neta.ToolError, match="every item needs its content"):
        plan(InMemoryTodoStore(), ("a", None, "completed"))


def test_new_item_without_content_is_refused_when_merging():
    store = InMemoryTodoStore()
    plan(store, ("a", "Read"))
    with pytest.raises(neta.ToolError, match="'zz' has no content: it is not in the list yet"):
        store.write([change("zz", status="completed")], merge=True)
    assert store.snapshot().revision == 1


def test_duplicate_ids_are_refused():
    with pytest.raises(neta.ToolError, match="todo id 'a' appears more than once"):
        plan(InMemoryTodoStore(), ("a", "One"), ("a", "Two"))


def test_empty_id_is_refused():
    with pytest.raises(neta.ToolError, match="empty id"):
        plan(InMemoryTodoStore(), (" ", "One"))


def test_more_than_the_maximum_number_of_items_is_refused():
    items = [(str(n), f"step {n}") for n in range(neta.todos.MAX_TODOS + 1)]
    with pytest.raises(neta.ToolError, match=r"would hold 257 items; at most 256"):
        plan(InMemoryTodoStore(), *items)
    assert len(plan(InMemoryTodoStore(), *items[:-1]).items) == neta.todos.MAX_TODOS


def test_merge_growing_past_the_maximum_is_refused():
    store = InMemoryTodoStore()
    plan(store, *[(str(n), f"step {n}") for n in range(neta.todos.MAX_TODOS)])
    with pytest.raises(neta.ToolError, match="at most 256"):
        plan(store, ("extra", "one more"), merge=True)
    assert len(store.snapshot().items) == neta.todos.MAX_TODOS


def test_content_longer_than_the_limit_is_refused():
    with pytest.raises(neta.ToolError, match="content of todo item 'a' has 4,001 characters"):
        plan(InMemoryTodoStore(), ("a", "x" * (neta.todos.MAX_TODO_CHARS + 1)))
    assert plan(InMemoryTodoStore(), ("a", "x" * neta.todos.MAX_TODO_CHARS)).revision == 1


def test_text_is_stripped():
    snapshot = plan(InMemoryTodoStore(), (" a ", "  Read it  "))
    assert snapshot.items[0].id == "a"
    assert snapshot.items[0].content == "Read it"


def test_open_items_are_pending_and_in_progress_ones():
    snapshot = plan(
        InMemoryTodoStore(),
        ("a", "Done", "completed"),
        ("b", "Doing", "in_progress"),
        ("c", "Dropped", "cancelled"),
        ("d", "Later"),
    )
    assert [item.id for item in snapshot.open_items] == ["b", "d"]


def test_to_json_and_from_json_restore_items_and_revision():
    store = InMemoryTodoStore()
    plan(store, ("a", "Read", "completed"), ("b", "Write", "in_progress"))
    restored = InMemoryTodoStore.from_json(store.to_json())
    assert restored.snapshot() == store.snapshot()
    assert plan(restored, ("c", "Next"), merge=True).revision == 2


def test_from_json_with_broken_rules_is_a_config_error():
    saved = json.dumps(
        {
            "revision": 3,
            "items": [
                {"id": "a", "content": "x", "status": "in_progress"},
                {"id": "b", "content": "y", "status": "in_progress"},
            ],
        }
    )
    with pytest.raises(neta.ConfigError, match="cannot restore the todo list"):
        InMemoryTodoStore.from_json(saved)


def test_from_json_with_malformed_text_is_a_config_error():
    with pytest.raises(neta.ConfigError, match="cannot restore the todo list"):
        InMemoryTodoStore.from_json("{not json")


def test_apply_todo_changes_leaves_the_current_list_alone():
    current = [TodoItem(id="a", content="Read")]
    result = neta.todos.apply_todo_changes(current, [change("a", status="completed")], merge=True)
    assert result[0].status == "completed"
    assert current[0].status == "pending"


def test_numeric_ids_from_a_model_are_taken_as_text_and_merge_with_the_same_item():
    store = InMemoryTodoStore()
    store.write([TodoChange.model_validate_json('{"id": 1, "content": "Read"}')])
    snapshot = store.write(
        [TodoChange.model_validate_json('{"id": 1, "status": "completed"}')], merge=True
    )
    assert [(item.id, item.status) for item in snapshot.items] == [("1", "completed")]


def test_writes_from_several_threads_lose_no_change(monkeypatch):
    applying = neta.todos.apply_todo_changes

    def slow_apply(*args, **kwargs):
        time.sleep(0.02)  # widen the read-modify-write window
        return applying(*args, **kwargs)

    monkeypatch.setattr(neta.todos, "apply_todo_changes", slow_apply)
    store = InMemoryTodoStore()
    threads = [
        threading.Thread(target=plan, args=(store, (str(n), f"Step {n}")), kwargs={"merge": True})
        for n in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    snapshot = store.snapshot()
    assert sorted(item.id for item in snapshot.items) == [str(n) for n in range(8)]
    assert snapshot.revision == 8
