"""memory_save, memory_recall and memory_forget as functions and through the catalog."""

import asyncio

import pytest

import neta
import neta_memory.plugin
from neta.session_tools import resolve_session_toolsets
from neta_memory import memory_forget, memory_recall, memory_save
from neta_memory.sqlite_store import SQLiteMemoryStore


def run(tool, args):
    return asyncio.run(tool.invoke(args))


def test_memory_save_as_a_function_stores_in_the_session_store(session, neta_home):
    session.memory_store = SQLiteMemoryStore(neta_home / "m.db")
    result = run(
        memory_save.build(session),
        memory_save.MemorySaveArgs(content="The user is called Ada.", tags=["name"]),
    )
    assert result.content.startswith("Saved memory #1: [#1 ")
    assert result.data == {"id": 1, "tags": ["name"]}
    assert [m.content for m in session.memory_store.recall("Ada")] == ["The user is called Ada."]


def test_memory_recall_as_a_function_lists_id_date_tags_and_content(session, neta_home):
    session.memory_store = SQLiteMemoryStore(neta_home / "m.db")
    saved = session.memory_store.save("Uses fish as the shell.", ["shell"])
    result = run(memory_recall.build(session), memory_recall.MemoryRecallArgs(query="shell"))
    day = saved.created.date().isoformat()
    assert result.content == (
        f"1 memory, most relevant first:\n[#1 {day} tags: shell] Uses fish as the shell."
    )
    assert result.data["memories"] == [
        {"id": 1, "content": "Uses fish as the shell.", "tags": ["shell"], "date": day}
    ]


def test_memory_forget_as_a_function_deletes_the_memory(session, neta_home):
    session.memory_store = SQLiteMemoryStore(neta_home / "m.db")
    saved = session.memory_store.save("Temporary fact.")
    result = run(memory_forget.build(session), memory_forget.MemoryForgetArgs(id=saved.id))
    assert result.content == "Forgot memory #1: Temporary fact."
    assert session.memory_store.count() == 0


def test_memory_tool_without_a_store_raises_a_tool_error(session):
    with pytest.raises(neta.ToolError, match="no memory store"):
        run(memory_recall.build(session), memory_recall.MemoryRecallArgs(query="x"))


def test_memory_catalog_holds_three_schemas_in_the_memory_toolset(memory_pm):
    catalog = memory_pm.catalog()
    assert [s.name for s in catalog.schemas_by_toolset("memory")] == [
        "memory_save",
        "memory_recall",
        "memory_forget",
    ]
    assert catalog.get("memory_save").when_to_use
    assert catalog.get("memory_recall").when_to_use
    assert "transient task state" in catalog.get("memory_save").guidance


def test_memory_session_start_equips_the_embedded_store_of_the_user_scope(
    memory_pm, session, neta_home
):
    session.extras["user_scope"] = "ada"
    memory_pm.notify("neta_session_start", session=session)
    assert isinstance(session.memory_store, SQLiteMemoryStore)
    assert session.memory_store.path == neta_home / "memory" / "ada.db"
    assert not neta_home.exists()  # opened lazily


def test_memory_session_start_keeps_a_host_store(memory_pm, session):
    host_store = FakeStore()
    session.memory_store = host_store
    memory_pm.notify("neta_session_start", session=session)
    assert session.memory_store is host_store


def test_memory_session_start_with_unsafe_scope_records_a_problem(memory_pm, session):
    session.extras["user_scope"] = "../../etc"
    memory_pm.notify("neta_session_start", session=session)
    assert session.memory_store is None
    assert "invalid memory scope" in str(memory_pm.problems[0])
    resolution = resolve_session_toolsets(memory_pm, session)
    assert not resolution.decision("memory").enabled


def test_memory_session_start_scopes_the_store_to_the_workspace(memory_pm, session):
    memory_pm.notify("neta_session_start", session=session)
    assert session.memory_store.workspace == session.workspace.resolve()


def test_memory_session_start_with_the_global_scope_gives_a_store_of_no_workspace(
    memory_pm, session
):
    session.extras["memory_scope"] = "global"
    memory_pm.notify("neta_session_start", session=session)
    assert session.memory_store.workspace is None


