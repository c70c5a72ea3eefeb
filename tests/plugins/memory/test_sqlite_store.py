"""The embedded store on a real SQLite file: ranking, forgetting, limits, safety, concurrency."""

import os
import sqlite3
import stat
import subprocess
import sys
import textwrap

import pytest

import neta
from neta_memory.sqlite_store import SQLiteMemoryStore, fts_query, scope_path
from neta_memory.store import MAX_CONTENT_CHARS, MAX_TAG_CHARS, MAX_TAGS


@pytest.fixture
def store(neta_home):
    return SQLiteMemoryStore.for_scope("default")


def test_store_for_scope_lives_under_neta_home(neta_home, store):
    assert store.path == neta_home / "memory" / "default.db"
    assert isinstance(store, neta.MemoryStore)


def test_store_creation_touches_no_disk_until_first_use(neta_home, store):
    assert not neta_home.exists()
    store.save("The user's name is Ada.")
    assert store.path.is_file()


def test_store_save_returns_the_memory_with_id_tags_and_date(store):
    memory = store.save("  The project uses tabs.  ", ["Style", "style", " formatting "])
    assert memory.id == 1
    assert memory.content == "The project uses tabs."
    assert memory.tags == ("style", "formatting")
    assert memory.created.tzinfo is not None
    [found] = store.recall("tabs")
    assert found == memory


def test_store_recall_ranks_the_more_relevant_fact_first(store):
    tea = store.save("The user likes tea in the afternoon.")
    relevant = store.save("Deploy the docs with make deploy-docs; the docs deploy needs VPN.")
    docs = store.save("The docs folder is written in Markdown.")
    found = store.recall("how to deploy the docs")
    assert [m.id for m in found] == [relevant.id, docs.id, tea.id]  # tea shares only 'the'


def test_store_recall_matches_tags_and_word_forms(store):
    store.save("Prefers Neovim for quick edits.", ["editor"])
    store.save("Runs tests before every commit.", ["workflow"])
    assert [m.content for m in store.recall("editor")] == ["Prefers Neovim for quick edits."]
    assert [m.content for m in store.recall("commits test")] == ["Runs tests before every commit."]


def test_store_recall_respects_the_limit(store):
    for n in range(8):
        store.save(f"Fact number {n} about python.")
    assert len(store.recall("python", limit=3)) == 3
    assert len(store.recall("python")) == 5


def test_store_recall_finds_words_inside_chinese_japanese_and_korean_text(store):
    japanese = store.save("私はPythonが好きです")
    chinese = store.save("用户住在北京 喜欢喝茶")
    korean = store.save("사용자는 서울에서 일합니다")
    store.save("The user lives in Berlin and likes tea.")
    assert [m.id for m in store.recall("python")] == [japanese.id]
    assert [m.id for m in store.recall("好き")] == [japanese.id]
    assert [m.id for m in store.recall("北京")] == [chinese.id]
    assert [m.id for m in store.recall("서울")] == [korean.id]
    assert store.recall("京北") == []  # the characters of a word must appear in order


def test_store_recall_matches_a_cjk_tag(store):
    tagged = store.save("Prefers formal language in messages.", ["日本語"])
    assert [m.id for m in store.recall("日本語")] == [tagged.id]
    assert tagged.tags == ("日本語",)


def test_store_recall_without_match_returns_nothing(store):
    store.save("The user's timezone is CET.")
    assert store.recall("kubernetes") == []


@pytest.mark.parametrize(
    "query",
    [
        'foo" OR "bar',
        "NEAR(a b)",
        "content:secret",
        "a AND OR NOT b",
        "(unbalanced",
        "tabs*",
        "{col1 col2}: x",
    ],
)
def test_store_recall_with_fts_syntax_in_the_query_does_not_crash(store, query):
    store.save("Tabs, not spaces: the user's secret is bar and foo.")
    assert isinstance(store.recall(query), list)  # an FTS5 syntax error would raise


def test_store_recall_with_quote_injection_still_finds_the_words(store):
    store.save("The user drinks coffee.")
    assert len(store.recall('coffee" OR "x')) == 1


@pytest.mark.parametrize("query", ["", "   ", "!!! ??? ...", '"" * ()', "* ^ - +", '"'])
def test_store_recall_without_words_raises_a_tool_error(store, query):
    with pytest.raises(neta.ToolError, match="no words to search for"):
        store.recall(query)


