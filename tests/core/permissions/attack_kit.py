"""What the attack tests share: the rules a user would write, and a real bash to run a line.

Each attack test first runs its line with ``bash -c`` to show what it really does, then
checks that the policy does not let it through.
"""

import subprocess

USER_RULES = dict(
    allow=[
        "bash(git status*)",
        "bash(pytest *)",
        "bash(echo *)",
        "bash(ls *)",
        "bash(cat *)",
        "bash(grep *)",
        "bash(make test)",
        "write_file(src/**)",
        "read_file",
    ],
    ask=["bash(git push*)"],
    deny=["bash(rm *)", "bash(curl *)", "write_file(.env)"],
)


def bash_runs(command, cwd, timeout=20):
    """Run the line with ``bash -c`` in ``cwd`` (evidence that the hidden command runs)."""
    return subprocess.run(
        ["bash", "-c", command], cwd=cwd, capture_output=True, text=True, timeout=timeout
    )
