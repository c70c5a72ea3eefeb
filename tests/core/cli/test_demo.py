"""``neta demo`` runs offline and shows the system at work."""

import re
from pathlib import Path

from tests.core.cli.cli_runner import neta_in_process
from tests.services import neta_environ


def run_demo(*args, **env_extra):
    return neta_in_process("demo", *args, env=neta_environ(**{**env_extra, "COLUMNS": "200"}))


def test_demo_plans_reads_fuzzy_patches_checks_and_answers():
    done = run_demo()
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "todo (rev 4)" in out
    assert "→ read_file" in out
    assert "patch matched with the indent_flexible strategy (lines 4-7)" in out
    assert '+    return f"Hello, {name}!"' in out
    assert "Hello, Ada!" in out
    assert "outcome: completed, 6 model turns" in out
    workspace = Path(re.search(r"temporary workspace: (\S+)", out).group(1))
    assert not workspace.exists()


def test_demo_keep_leaves_the_patched_workspace():
    done = run_demo("--keep")
    assert done.returncode == 0, done.stderr
    workspace = Path(re.search(r"workspace kept: (\S+)", done.stdout).group(1))
    try:
        assert 'return f"Hello, {name}!"' in (workspace / "app" / "greeting.py").read_text()
    finally:
        import shutil

        shutil.rmtree(workspace)


def test_demo_without_the_base_toolset_says_what_is_missing():
    done = run_demo(NETA_DISABLE_PLUGINS="base")
    assert done.returncode == 2
    assert done.stderr.startswith("Error: neta demo needs the base and planning toolsets")


def test_demo_runs_its_check_without_python_on_the_path(tmp_path):
    import shutil

    only_bash = tmp_path / "bin"
    only_bash.mkdir()
    (only_bash / "bash").symlink_to(shutil.which("bash"))
    done = run_demo(PATH=str(only_bash))
    assert done.returncode == 0, done.stderr
    assert "✓ Hello, Ada!\n  [exit code 0]" in done.stdout


def test_demo_whose_check_cannot_run_fails_and_names_the_step(tmp_path):
    done = run_demo(PATH=str(tmp_path))  # no bash anywhere on the path
    assert done.returncode == 1
    assert "outcome: completed" not in done.stdout
    assert "step failed: bash: Error: cannot start bash" in done.stdout


def test_demo_on_a_terminal_without_unicode_still_runs():
    done = run_demo(PYTHONIOENCODING="ascii")
    assert done.returncode == 0, done.stderr
    assert "outcome: completed, 6 model turns" in done.stdout
