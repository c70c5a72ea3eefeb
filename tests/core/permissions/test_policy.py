"""The policy: the first matching rule decides, else the mode by the tool's effect."""

import itertools

import pytest

from neta.permissions import (
    DEFAULTS,
    MODES,
    Policy,
    RuleSet,
    effect_of,
    flag_rules,
    parse_rule,
    rules_from_mapping,
)


def call(policy, tool="bash", *, toolset="base", effect="runs", workspace, **arguments):
    return policy.decide(
        tool, toolset=toolset, effect=effect, arguments=arguments, workspace=workspace
    )


@pytest.mark.parametrize(
    ("mode", "reads", "writes", "runs"),
    [
        ("ask", "allow", "ask", "ask"),
        ("auto-edit", "allow", "allow", "ask"),
        ("auto", "allow", "allow", "allow"),
        ("read-only", "allow", "deny", "deny"),
    ],
)
def test_with_no_rule_the_mode_decides_by_the_effect(tmp_path, mode, reads, writes, runs):
    policy = Policy(mode=mode)
    got = [call(policy, "t", effect=e, workspace=tmp_path).action for e in DEFAULTS[mode]]
    assert got == [reads, writes, runs]


def test_the_mode_table_covers_every_mode_and_widens_in_order():
    order = {"deny": 0, "ask": 1, "allow": 2}
    assert set(DEFAULTS) == set(MODES)
    for narrower, wider in itertools.pairwise(MODES):
        for effect in ("reads", "writes", "runs"):
            assert order[DEFAULTS[narrower][effect]] <= order[DEFAULTS[wider][effect]]


def test_the_default_mode_asks_before_commands_and_edits(tmp_path):
    decision = call(Policy(), command="ls", workspace=tmp_path)
    assert decision.action == "ask"
    assert decision.rule is None
    assert decision.reason == "no rule decides it; mode 'ask' asks before a tool that runs"


def test_the_first_matching_rule_wins(tmp_path):
    rules = (
        parse_rule("bash(git push*)", "ask", "first"),
        parse_rule("bash(git *)", "allow", "second"),
        parse_rule("bash", "deny", "third"),
    )
    policy = Policy(rules=rules)
    assert call(policy, command="git push", workspace=tmp_path).rule.source == "first"
    assert call(policy, command="git log", workspace=tmp_path).rule.source == "second"
    assert call(policy, command="ls", workspace=tmp_path).rule.source == "third"


def test_within_one_source_deny_then_ask_then_allow_whatever_the_order_written(tmp_path):
    rules = flag_rules(allow=["bash(git *)"], ask=["bash(git commit*)"], deny=["bash(git push*)"])
    policy = Policy.from_sources([rules])
    assert call(policy, command="git push", workspace=tmp_path).action == "deny"
    assert call(policy, command="git commit -m x", workspace=tmp_path).action == "ask"
    assert call(policy, command="git status", workspace=tmp_path).action == "allow"


def test_an_earlier_source_wins_over_a_later_one(tmp_path):
    cli = flag_rules(allow=["bash(git push*)"])
    home = rules_from_mapping({"deny": ["bash(git push*)"]}, "NETA_HOME/permissions.toml")
    decision = call(Policy.from_sources([cli, home]), command="git push", workspace=tmp_path)
    assert decision.action == "allow"
    assert decision.reason == "allowed by bash(git push*) (--allow)"


def test_a_deny_rule_after_a_partial_allow_still_denies_the_line(tmp_path):
    rules = (parse_rule("bash(git *)", "allow", "first"), parse_rule("bash(rm *)", "deny", "later"))
    policy = Policy(rules=rules)
    decision = call(policy, command="git status && rm -rf ~", workspace=tmp_path)
    assert decision.action == "deny"
    assert decision.reason == "denied by bash(rm *) (later)"


def test_the_first_source_that_sets_a_mode_wins():
    sources = [RuleSet(), RuleSet(mode="auto-edit"), RuleSet(mode="read-only")]
    assert Policy.from_sources(sources).mode == "auto-edit"
    assert Policy.from_sources([RuleSet()]).mode == "ask"
    assert Policy.from_sources([RuleSet()], mode="auto").mode == "auto"


def test_the_policy_keeps_what_its_sources_ignored():
    sources = [RuleSet(ignored=("a",)), RuleSet(ignored=("b",))]
    assert Policy.from_sources(sources).ignored == ("a", "b")


