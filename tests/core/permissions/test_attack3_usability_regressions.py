r"""Usability: common lines stay allowed, and harmless ones no deny rule speaks about are not
denied by it (an arithmetic or array expansion is opaque to allow rules, not a hidden
command).
"""

import pytest

LINES = [
    "echo $((1+2))",
    'echo "${arr[@]}"',
    "echo ${var:0:3}",
    "for ((i=0; i<3; i++)); do echo $i; done",
]


@pytest.mark.parametrize("line", LINES)
def test_a_harmless_line_is_not_denied_by_an_unrelated_deny_rule(decide, line):
    decision = decide(line)
    assert decision.action != "deny", decision.reason


@pytest.mark.parametrize(
    "line",
    [
        'echo "$HOME"',
        "ls -la",
        "git status --short",
        "pytest -x tests/",
        'grep -rn "foo" src',
        "ls -la | grep foo",
        "git status && pytest -q",
        "cat src/a.py 2>/dev/null || echo missing",
    ],
)
def test_common_lines_are_still_allowed(decide, line):
    assert decide(line).action == "allow"


def test_a_line_writing_a_file_through_a_redirection_asks_in_mode_ask_like_an_edit(decide):
    assert decide('echo "hello" > src/out.txt').action == "ask"
    assert decide('echo "hello" > src/out.txt', mode="auto-edit").action == "allow"
