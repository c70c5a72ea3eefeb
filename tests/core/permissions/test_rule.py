"""Rule syntax: TOOL or TOOL(PATTERN), as written on the command line or in a file."""

import pytest

from neta.errors import ConfigError
from neta.permissions import Rule, parse_rule


@pytest.mark.parametrize(
    ("text", "tool", "toolset", "argument"),
    [
        ("bash", "bash", "*", None),
        ("bash(pytest *)", "bash", "*", "pytest *"),
        ("  write_file(src/**)  ", "write_file", "*", "src/**"),
        ("bash(echo (a) b)", "bash", "*", "echo (a) b"),
        ("toolset:base", "*", "base", None),
        ("mcp-github", "*", "mcp-github", None),
        ("mcp-*", "*", "mcp-*", None),
        ("mcp-github.create_issue", "create_issue", "mcp-github", None),
        ("base.bash(ls)", "bash", "base", "ls"),
        ("*", "*", "*", None),
    ],
)
def test_a_rule_names_a_tool_or_toolset_and_maybe_a_pattern(text, tool, toolset, argument):
    rule = parse_rule(text, "allow", "--allow")
    assert (rule.tool, rule.toolset, rule.argument) == (tool, toolset, argument)
    assert rule.text == text.strip()


def test_a_rule_keeps_its_action_and_source():
    rule = parse_rule("bash(rm *)", "deny", "NETA_HOME/permissions.toml:3")
    assert rule == Rule(
        "deny", "bash(rm *)", "NETA_HOME/permissions.toml:3", tool="bash", argument="rm *"
    )
    assert str(rule) == "bash(rm *) (NETA_HOME/permissions.toml:3)"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "no tool named"),
        ("   ", "no tool named"),
        ("(ls)", "no tool named"),
        ("bash(pytest *", "the ')' closing its pattern is missing"),
        ("bash)", "a ')' with no '(' before it"),
        ("bash()", "an empty pattern; write 'bash' for every call"),
        ("bash(  )", "an empty pattern"),
        ("ba sh", "'ba sh' is no tool or toolset name"),
        ("toolset:", "'' is no tool or toolset name"),
        ("mcp-github.", "'' is no tool or toolset name"),
        ("a:b", "'a:b' is no tool or toolset name"),
        ("x" * 65, "is no tool or toolset name"),
    ],
)
def test_text_that_is_no_rule_is_a_config_error_naming_its_source(text, why):
    with pytest.raises(ConfigError) as caught:
        parse_rule(text, "allow", "--allow")
    assert str(caught.value).startswith(f"--allow: invalid rule {text!r}: ")
    assert why in str(caught.value)
