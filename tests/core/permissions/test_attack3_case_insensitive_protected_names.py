r"""ALLOW BYPASS on case-insensitive file systems (macOS default APFS, Windows): the
protected folders and path rules compare names case-sensitively. On macOS `.GIT/config` IS
`.git/config`, so

    echo '[core] fsmonitor = "touch pwned; false"' >> .GIT/config; git status

is allowed by `echo *` + `git status*` and runs a command; `echo x > .ENV` overwrites the
`write_file(.env)`-denied file; `write_file(.GIT/hooks/pre-commit)` is allowed in auto-edit.
(os.path.realpath does not fold case on macOS.) Linux cannot show the effect; the decisions
alone are asserted. Fix idea: compare with os.path.normcase + casefold where the file system
folds case (or always, for the protected names).
"""

import pytest


@pytest.mark.parametrize(
    "line",
    [
        "echo '[core] fsmonitor = touch pwned' >> .GIT/config; git status",
        "echo x > .Git/hooks/pre-commit",
        "echo SECRET=x > .ENV",
        "echo x > .NETA/permissions.toml",
    ],
)
def test_a_protected_name_in_other_case_is_not_approved(decide, line):
    decision = decide(line)
    assert decision.action != "allow", decision.reason


@pytest.mark.parametrize("path", [".GIT/config", ".Neta/permissions.toml"])
def test_an_edit_in_a_protected_folder_in_other_case_asks_in_auto_edit(decide_write, path):
    assert decide_write(path, mode="auto-edit").action == "ask"
