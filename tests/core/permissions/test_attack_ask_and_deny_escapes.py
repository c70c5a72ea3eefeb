r"""ASK/DENY ESCAPES: lines a deny or ask rule should catch but does not.

- `git pu$9sh`, `git ${x:-push}`: a word built by an expansion is compared as written; an allow
  rule `git *` then approves what the ask rule `git push*` meant to stop (no `$(`: not opaque).
- `$((1<<2))` / `((x=1<<2))`: the parser takes `<<` in arithmetic for a here-document and
  swallows the following lines as its body, so the next line's `rm` is never compared.
- `coproc rm ...`: coproc is no wrapper (nor keyword) for the deny views.
- `${x:-rm} -rf ...`, `$'r'm`: a command name made by an expansion.
"""

import pytest

from tests.core.permissions.attack_kit import bash_runs


@pytest.mark.parametrize(
    "line",
    ["git pu$9sh origin main", "git ${x:-push} origin main", "git pu${_:0:0}sh", "git p''ush"],
)
def test_an_ask_rule_is_not_escaped_by_an_expanded_word(decide, line):
    # user rules: allow bash(git *), ask bash(git push*)
    decision = decide(line, allow=["git *"], ask=["git push*"], deny=[])
    assert decision.action == "ask", decision.reason


def test_evidence_expanded_words_become_push(workspace):
    out = bash_runs("echo git pu$9sh; echo git ${x:-push}", workspace).stdout
    assert out == "git push\ngit push\n"


@pytest.mark.parametrize(
    "line",
    [
        "echo $((1<<2))\nrm -rf src",
        "((x=1<<2))\nrm -rf src",
        "echo $((1<<EOF))\nrm -rf src\nEOF",
    ],
)
def test_arithmetic_shift_is_no_here_document(decide, workspace, line):
    bash_runs(line, workspace)
    assert not (workspace / "src").exists(), "bash ran rm"
    assert decide(line, mode="auto").action == "deny"


@pytest.mark.parametrize(
    "line",
    [
        "coproc rm -rf src",
        "coproc X { rm -rf src; }",
        "function f { rm -rf src; }; f",
        "time -p rm -rf src",
    ],
)
def test_coproc_or_function_does_not_hide_a_command_from_a_deny_rule(decide, workspace, line):
    bash_runs(line, workspace)
    assert not (workspace / "src").exists(), "bash ran rm"
    assert decide(line, mode="auto").action == "deny"


@pytest.mark.parametrize(
    "line", ["${x:-rm} -rf src", "r${x}m -rf src", "$9rm -rf src", "$(echo rm) -rf src"]
)
def test_a_command_name_made_by_an_expansion_meets_deny_rules(decide, workspace, line):
    """Arguably hard to ask of a deny rule; a name that is an expansion is unknown, and the
    module's rule for what it cannot read is: deny and ask rules match it."""
    bash_runs(line, workspace)
    assert not (workspace / "src").exists()
    assert decide(line, mode="auto").action == "deny"
