from pathlib import Path

import neta


def test_neta_home_defaults_to_dot_neta_in_the_user_home(monkeypatch):
    monkeypatch.delenv("NETA_HOME", raising=False)
    assert neta.neta_home() == Path.home() / ".neta"


def test_neta_home_expands_a_tilde_so_every_user_of_it_agrees(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("NETA_HOME", "~/elsewhere")
    assert neta.neta_home() == tmp_path / "elsewhere"


def test_sessions_memory_and_skills_live_under_the_same_home(monkeypatch, tmp_path):
    from neta.hosting.config import HostConfig
    from neta.hosting.hub import SessionHub
    from neta_memory.sqlite_store import SQLiteMemoryStore
    from neta_skills.library import SkillLibrary

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("NETA_HOME", "~/nh")
    home = tmp_path / "nh"
    hub = SessionHub(
        HostConfig(provider_factory=lambda: neta.ScriptedProvider([]), workspace=tmp_path)
    )
    try:
        assert hub.store.path == home / "neta.db"
    finally:
        hub.store.close()
    assert SQLiteMemoryStore.for_scope("default").path == home / "memory" / "default.db"
    library = SkillLibrary.for_session(neta.SessionContext(workspace=tmp_path))
    assert library.directories[0].path == home / "skills"
