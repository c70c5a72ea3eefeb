"""Paths are confined to the workspace root: ``..``, absolute paths and symlinks included."""

import pytest

import neta
from neta import resolve_in_workspace


@pytest.fixture
def root(tmp_path):
    workspace = tmp_path / "workspace"
    (workspace / "src").mkdir(parents=True)
    (workspace / "src" / "app.py").write_text("print('hi')\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("secret\n")
    return workspace


def test_relative_path_resolves_under_the_root(root):
    assert resolve_in_workspace(root, "src/app.py") == root / "src" / "app.py"


def test_dot_resolves_to_the_root_itself(root):
    assert resolve_in_workspace(root, ".") == root


def test_dotdot_that_stays_inside_is_allowed(root):
    assert resolve_in_workspace(root, "src/../src/app.py") == root / "src" / "app.py"


def test_dotdot_escaping_the_root_is_refused_naming_path_and_root(root):
    with pytest.raises(neta.WorkspaceError) as caught:
        resolve_in_workspace(root, "../outside/secret.txt")
    message = str(caught.value)
    assert "'../outside/secret.txt'" in message
    assert str(root) in message
    assert caught.value.path == "../outside/secret.txt"
    assert caught.value.root == str(root)


def test_workspace_error_is_a_tool_error_the_model_reads(root):
    with pytest.raises(neta.ToolError):
        resolve_in_workspace(root, "..")


def test_absolute_path_outside_is_refused(root, tmp_path):
    with pytest.raises(neta.WorkspaceError):
        resolve_in_workspace(root, tmp_path / "outside" / "secret.txt")


def test_absolute_path_inside_is_allowed(root):
    assert resolve_in_workspace(root, str(root / "src" / "app.py")) == root / "src" / "app.py"


def test_not_yet_existing_file_inside_is_allowed(root):
    assert resolve_in_workspace(root, "new/dir/file.txt") == root / "new" / "dir" / "file.txt"


def test_symlinked_directory_escaping_the_root_is_refused(root, tmp_path):
    (root / "escape").symlink_to(tmp_path / "outside", target_is_directory=True)
    with pytest.raises(neta.WorkspaceError) as caught:
        resolve_in_workspace(root, "escape/secret.txt")
    assert caught.value.resolved == str(tmp_path / "outside" / "secret.txt")


def test_new_file_under_an_escaping_symlink_is_refused(root, tmp_path):
    (root / "escape").symlink_to(tmp_path / "outside", target_is_directory=True)
    with pytest.raises(neta.WorkspaceError):
        resolve_in_workspace(root, "escape/not-yet/created.txt")


def test_symlinked_file_escaping_the_root_is_refused(root, tmp_path):
    (root / "link.txt").symlink_to(tmp_path / "outside" / "secret.txt")
    with pytest.raises(neta.WorkspaceError):
        resolve_in_workspace(root, "link.txt")


def test_dangling_symlink_pointing_outside_is_refused(root, tmp_path):
    (root / "dangling").symlink_to(tmp_path / "outside" / "missing.txt")
    with pytest.raises(neta.WorkspaceError):
        resolve_in_workspace(root, "dangling")


def test_symlink_staying_inside_is_allowed_and_resolved_to_its_target(root):
    (root / "alias.py").symlink_to(root / "src" / "app.py")
    assert resolve_in_workspace(root, "alias.py") == root / "src" / "app.py"


def test_root_given_through_a_symlink_still_confines(tmp_path, root):
    via_link = tmp_path / "ws-link"
    via_link.symlink_to(root, target_is_directory=True)
    assert resolve_in_workspace(via_link, "src/app.py") == root / "src" / "app.py"
    with pytest.raises(neta.WorkspaceError):
        resolve_in_workspace(via_link, "../outside/secret.txt")


def test_path_with_a_nul_byte_is_a_tool_error(root):
    with pytest.raises(neta.ToolError, match="invalid path"):
        resolve_in_workspace(root, "a\0b")


def test_symlink_loop_is_a_tool_error_not_a_crash(root):
    (root / "loop").symlink_to(root / "loop")
    with pytest.raises(neta.ToolError, match="symbolic links"):
        resolve_in_workspace(root, "loop")


# --- the paths module: descriptor-pinned resolution, regular files only, bounded reads ---


def test_symlink_inside_pointing_inside_is_walked_not_left_to_the_kernel(root):
    (root / "alias").symlink_to("src", target_is_directory=True)
    (root / "abs-alias").symlink_to(root / "src", target_is_directory=True)
    assert neta.read_text("alias/app.py", root=root).text == "print('hi')\n"
    assert neta.read_text("abs-alias/app.py", root=root).text == "print('hi')\n"


def test_read_text_with_root_refuses_a_symlink_out(root, tmp_path):
    (root / "escape").symlink_to(tmp_path / "outside", target_is_directory=True)
    with pytest.raises(neta.WorkspaceError):
        neta.read_text("escape/secret.txt", root=root)


def test_atomic_write_with_root_refuses_a_symlink_out_and_writes_nothing(root, tmp_path):
    (root / "escape").symlink_to(tmp_path / "outside", target_is_directory=True)
    with pytest.raises(neta.WorkspaceError):
        neta.atomic_write("escape/new.txt", "x", root=root, make_parents=True)
    assert sorted(p.name for p in (tmp_path / "outside").iterdir()) == ["secret.txt"]


def test_symlink_loop_is_a_tool_error_naming_the_loop(root):
    (root / "loop").symlink_to(root / "loop")
    with pytest.raises(neta.ToolError, match="symbolic links"):
        neta.read_text("loop/x", root=root)


def test_atomic_write_through_a_symlink_inside_replaces_its_target_and_keeps_the_link(root):
    (root / "alias.py").symlink_to("src/app.py")
    neta.atomic_write("alias.py", "print('new')\n", root=root)
    assert (root / "alias.py").is_symlink()
    assert (root / "src" / "app.py").read_text() == "print('new')\n"


def test_nested_root_leading_out_of_its_outer_root_is_refused(root, tmp_path):
    (root / "linked").symlink_to(tmp_path / "outside", target_is_directory=True)
    inner = neta.PinnedRoot(root / "linked", within=neta.PinnedRoot(root))
    with pytest.raises(neta.WorkspaceError):
        neta.read_text("secret.txt", root=inner)


def test_printable_escapes_control_and_format_characters_only():
    assert neta.printable("plain name.txt") == "plain name.txt"
    assert neta.printable("a\nb\tc\x1b[2J\u202e") == "a\\nb\\tc\\x1b[2J\\u202e"