def test_store_forget_deletes_the_memory_and_its_index_entry(store):
    kept = store.save("The user likes green.")
    gone = store.save("The user likes red.")
    assert store.forget(gone.id) == gone
    assert [m.id for m in store.recall("likes")] == [kept.id]
    assert store.recall("red") == []
    assert store.count() == 1


def test_store_forget_unknown_id_returns_none(store):
    assert store.forget(42) is None


@pytest.mark.parametrize("memory_id", [2**63, -(2**63) - 1, 10**30])
def test_store_forget_id_beyond_sqlite_integers_returns_none(store, memory_id):
    store.save("one fact")
    assert store.forget(memory_id) is None
    assert store.count() == 1


def test_store_ids_are_never_reused_after_forget(store):
    first = store.save("one fact")
    store.forget(first.id)
    assert store.save("another fact").id == 2


def test_store_content_over_the_limit_raises_a_tool_error(store):
    with pytest.raises(neta.ToolError, match=r"4,001 characters long; the limit is 4,000"):
        store.save("x" * (MAX_CONTENT_CHARS + 1))
    assert store.save("x" * MAX_CONTENT_CHARS).content == "x" * MAX_CONTENT_CHARS


def test_store_too_many_tags_raise_a_tool_error(store):
    with pytest.raises(neta.ToolError, match="at most 10"):
        store.save("fact", [f"t{n}" for n in range(MAX_TAGS + 1)])


@pytest.mark.parametrize(
    ("tag", "reason"),
    [("x" * (MAX_TAG_CHARS + 1), "the limit is 40"), ("two words", "invalid tag"), ("", "invalid")],
)
def test_store_bad_tag_raises_a_tool_error(store, tag, reason):
    with pytest.raises(neta.ToolError, match=reason):
        store.save("fact", [tag])


def test_store_empty_content_raises_a_tool_error(store):
    with pytest.raises(neta.ToolError, match="empty"):
        store.save("   \n")


@pytest.mark.parametrize("scope", ["../evil", "a/b", "", ".hidden", "x" * 65, "a b"])
def test_scope_path_unsafe_scope_raises_config_error(scope):
    with pytest.raises(neta.ConfigError, match="invalid memory scope"):
        scope_path(scope)


def test_scopes_keep_separate_databases(neta_home):
    SQLiteMemoryStore.for_scope("alice").save("Alice uses vim.")
    assert SQLiteMemoryStore.for_scope("bob").recall("vim") == []
    assert len(SQLiteMemoryStore.for_scope("alice").recall("vim")) == 1


def test_fts_query_quotes_every_word():
    assert fts_query('deploy "docs" OR (site)') == '"deploy" OR "docs" OR "or" OR "site"'


