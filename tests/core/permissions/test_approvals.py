"""Rules approved "always" per workspace in NETA_HOME, and the rules a call needs."""

import json
import os
import stat

import pytest

from neta.errors import ConfigError
from neta.permissions import ApprovalStore, Policy, allow_rules_for


@pytest.fixture
def home(tmp_path):
    return tmp_path / "home"


@pytest.fixture
def workspace(tmp_path):
    folder = tmp_path / "ws"
    (folder / "src").mkdir(parents=True)
    return folder


def test_an_added_rule_is_listed_for_its_workspace_only(home, workspace, tmp_path):
    store = ApprovalStore(home)
    assert store.add(workspace, "bash(pytest *)")
    assert store.entries(workspace) == ["bash(pytest *)"]
    assert store.entries(tmp_path) == []


def test_adding_a_rule_twice_keeps_one(home, workspace):
    store = ApprovalStore(home)
    assert store.add(workspace, "bash(pytest *)")
    assert not store.add(workspace, "  bash(pytest *) ")
    assert store.entries(workspace) == ["bash(pytest *)"]


def test_a_workspace_is_known_by_its_real_path(home, workspace, tmp_path):
    alias = tmp_path / "alias"
    alias.symlink_to(workspace)
    store = ApprovalStore(home)
    store.add(alias, "read_file")
    assert store.entries(workspace) == ["read_file"]
    data = json.loads((home / "approvals.json").read_text())
    assert list(data["workspaces"]) == [os.path.realpath(workspace)]


def test_a_removed_rule_is_gone_and_its_workspace_with_it(home, workspace):
    store = ApprovalStore(home)
    store.add(workspace, "read_file")
    assert store.remove(workspace, "read_file")
    assert not store.remove(workspace, "read_file")
    assert store.entries(workspace) == []
    assert json.loads((home / "approvals.json").read_text()) == {"workspaces": {}}


def test_removing_from_an_empty_store_writes_nothing(home, workspace):
    assert not ApprovalStore(home).remove(workspace, "read_file")
    assert not (home / "approvals.json").exists()


def test_the_file_is_readable_by_its_owner_only_and_replaced_whole(home, workspace):
    store = ApprovalStore(home)
    store.add(workspace, "read_file")
    store.add(workspace, "bash(make)")
    assert stat.S_IMODE((home / "approvals.json").stat().st_mode) == 0o600
    assert [p.name for p in home.iterdir()] == ["approvals.json"]


def test_a_rule_that_does_not_parse_is_not_stored(home, workspace):
    with pytest.raises(ConfigError, match="invalid rule"):
        ApprovalStore(home).add(workspace, "bash(")
    assert not (home / "approvals.json").exists()


def test_stored_rules_are_allow_rules_naming_the_store(home, workspace):
    store = ApprovalStore(home)
    store.add(workspace, "bash(pytest *)")
    (rule,) = store.rules(workspace).rules
    assert (rule.action, rule.source) == ("allow", "NETA_HOME/approvals.json")


@pytest.mark.parametrize(
    "content", ["not json", "[]", '{"workspaces": []}', '{"workspaces": {"/x": {"allow": [1]}}}']
)
def test_a_damaged_store_is_a_config_error_naming_it(home, workspace, content):
    home.mkdir()
    (home / "approvals.json").write_text(content)
    with pytest.raises(ConfigError, match=r"approvals\.json"):
        ApprovalStore(home).entries(workspace)


def test_a_stored_entry_that_no_longer_parses_is_named(home, workspace):
    home.mkdir()
    key = os.path.realpath(workspace)
    (home / "approvals.json").write_text(json.dumps({"workspaces": {key: {"allow": ["a b"]}}}))
    with pytest.raises(ConfigError, match=r"approvals\.json: .*invalid rule 'a b'"):
        ApprovalStore(home).rules(workspace)


class TestAllowRulesFor:
    def decide(self, rules, tool, arguments, workspace, effect="runs"):
        policy = Policy(rules=tuple(rules))
        return policy.decide(tool, effect=effect, arguments=arguments, workspace=workspace).action

    def approve(self, home, workspace, tool, arguments):
        store = ApprovalStore(home)
        for text in allow_rules_for(tool, arguments, workspace):
            store.add(workspace, text)
        return store.rules(workspace).rules

    def test_a_line_gives_one_rule_per_command_that_allows_it_again(self, home, workspace):
        arguments = {"command": "cd src &&  pytest -x 'a b'"}
        assert allow_rules_for("bash", arguments, workspace) == (
            "bash(cd src)",
            "bash(pytest -x a b)",
        )
        rules = self.approve(home, workspace, "bash", arguments)
        assert self.decide(rules, "bash", arguments, workspace) == "allow"
        assert self.decide(rules, "bash", {"command": "pytest -x a b c"}, workspace) == "ask"

    def test_stars_of_the_command_are_taken_literally(self, home, workspace):
        arguments = {"command": "rm *.pyc"}
        assert allow_rules_for("bash", arguments, workspace) == (r"bash(rm \*.pyc)",)
        rules = self.approve(home, workspace, "bash", arguments)
        assert self.decide(rules, "bash", arguments, workspace) == "allow"
        assert self.decide(rules, "bash", {"command": "rm -rf ~ x.pyc"}, workspace) == "ask"

    @pytest.mark.parametrize(
        "command", ["echo $(id)", "bash -c ls", "echo hi > /etc/x", "> out", "", "eval ls"]
    )
    def test_a_line_no_allow_rule_can_approve_gives_none(self, workspace, command):
        assert allow_rules_for("bash", {"command": command}, workspace) == ()

    def test_a_file_call_gives_its_real_path_from_the_root(self, home, workspace):
        arguments = {"path": "src/../src/a[1].py"}
        assert allow_rules_for("write_file", arguments, workspace) == ("write_file(/src/a[1].py)",)
        rules = self.approve(home, workspace, "write_file", arguments)
        assert self.decide(rules, "write_file", arguments, workspace, "writes") == "allow"
        other = {"path": "lib/src/a[1].py"}
        assert self.decide(rules, "write_file", other, workspace, "writes") == "ask"

    def test_a_path_outside_the_workspace_gives_none(self, workspace):
        assert allow_rules_for("write_file", {"path": "../x"}, workspace) == ()

    def test_another_tool_gives_its_name(self, workspace):
        assert allow_rules_for("create_issue", {"title": "x"}, workspace) == ("create_issue",)
