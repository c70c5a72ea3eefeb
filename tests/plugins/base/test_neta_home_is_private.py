"""The file tools never reach NETA_HOME, even where it lies inside the workspace."""

import pytest

import neta

SECRET = "conversation secrets"


@pytest.fixture
def inner_home(session, monkeypatch):
    home = session.workspace / "a" / "b" / "nh"
    home.mkdir(parents=True)
    (home / "neta.db").write_text(SECRET)
    monkeypatch.setenv("NETA_HOME", str(home))
    return home


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("read_file", {"path": "a/b/nh/neta.db"}),
        ("read_file", {"path": "a/x/../b/nh/neta.db"}),
        ("write_file", {"path": "a/b/nh/mcp.json", "content": '{"mcpServers": {}}'}),
        ("list_dir", {"path": "a/b/nh"}),
        ("patch", {"path": "a/b/nh/neta.db", "old_string": SECRET, "new_string": "x"}),
    ],
)
def test_a_file_tool_refuses_neta_home_inside_the_workspace(call, inner_home, tool, args):
    (inner_home.parent.parent / "x").mkdir(exist_ok=True)
    with pytest.raises(neta.ToolError, match="NETA_HOME"):
        call(tool, **args)
    assert (inner_home / "neta.db").read_text() == SECRET
    assert not (inner_home / "mcp.json").exists()


def test_a_symlink_to_neta_home_is_refused_too(call, inner_home, session):
    (session.workspace / "link").symlink_to(inner_home)
    with pytest.raises(neta.ToolError, match="NETA_HOME"):
        call("read_file", path="link/neta.db")


def test_the_rest_of_the_workspace_is_as_before(call, inner_home, session):
    (session.workspace / "a" / "notes.txt").write_text("mine\n")
    assert "mine" in call("read_file", path="a/notes.txt").content
    listing = call("list_dir", path="a/b").content
    assert "nh" in listing  # seen, not entered