def test_store_uses_wal_mode(store):
    store.save("fact")
    with sqlite3.connect(store.path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_store_database_and_its_folder_are_private_to_the_user(store):
    store.save("The user's bank is Example Bank.")
    assert stat.S_IMODE(store.path.stat().st_mode) & 0o077 == 0
    assert stat.S_IMODE(store.path.parent.stat().st_mode) & 0o077 == 0


_VERSION_1_SCHEMA = """
    CREATE TABLE memories (
        id INTEGER PRIMARY KEY AUTOINCREMENT, content TEXT NOT NULL,
        tags TEXT NOT NULL DEFAULT '', created TEXT NOT NULL);
    CREATE VIRTUAL TABLE memories_fts USING fts5(
        content, tags, content='memories', content_rowid='id',
        tokenize='porter unicode61 remove_diacritics 2');
    CREATE TRIGGER memories_added AFTER INSERT ON memories BEGIN
        INSERT INTO memories_fts(rowid, content, tags) VALUES (new.id, new.content, new.tags);
    END;
    CREATE TRIGGER memories_removed AFTER DELETE ON memories BEGIN
        INSERT INTO memories_fts(memories_fts, rowid, content, tags)
        VALUES ('delete', old.id, old.content, old.tags);
    END;
    PRAGMA user_version = 1;
    INSERT INTO memories (content, tags, created)
        VALUES ('私はPythonが好きです', 'lang', '2024-05-01T10:00:00+00:00');
    INSERT INTO memories (content, tags, created)
        VALUES ('The staging host is db-7.', 'infra', '2024-05-02T10:00:00+00:00');
"""


def test_store_upgrades_a_version_1_database_and_keeps_its_memories(store):
    store.path.parent.mkdir(parents=True)
    with sqlite3.connect(store.path) as db:
        db.executescript(_VERSION_1_SCHEMA)
    [japanese] = store.recall("python")
    assert (japanese.id, japanese.tags) == (1, ("lang",))
    assert [m.id for m in store.recall("好き")] == [1]
    assert [m.id for m in store.recall("infra")] == [2]
    assert store.forget(2) is not None
    assert store.recall("staging") == []
    assert store.save("Another fact.").id == 3
    with sqlite3.connect(store.path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 3


_VERSION_2_SCHEMA = """
    CREATE TABLE memories (
        id INTEGER PRIMARY KEY AUTOINCREMENT, content TEXT NOT NULL,
        tags TEXT NOT NULL DEFAULT '', created TEXT NOT NULL);
    CREATE VIRTUAL TABLE memory_index USING fts5(
        content, tags, tokenize='porter unicode61 remove_diacritics 2');
    INSERT INTO memories (content, tags, created)
        VALUES ('The deploy key is in the vault.', 'infra', '2024-05-02T10:00:00+00:00');
    INSERT INTO memory_index (rowid, content, tags)
        VALUES (1, 'The deploy key is in the vault.', 'infra');
    PRAGMA user_version = 2;
"""


def test_store_upgrades_a_version_2_database_whose_memories_become_global(neta_home, tmp_path):
    path = neta_home / "memory" / "default.db"
    path.parent.mkdir(parents=True)
    with sqlite3.connect(path) as db:
        db.executescript(_VERSION_2_SCHEMA)
    workspace = SQLiteMemoryStore(path, workspace=tmp_path)
    assert workspace.recall("deploy key") == []
    assert workspace.forget(1) is None
    [old] = SQLiteMemoryStore(path).recall("deploy key")
    assert (old.id, old.tags) == (1, ("infra",))
    assert workspace.save("Another fact.").id == 2
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 3


def test_store_of_one_workspace_sees_only_its_own_memories(neta_home, tmp_path):
    mine = SQLiteMemoryStore.for_scope("default", workspace=tmp_path / "a")
    theirs = SQLiteMemoryStore.for_scope("default", workspace=tmp_path / "b")
    shared = SQLiteMemoryStore.for_scope("default")
    secret = mine.save("The staging password is hunter2.", ["secret"])
    for other in (theirs, shared):
        assert other.recall("staging password secret") == []
        assert other.forget(secret.id) is None
        assert other.count() == 0
    assert mine.recall("password") == [secret]
    assert mine.count() == 1


def test_store_knows_a_workspace_by_its_real_path(neta_home, tmp_path):
    (tmp_path / "project").mkdir()
    os.symlink(tmp_path / "project", tmp_path / "alias")
    saved = SQLiteMemoryStore.for_scope(workspace=tmp_path / "alias").save("Uses tabs.")
    store = SQLiteMemoryStore.for_scope(workspace=tmp_path / "project")
    assert store.workspace == (tmp_path / "project").resolve()
    assert store.recall("tabs") == [saved]


def test_store_refuses_a_database_from_a_newer_version(store):
    store.path.parent.mkdir(parents=True)
    with sqlite3.connect(store.path) as db:
        db.execute("PRAGMA user_version = 99")
    with pytest.raises(neta.ToolError, match="newer"):
        store.save("fact")


def test_store_unusable_path_raises_a_tool_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(neta.ToolError, match="cannot create the memory folder"):
        SQLiteMemoryStore(blocker / "memory.db").save("fact")


def test_parallel_writer_processes_lose_no_memory_and_another_process_recalls_it(neta_home):
    # the writers are other processes: what this one recalls survived into a new process
    writers, saves = 4, 50
    code = textwrap.dedent(
        f"""
        import sys
        from neta_memory.sqlite_store import SQLiteMemoryStore
        store = SQLiteMemoryStore.for_scope("default")
        if sys.argv[1] == "0":
            store.save("The staging host is db-7.", ["infra"])
        for n in range({saves}):
            store.save(f"writer {{sys.argv[1]}} fact {{n}}", ["parallel"])
        """
    )
    env = {**os.environ, "NETA_HOME": str(neta_home)}
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(w)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in range(writers)
    ]
    for process in processes:
        _out, err = process.communicate(timeout=60)
        assert process.returncode == 0, err
    store = SQLiteMemoryStore.for_scope("default")
    assert store.count() == writers * saves + 1
    [staging] = store.recall("staging host")
    assert (staging.content, staging.tags) == ("The staging host is db-7.", ("infra",))
    assert len(store.recall("parallel", limit=50)) == 50
    assert len(store.recall("writer 3 fact 17", limit=1)) == 1
