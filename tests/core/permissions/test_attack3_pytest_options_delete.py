r"""Git's global options do not hide its subcommand from a deny or ask rule.

``git -C . push`` is ``git push`` to ``bash(git push*)``; a ``-c`` setting may name a program
git runs (``alias.x='!rm -rf src'``), which a deny rule reads. (An allow rule with ``*``
approves every option of its program: ``pytest --basetemp=DIR`` deletes DIR; the docs say so.)
"""

import pytest


@pytest.mark.parametrize(
    ("line", "action"),
    [("git -C . push origin main", "ask"), ("git -c alias.x='!rm -rf src' x", "deny")],
)
def test_git_global_options_do_not_hide_the_subcommand(decide, line, action):
    decision = decide(line, allow=["git *"], mode="auto")
    assert decision.action == action, decision.reason
