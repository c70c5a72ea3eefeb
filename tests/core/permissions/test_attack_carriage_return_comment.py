r"""ALLOW BYPASS: the parser treats '\r' as a blank (_shell._BLANKS), bash does not.

So in `git status\r# ; touch pwned` the parser sees `git status`, then a comment to the end of
the line; bash sees the word `status\r#`, then `;`, then runs `touch pwned`.
"""

import pytest

from tests.core.permissions.attack_kit import bash_runs


@pytest.mark.parametrize(
    "line",
    [
        "git status\r# ; touch pwned",
        "echo hi\r# ; touch pwned",
        "ls .\r# ; touch pwned",
        "pytest --co -q\r#; touch pwned",
    ],
)
def test_a_carriage_return_before_a_hash_hides_nothing_from_the_rules(decide, workspace, line):
    # evidence: bash really runs the command after the "comment"
    bash_runs(line.replace("git status", "true").replace("pytest --co -q", "true"), workspace)
    assert (workspace / "pwned").exists()
    # the policy must not approve `touch pwned` through the git/echo/ls/pytest rules
    decision = decide(line)
    assert decision.action != "allow", decision.reason


def test_a_carriage_return_hides_no_denied_command(decide, workspace):
    decision = decide("echo hi\r# ; rm -rf src", mode="auto")
    assert decision.action == "deny", decision.reason
