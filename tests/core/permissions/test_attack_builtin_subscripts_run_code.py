r"""ALLOW BYPASS (medium): builtins that take a variable name evaluate an array subscript, and
`$(...)` inside it runs, though the text is single-quoted (so the parser sees no substitution).

printf -v, test -v, [ -v, read: with rules such as bash(printf *), bash(test *), bash(read *).
"""

import pytest

from tests.core.permissions.attack_kit import bash_runs

LINES = [
    ("printf *", "printf -v 'a[$(touch pwned)]' x"),
    ("test *", "test -v 'a[$(touch pwned)]'"),
    ("[ *", "[ -v 'a[$(touch pwned)]' ]"),
    ("read *", "read 'a[$(touch pwned)]' <<< x"),
]


@pytest.mark.parametrize(("pattern", "line"), LINES)
def test_a_subscript_evaluated_by_a_builtin_is_approved_by_no_allow_rule(
    decide, workspace, pattern, line
):
    bash_runs(line, workspace)
    assert (workspace / "pwned").exists(), "bash ran the hidden command"
    assert decide(line, allow=[pattern]).action != "allow"
