r"""ALLOW BYPASS (redirection out of the workspace): any target starting with /dev/fd/ is
skipped by _commands._redirect_problem as "a descriptor", but /dev/fd is a symlink to
/proc/self/fd, so /dev/fd/../../../PATH is PATH: `echo x > /dev/fd/../../../home/u/.bashrc`
writes anywhere under the echo rule."""

import pytest

from tests.core.permissions.attack_kit import bash_runs


@pytest.mark.parametrize("op", [">", ">>", "2>", "&>", ">|"])
def test_a_dev_fd_path_that_climbs_out_is_a_write_outside_the_workspace(
    decide, workspace, tmp_path, op
):
    target = tmp_path / "outside.txt"
    line = f"echo pwned {op} /dev/fd/../../..{target}"
    bash_runs(line, workspace)
    assert target.exists(), "bash wrote outside the workspace"
    target.unlink()
    decision = decide(line)
    assert decision.action != "allow", decision.reason