def test_read_only_denies_what_writes_or_runs_whatever_a_rule_allows(tmp_path):
    policy = Policy.from_sources(
        [flag_rules(mode="read-only", allow=["bash(pytest *)", "write_file"], ask=["read_file"])]
    )
    decision = call(policy, command="pytest", workspace=tmp_path)
    assert decision.action == "deny"
    assert "mode 'read-only' denies a tool that runs" in decision.reason
    assert call(policy, "write_file", effect="writes", path="a", workspace=tmp_path).action == (
        "deny"
    )
    assert call(policy, "read_file", effect="reads", path="a", workspace=tmp_path).action == "ask"


def test_auto_mode_still_honours_deny_and_ask_rules(tmp_path):
    policy = Policy.from_sources([flag_rules(mode="auto", ask=["bash(git push*)"])])
    assert call(policy, command="git push", workspace=tmp_path).action == "ask"
    assert call(policy, command="make", workspace=tmp_path).action == "allow"


def test_a_rule_without_a_pattern_covers_every_call_of_the_tool(tmp_path):
    policy = Policy.from_sources([flag_rules(deny=["write_file"])])
    decision = call(policy, "write_file", effect="writes", path="a", workspace=tmp_path)
    assert decision.action == "deny"
    assert call(policy, "patch", effect="writes", path="a", workspace=tmp_path).action == "ask"


class TestToolNames:
    @pytest.mark.parametrize(
        ("rule", "tool", "toolset", "matches"),
        [
            ("toolset:base", "bash", "base", True),
            ("toolset:base", "todo", "planning", False),
            ("mcp-github", "create_issue", "mcp-github", True),
            ("mcp-github", "create_issue", "mcp-gitlab", False),
            ("mcp-*", "anything", "mcp-time", True),
            ("mcp-*", "bash", "base", False),
            ("mcp-github.create_*", "create_issue", "mcp-github", True),
            ("mcp-github.create_*", "delete_repo", "mcp-github", False),
            ("memory_*", "memory_save", "memory", True),
            ("bash", "bash", "base", True),
            ("bash", "bash2", "base", False),
            ("toolset:base", "bash", None, False),
        ],
    )
    def test_a_rule_names_tools_by_name_toolset_or_mcp_server(
        self, tmp_path, rule, tool, toolset, matches
    ):
        policy = Policy.from_sources([flag_rules(deny=[rule])])
        decision = call(policy, tool, toolset=toolset, effect="reads", workspace=tmp_path)
        assert (decision.action == "deny") is matches

    def test_a_pattern_on_a_tool_without_a_path_or_command_denies_in_doubt(self, tmp_path):
        policy = Policy.from_sources([flag_rules(deny=["mcp-github(x)"])])
        decision = call(policy, "create_issue", toolset="mcp-github", workspace=tmp_path)
        assert decision.action == "deny"


class TestEffects:
    def test_a_declared_effect_is_kept(self):
        assert effect_of("writes") == "writes"
        assert effect_of("reads", read_only_hint=False) == "reads"

    def test_an_undeclared_effect_counts_as_running_something(self):
        assert effect_of() == "runs"
        assert effect_of(read_only_hint=False) == "runs"

    def test_an_mcp_read_only_hint_makes_a_tool_one_that_reads(self):
        assert effect_of(read_only_hint=True) == "reads"


class TestCheckTools:
    def test_a_rule_naming_an_unknown_tool_warns_with_close_names(self):
        policy = Policy.from_sources([flag_rules(allow=["bahs(ls)", "bash(ls)"])])
        (warning,) = policy.check_tools(["bash", "read_file", "write_file"])
        assert (
            warning == "--allow: rule 'bahs(ls)' names no known tool 'bahs'; did you mean 'bash'?"
        )

    def test_a_rule_naming_a_tool_nothing_resembles_suggests_a_missing_plugin(self):
        policy = Policy.from_sources([flag_rules(deny=["zzzzqqq"])])
        (warning,) = policy.check_tools(["bash"])
        assert warning.endswith("names no known tool 'zzzzqqq'; a plugin that is not installed?")

    def test_a_rule_naming_an_unknown_toolset_warns_when_toolsets_are_given(self):
        policy = Policy.from_sources([flag_rules(deny=["toolset:planing", "mcp-*"])])
        assert policy.check_tools(["bash"]) == []
        (warning,) = policy.check_tools(["bash"], ["base", "planning", "mcp-time"])
        assert "names no known toolset 'planing'; did you mean 'planning'?" in warning

    def test_a_wildcard_that_matches_a_known_tool_gives_no_warning(self):
        policy = Policy.from_sources([flag_rules(allow=["memory_*", "*"])])
        assert policy.check_tools(["memory_save"]) == []

    def test_unknown_tools_are_no_error_when_deciding(self, tmp_path):
        policy = Policy.from_sources([flag_rules(deny=["not_installed"])])
        assert call(policy, "bash", command="ls", workspace=tmp_path).action == "ask"
