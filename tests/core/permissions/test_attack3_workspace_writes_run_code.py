r"""ALLOW BYPASS (design gap, high): an allowed command's redirection may write any workspace
file except `.git/`, `.neta/` and files a deny/ask path rule names -- so `echo *` is a
`write_file(**)` the user never granted (in mode ask, `write_file(conftest.py)` asks). The
README protects `.git/` and `.neta/` because "what it holds runs commands"; conftest.py,
pytest.ini/pyproject.toml/setup.cfg/tox.ini (addopts -p), GNUmakefile/Makefile, .envrc ...
run commands just as well for the allowed `pytest *` and `make test`. One allowed line:

    echo 'import os; os.system("...")' > conftest.py; pytest
    echo 'test:; @...' > GNUmakefile; make test          (GNUmakefile wins over Makefile)

Fix idea: a redirect target must also be a path some allow rule of a file-writing tool
approves (here `write_file(src/**)`), or is otherwise left to the mode.
"""

import pytest

from tests.core.permissions.attack_kit import bash_runs

LINES = [
    ("""echo 'import pathlib; pathlib.Path("pwned").touch()' > conftest.py; pytest -q""", "pytest"),
    ("echo 'test:; @touch pwned' > GNUmakefile; make test", "make"),
]


@pytest.mark.parametrize(("line", "tool"), LINES)
def test_writing_a_file_an_allowed_tool_runs_is_not_approved(decide, workspace, line, tool):
    import shutil

    if shutil.which(tool) is None:
        pytest.skip(f"{tool} not installed")
    evidence = line.replace("pytest -q", "python -m pytest -q -p no:cacheprovider")
    bash_runs(evidence, workspace, timeout=60)
    assert (workspace / "pwned").exists(), "the allowed tool ran the written code"
    decision = decide(line)
    assert decision.action != "allow", decision.reason


@pytest.mark.parametrize("target", ["conftest.py", "pytest.ini", "Makefile", "README.md"])
def test_a_redirect_outside_the_write_rules_is_no_more_allowed_than_write_file(
    decide, decide_write, target
):
    assert decide_write(target).action == "ask"
    decision = decide(f"echo x > {target}")
    assert decision.action != "allow", decision.reason
