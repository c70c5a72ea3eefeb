r"""ALLOW BYPASS: ${...} is kept as text and is not opaque, but bash can run code from it.

`${x:='...'}` assigns a string holding `$(cmd)` (inside single quotes: not seen as a
substitution by _braced), and a later expansion in the same command evaluates it:
- `${x@P}`: prompt expansion runs command substitutions;
- `$[x]`, `${HOME:x}`, `${!x}`: arithmetic / indirect expansion of `a[$(cmd)]` runs `cmd`.
Every allow rule with a trailing `*` (echo *, ls *, pytest *, git status*) thus runs any command.
"""

import pytest

from tests.core.permissions.attack_kit import bash_runs

LINES = [
    "echo ${x:='$(touch pwned)'} ${x@P}",
    "echo ${x:='a[$(touch pwned)]'} $[x]",
    "echo ${x:='a[$(touch pwned)]'} ${HOME:x}",
    "ls ${x:='a[$(touch pwned)]'} ${!x}",
    "git status ${x:='a[$(touch pwned)]'}${!x}",
    "pytest ${x:='$(touch pwned)'}${x@P}",
]


@pytest.mark.parametrize("line", LINES)
def test_code_hidden_in_a_parameter_expansion_is_approved_by_no_allow_rule(decide, workspace, line):
    evidence = line.replace("git status", "true").replace("pytest", "true")
    bash_runs(evidence, workspace)
    assert (workspace / "pwned").exists(), "bash ran the hidden command"
    decision = decide(line)
    assert decision.action != "allow", decision.reason


def test_code_hidden_in_a_parameter_expansion_meets_a_deny_rule(decide, workspace):
    line = "echo ${x:='$(rm -rf src)'} ${x@P}"
    bash_runs(line, workspace)
    assert not (workspace / "src").exists()
    (workspace / "src").mkdir()
    assert decide(line, mode="auto").action == "deny"
