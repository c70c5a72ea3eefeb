r"""ASK/DENY ESCAPES (medium): syntax that makes a command name the matcher never compares.

- brace expansion `{rm,-rf,src}`: bash expands it to the words `rm -rf src`; the matcher keeps
  `{rm,-rf,src}` as one literal word (its template has no UNKNOWN), so `bash(rm *)` misses.
  `git {push,origin,main}` likewise escapes `bash(git push*)`, and with an allow rule
  `bash(git *)` the push is ALLOWED without asking.
- `time -- rm -rf src` / `time -p -- rm`: bash 5.2's `time` takes `--`; _without_openers only
  strips `time` and `-p`, leaving `-- rm -rf src`, and `--` is no wrapper.

By the matcher's own principle (text the shell makes up counts as any text), an unquoted
brace with a comma must be UNKNOWN in the template.
"""

import pytest

from tests.core.permissions.attack_kit import bash_runs


@pytest.mark.parametrize(
    "line",
    [
        "{rm,-rf,src}",
        "{rm,-rf} src",
        "time -- rm -rf src",
        "time -p -- rm -rf src",
        "! time -- rm -rf src",
    ],
)
def test_the_deny_rule_sees_rm(decide, workspace, line):
    bash_runs(line, workspace)
    assert not (workspace / "src").exists(), "bash ran rm"
    assert decide(line, mode="auto").action == "deny"


@pytest.mark.parametrize("line", ["git {push,origin,main}", "git pu{s,}h origin main"])
def test_the_ask_rule_sees_git_push(decide, workspace, line):
    out = bash_runs("echo " + line.replace("time -- ", ""), workspace).stdout
    assert out.startswith("git push"), out
    decision = decide(line, allow=["git *"], ask=["git push*"], deny=[])
    assert decision.action == "ask", decision.reason