def test_memory_session_start_with_an_unknown_memory_scope_records_a_problem(memory_pm, session):
    session.extras["memory_scope"] = "everywhere"
    memory_pm.notify("neta_session_start", session=session)
    assert session.memory_store is None
    assert "use 'workspace' or 'global'" in str(memory_pm.problems[0])


def test_memory_saved_in_one_workspace_is_neither_recalled_nor_forgotten_in_another(call_in):
    saved = call_in("a")("memory_save", content="The staging password is hunter2.")
    other = call_in("b")
    assert "No memory matches" in other("memory_recall", query="staging password").content
    with pytest.raises(neta.ToolError, match=f"there is no memory #{saved.data['id']}"):
        other("memory_forget", id=saved.data["id"])
    assert (
        "No memory matches"
        in call_in("shared", memory_scope="global")(
            "memory_recall", query="staging password"
        ).content
    )
    assert "hunter2" in call_in("a")("memory_recall", query="staging password").content


def test_memory_saved_in_the_global_scope_is_recalled_in_every_workspace_sharing_it(call_in):
    call_in("a", memory_scope="global")("memory_save", content="The user prefers tabs.")
    shared = call_in("b", memory_scope="global")("memory_recall", query="tabs")
    assert "The user prefers tabs." in shared.content
    assert "No memory matches" in call_in("b")("memory_recall", query="tabs").content


def test_memory_toolset_is_off_without_a_store_and_on_after_session_start(memory_pm, session):
    assert not resolve_session_toolsets(memory_pm, session).decision("memory").enabled
    memory_pm.notify("neta_session_start", session=session)
    assert resolve_session_toolsets(memory_pm, session).decision("memory").enabled


def test_memory_tools_through_the_catalog_save_recall_and_forget(call):
    call("memory_save", content="The CI runs on GitHub Actions.", tags=["ci"])
    call("memory_save", content="The user reviews pull requests in the morning.")
    recalled = call("memory_recall", query="which CI does the project use")
    assert recalled.content.splitlines()[1].endswith("The CI runs on GitHub Actions.")
    assert call("memory_forget", id=1).content.startswith("Forgot memory #1")
    assert "No memory matches" in call("memory_recall", query="github actions").content


def test_memory_save_through_the_catalog_over_the_size_limit_is_a_tool_error(call):
    with pytest.raises(neta.ToolError, match="the limit is 4,000"):
        call("memory_save", content="y" * 4001)


def test_memory_forget_unknown_id_is_a_tool_error(call):
    with pytest.raises(neta.ToolError, match="there is no memory #9"):
        call("memory_forget", id=9)


def test_memory_forget_id_beyond_what_sqlite_stores_is_an_unknown_id(call):
    with pytest.raises(neta.ToolError, match="there is no memory #18446744073709551616"):
        call("memory_forget", id=2**64)


def test_memory_recall_garbage_query_is_a_tool_error(call):
    with pytest.raises(neta.ToolError, match="no words to search for"):
        call("memory_recall", query="(*)")


def test_memory_tools_use_a_host_store(make_pm, session):
    pm = make_pm(memory=neta_memory.plugin)
    session.memory_store = FakeStore()
    tools = neta.build_session_tools(pm, session, ["memory"])
    bound = tools["memory_save"]
    asyncio.run(bound.tool.invoke(bound.schema.args.model_validate({"content": "hosted fact"})))
    assert [m.content for m in session.memory_store.saved] == ["hosted fact"]


class FakeStore:
    """A host's own store: anything with save, recall and forget."""

    def __init__(self):
        self.saved = []

    def save(self, content, tags=()):
        import datetime as dt

        memory = neta.Memory(len(self.saved) + 1, content, tuple(tags), dt.datetime.now(dt.UTC))
        self.saved.append(memory)
        return memory

    def recall(self, query, limit=5):
        return [m for m in self.saved if query in m.content][:limit]

    def forget(self, memory_id):
        return None
