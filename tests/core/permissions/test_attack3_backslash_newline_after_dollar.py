r"""ALLOW BYPASS (critical): bash removes a backslash-newline before it reads anything, so
`$\<newline>{x@P}` is `${x@P}`. The parser reads the `$` as a lone dollar and `{x@P}` as
plain text: no `${`, so no PARAMETER_OPERATOR, nothing opaque. With `${x:=\$\(cmd\)}` (the
`$(` made of escaped characters, so no QUOTED_CODE either) followed by `${x@P}` (prompt
expansion runs substitutions), any allow rule with a trailing `*` runs any command.
The same hole lets `${x:-rm} -rf src` escape the deny rule (its template is all literal).

Fix idea: drop every backslash-newline outside single quotes before scanning (as bash's
input layer does), or have `_dollar` skip `\<newline>` pairs before looking at the next char.
"""

import pytest

from tests.core.permissions.attack_kit import bash_runs

PAYLOAD = "$\\\n{x:=\\$\\(touch\\ pwned\\)} $\\\n{x@P}"
LINES = [
    ("echo", "echo " + PAYLOAD),
    ("ls", "ls " + PAYLOAD),
    ("cat", "cat " + PAYLOAD),
    ("grep", "grep -e " + PAYLOAD),
    ("git status", "git status " + PAYLOAD),
    ("pytest", "pytest " + PAYLOAD),
    ("echo, arithmetic", "echo $\\\n{x:=a[\\$\\(touch\\ pwned\\)]} $\\\n[x]"),
]


@pytest.mark.parametrize(("allowed", "line"), LINES, ids=[name for name, _ in LINES])
def test_a_backslash_newline_after_dollar_hides_code_from_allow_rules(
    decide, workspace, allowed, line
):
    evidence = line.split(" ", 2 if allowed == "git status" else 1)[-1]
    bash_runs("echo " + evidence, workspace)
    assert (workspace / "pwned").exists(), "bash ran the hidden command"
    decision = decide(line)
    assert decision.action != "allow", decision.reason


def test_a_backslash_newline_after_dollar_hides_a_command_name_from_deny_rules(decide, workspace):
    line = "$\\\n{x:-rm} -rf src"
    bash_runs(line, workspace)
    assert not (workspace / "src").exists(), "bash ran rm"
    assert decide(line, mode="auto").action == "deny"
