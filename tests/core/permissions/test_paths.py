"""Path rules for file tools: globs relative to the workspace, matched after resolution."""

import pytest

from neta.permissions import Policy, flag_rules


@pytest.fixture
def workspace(tmp_path):
    root = tmp_path / "ws"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "docs").mkdir()
    return root


@pytest.fixture
def outside(tmp_path):
    folder = tmp_path / "outside"
    folder.mkdir()
    return folder


@pytest.fixture
def decide(workspace):
    def decide(path, *, allow=(), ask=(), deny=(), tool="write_file", mode="ask", root=None):
        sources = [flag_rules(mode=mode, allow=allow, ask=ask, deny=deny)]
        return Policy.from_sources(sources).decide(
            tool,
            toolset="base",
            effect="writes",
            arguments={"path": path, "content": "x"},
            workspace=root or workspace,
        )

    return decide


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("src/**", "src/a.py", "allow"),
        ("src/**", "src/pkg/deep/a.py", "allow"),
        ("src/**", "src", "allow"),
        ("src/**", "srcs/a.py", "ask"),
        ("src/**", "docs/src/a.py", "ask"),
        ("src/*.py", "src/a.py", "allow"),
        ("src/*.py", "src/pkg/a.py", "ask"),
        ("src/**/*.py", "src/pkg/a.py", "allow"),
        ("*.md", "README.md", "allow"),
        ("*.md", "docs/guide.md", "allow"),
        ("*.md", "README.txt", "ask"),
        ("/*.md", "docs/guide.md", "ask"),
        ("/*.md", "README.md", "allow"),
        ("docs", "docs/guide.md", "allow"),
        ("?.txt", "a.txt", "allow"),
        ("?.txt", "ab.txt", "ask"),
        (r"\*.txt", "a.txt", "ask"),
        ("**", "anything/at/all", "allow"),
    ],
)
def test_a_path_pattern_is_a_gitignore_like_glob(decide, pattern, path, expected):
    assert decide(path, allow=[f"write_file({pattern})"]).action == expected


@pytest.mark.parametrize("path", ["./src/a.py", "src/../src/a.py", "docs/../src/a.py"])
def test_dots_are_collapsed_before_matching(decide, path):
    assert decide(path, allow=["write_file(src/**)"]).action == "allow"


def test_dot_dot_into_another_folder_is_matched_where_it_leads(decide):
    assert decide("src/../docs/x.md", allow=["write_file(src/**)"]).action == "ask"


@pytest.mark.parametrize("path", ["../outside/x", "src/../../outside/x", "/etc/passwd"])
def test_a_path_out_of_the_workspace_is_approved_by_no_allow_rule(decide, path):
    decision = decide(path, allow=["write_file(**)"])
    assert decision.action == "ask"
    assert "leads outside the workspace" in decision.reason


@pytest.mark.parametrize("path", ["../outside/x", "/etc/passwd", "bad\0name"])
def test_a_path_a_deny_rule_cannot_place_in_the_workspace_is_denied(decide, path):
    assert decide(path, deny=["write_file(.env)"], mode="auto").action == "deny"


def test_an_absolute_path_inside_the_workspace_is_matched_relative_to_it(decide, workspace):
    assert decide(str(workspace / "src/a.py"), allow=["write_file(src/**)"]).action == "allow"


def test_a_symlink_from_inside_to_outside_is_approved_by_no_allow_rule(decide, workspace, outside):
    (workspace / "src" / "link").symlink_to(outside)
    decision = decide("src/link/x.py", allow=["write_file(src/**)"])
    assert decision.action == "ask"


def test_a_symlink_to_a_file_elsewhere_in_the_workspace_is_matched_where_it_leads(
    decide, workspace
):
    (workspace / "docs" / "notes.md").write_text("x")
    (workspace / "src" / "notes.md").symlink_to(workspace / "docs" / "notes.md")
    assert decide("src/notes.md", allow=["write_file(src/**)"]).action == "ask"
    assert decide("docs/notes.md", allow=["write_file(docs/**)"]).action == "allow"


def test_a_symlinked_name_meets_a_deny_rule_by_its_own_name_too(decide, workspace):
    (workspace / "config").write_text("SECRET=1")
    (workspace / ".env").symlink_to(workspace / "config")
    assert decide(".env", deny=["write_file(.env)"], mode="auto").action == "deny"
    assert decide("config", deny=["write_file(config)"], mode="auto").action == "deny"


def test_a_path_from_outside_through_a_symlink_into_the_workspace_is_matched_inside(
    decide, workspace, outside
):
    (outside / "into").symlink_to(workspace)
    path = str(outside / "into" / "src" / "a.py")
    assert decide(path, allow=["write_file(src/**)"]).action == "allow"


def test_a_workspace_given_through_a_symlink_is_the_same_workspace(decide, workspace, tmp_path):
    alias = tmp_path / "alias"
    alias.symlink_to(workspace)
    assert decide("src/a.py", allow=["write_file(src/**)"], root=alias).action == "allow"
    assert decide(str(alias / "src/a.py"), allow=["write_file(src/**)"], root=alias).action == (
        "allow"
    )


def test_a_path_through_a_missing_folder_is_matched_as_written(decide):
    assert decide("src/new/deep/file.py", allow=["write_file(src/**)"]).action == "allow"


@pytest.mark.parametrize("tool", ["read_file", "list_dir", "patch", "write_file"])
def test_every_file_tool_is_matched_by_its_path_argument(decide, tool):
    assert decide("secrets/key", tool=tool, deny=[f"{tool}(secrets)"]).action == "deny"


def test_a_call_without_a_path_meets_deny_rules_and_no_allow_rule(workspace):
    policy = Policy.from_sources([flag_rules(deny=["list_dir(secrets)"])])
    decision = policy.decide(
        "list_dir", toolset="base", effect="reads", arguments={}, workspace=workspace
    )
    assert decision.action == "deny"
    policy = Policy.from_sources([flag_rules(allow=["write_file(**)"])])
    decision = policy.decide(
        "write_file", toolset="base", effect="writes", arguments={}, workspace=workspace
    )
    assert decision.action == "ask"
    assert "no argument its pattern can be matched against" in decision.reason
