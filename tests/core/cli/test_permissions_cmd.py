"""``neta permissions``: the mode and rules in force, their sources, and "allow always" answers."""

import json
import os
from pathlib import Path

import pytest

from neta.permissions import ApprovalStore
from tests.core.cli.cli_runner import neta_in_process
from tests.services import neta_environ


def neta(*args):
    return neta_in_process(*args, env=neta_environ())


def home() -> Path:
    return Path(os.environ["NETA_HOME"])


def write_rules(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def listed(workspace: Path) -> dict:
    done = neta("permissions", "list", "--json", "-w", str(workspace))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_permissions_with_no_rules_shows_the_default_mode(tmp_path):
    done = neta("permissions", "-w", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "mode: ask (the default)" in done.stdout
    assert "no rules" in done.stdout
    data = listed(tmp_path)
    assert (data["mode"], data["mode_source"], data["rules"]) == ("ask", None, [])


def test_permissions_lists_every_rule_with_its_file_and_line_in_the_order_tried(tmp_path):
    write_rules(
        home() / "permissions.toml",
        'mode = "auto-edit"\nallow = ["bash(pytest *)"]\ndeny = ["bash(rm *)"]\n',
    )
    ApprovalStore().add(tmp_path, "bash(make test)")
    data = listed(tmp_path)
    assert (data["mode"], data["mode_source"]) == ("auto-edit", "NETA_HOME/permissions.toml")
    assert data["rules"] == [
        {"action": "deny", "rule": "bash(rm *)", "source": "NETA_HOME/permissions.toml:3"},
        {"action": "allow", "rule": "bash(pytest *)", "source": "NETA_HOME/permissions.toml:2"},
        {"action": "allow", "rule": "bash(make test)", "source": "NETA_HOME/approvals.json"},
    ]
    text = neta("permissions", "-w", str(tmp_path)).stdout
    assert "mode: auto-edit (from NETA_HOME/permissions.toml)" in text
    rows = [line.split() for line in text.splitlines() if line.split()[:1] in (["deny"], ["allow"])]
    assert rows == [
        ["deny", "bash(rm", "*)", "NETA_HOME/permissions.toml:3"],
        ["allow", "bash(pytest", "*)", "NETA_HOME/permissions.toml:2"],
        ["allow", "bash(make", "test)", "NETA_HOME/approvals.json"],
    ]


def test_permissions_of_an_untrusted_workspace_lists_its_allow_rules_as_ignored(tmp_path):
    write_rules(
        tmp_path / ".neta" / "permissions.toml", 'allow = ["bash"]\ndeny = ["write_file(.env)"]\n'
    )
    data = listed(tmp_path)
    assert data["trusted"] is False
    assert data["rules"] == [
        {"action": "deny", "rule": "write_file(.env)", "source": ".neta/permissions.toml:2"}
    ]
    [ignored] = data["ignored"]
    assert ignored.startswith(".neta/permissions.toml:1: allow 'bash' ignored: the workspace is")
    text = neta("permissions", "-w", str(tmp_path)).stdout
    assert "not trusted" in text
    assert "ignored:\n  .neta/permissions.toml:1: allow 'bash'" in text
    assert neta("trust", str(tmp_path)).returncode == 0
    trusted = listed(tmp_path)
    assert trusted["ignored"] == []
    assert {"action": "allow", "rule": "bash", "source": ".neta/permissions.toml:1"} in (
        trusted["rules"]
    )


def test_permissions_warns_of_a_rule_naming_no_known_tool_suggesting_a_close_one(tmp_path):
    write_rules(home() / "permissions.toml", 'deny = ["bsh(rm *)", "toolset:bas"]\n')
    data = listed(tmp_path)
    assert data["warnings"] == [
        "NETA_HOME/permissions.toml:1: rule 'bsh(rm *)' names no known tool 'bsh'; "
        "did you mean 'bash'?",
        "NETA_HOME/permissions.toml:1: rule 'toolset:bas' names no known toolset 'bas'; "
        "did you mean 'base'?",
    ]
    assert "warnings:\n  NETA_HOME/permissions.toml:1: rule 'bsh(rm *)'" in (
        neta("permissions", "-w", str(tmp_path)).stdout
    )


@pytest.mark.parametrize("where", ["home", "workspace"])
def test_permissions_with_a_broken_rules_file_names_the_file_and_line_and_exits_2(tmp_path, where):
    folder = home() if where == "home" else tmp_path / ".neta"
    write_rules(folder / "permissions.toml", 'mode = "ask"\n\nask = ["git push", "bash(x"]\n')
    done = neta("permissions", "-w", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.startswith(
        f"Error: {folder / 'permissions.toml'}:3: invalid rule 'git push'"
    ), done.stderr
    assert done.stdout == ""


def test_permissions_with_an_unknown_mode_in_a_rules_file_names_it_and_exits_2(tmp_path):
    write_rules(home() / "permissions.toml", 'allow = []\nmode = "yolo"\n')
    done = neta("permissions", "-w", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.startswith(f"Error: {home() / 'permissions.toml'}:2: unknown mode 'yolo'")


def test_permissions_remove_forgets_an_allow_always_answer(tmp_path):
    ApprovalStore().add(tmp_path, "bash(make test)")
    done = neta("permissions", "remove", "bash(make test)", "-w", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Forgot 'bash(make test)' for ")
    assert ApprovalStore().entries(tmp_path) == []


def test_permissions_remove_of_a_rule_no_answer_kept_exits_1_naming_those_kept(tmp_path):
    ApprovalStore().add(tmp_path, "bash(make test)")
    done = neta("permissions", "remove", "bash(make)", "-w", str(tmp_path))
    assert done.returncode == 1
    assert done.stderr.startswith("Error: 'bash(make)' is no 'allow always' answer for ")
    assert "(those kept: 'bash(make test)')" in done.stderr
    assert ApprovalStore().entries(tmp_path) == ["bash(make test)"]


def test_permissions_check_says_what_a_call_gets_and_which_rule_decides(tmp_path):
    write_rules(home() / "permissions.toml", 'allow = ["bash(pytest *)"]\n')
    allowed = neta(
        "permissions", "check", "bash", "--arg", "command=pytest -x", "-w", str(tmp_path)
    )
    assert allowed.returncode == 0, allowed.stderr
    assert allowed.stdout == "allow: allowed by bash(pytest *) (NETA_HOME/permissions.toml:1)\n"
    asked = neta("permissions", "check", "bash", "--arg", "command=ls", "-w", str(tmp_path))
    assert asked.stdout.startswith("ask: no rule decides it; mode 'ask' asks before a tool")
    checked = neta("permissions", "check", "read_file", "--arg", "path=a.txt", "--json",
                   "-w", str(tmp_path))  # fmt: skip
    read = json.loads(checked.stdout)
    assert (read["action"], read["rules"]) == ("allow", [])


def test_permissions_check_of_an_unknown_tool_suggests_a_close_name_and_exits_2(tmp_path):
    done = neta("permissions", "check", "bsh", "-w", str(tmp_path))
    assert done.returncode == 2
    assert "did you mean 'bash'?" in done.stderr
