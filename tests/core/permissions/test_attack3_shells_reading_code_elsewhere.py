r"""DENY ESCAPES (medium): a shell running code the matcher never reads.

The matcher reads `bash -c CODE` (the word right after `-c`), here-documents and here-strings
fed to a shell, but:
- `bash -c -- 'rm -rf src'`, `bash -c -e '...'`, `sh -c -x '...'`: the command string is the
  first operand, not the word after `-c`; the matcher reads `--`/`-e` as the code.
- `echo rm -rf src | bash` and `. <(echo ...)`/`source /dev/stdin <<< "..."`: a shell or
  `source` reading code from a pipe, a process substitution or a here-string (the README:
  "what it cannot read matches deny/ask").
- `env -S"rm -rf src"` / `env --split-string="rm -rf src"`: `env -S STRING` is seen through
  only when the string is a separate word.
"""

import pytest

from tests.core.permissions.attack_kit import bash_runs

LINES = [
    "bash -c -- 'rm -rf src'",
    "bash -c -e 'rm -rf src'",
    "sh -c -x 'rm -rf src'",
    "echo rm -rf src | bash",
    "echo rm -rf src | sh -s",
    ". <(echo rm -rf src)",
    'source /dev/stdin <<< "rm -rf src"',
    'env -S"rm -rf src"',
    'env --split-string="rm -rf src"',
]


@pytest.mark.parametrize("line", LINES)
def test_the_deny_rule_sees_the_code_a_shell_runs(decide, workspace, line):
    bash_runs(line, workspace)
    assert not (workspace / "src").exists(), "bash ran rm"
    decision = decide(line, mode="auto")
    assert decision.action == "deny", decision.reason
