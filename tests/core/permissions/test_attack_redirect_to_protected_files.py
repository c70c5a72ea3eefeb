r"""ALLOW BYPASS (design gap): a redirection is checked only for leaving the workspace.

- deny write_file(.env) is escaped by `echo X > .env` under allow bash(echo *): the bash
  redirection is never compared with path rules;
- `echo ... >> .git/config` then `git status` (both allowed) runs any command via
  core.fsmonitor: two allowed commands give arbitrary code execution.
"""

import subprocess

from tests.core.permissions.attack_kit import bash_runs


def test_a_redirection_into_a_file_a_deny_rule_protects_is_not_approved(decide, workspace):
    decision = decide("echo SECRET=attacker > .env")
    assert decision.action != "allow", decision.reason


def test_a_redirection_into_git_config_is_not_approved(decide, workspace):
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    line = (
        "echo '[core]' >> .git/config; "
        "echo 'fsmonitor = \"touch pwned; false\"' >> .git/config; "
        "git status"
    )
    bash_runs(line, workspace)
    assert (workspace / "pwned").exists(), "git status ran the fsmonitor command"
    decision = decide(line)
    assert decision.action != "allow", decision.reason
