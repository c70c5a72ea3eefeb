"""bash: real subprocesses in the workspace, bounded in time and output."""

import asyncio
import os

import pydantic
import pytest

import neta
from neta_base import bash
from tests.processes import wait_gone
from tests.services import require_sandbox

SLEEP_THEN_MARK = "{ sleep 30; touch slept; }"
"""A command that leaves the file ``slept`` in the workspace if it is let run to its end."""


@pytest.fixture(autouse=True)
def sandbox_here(request):
    """A test of a sandboxed session needs the sandbox (skipped, or failed in CI, without)."""
    if "unsandboxed" not in request.fixturenames:
        require_sandbox()


def test_bash_as_a_function_returns_output_and_exit_code(session):
    tool = bash.build(session)
    result = asyncio.run(tool.invoke(bash.BashArgs(command="echo hello")))
    assert result.content == "hello\n[exit code 0]"
    assert result.is_error is False
    assert result.data == {"exit_code": 0, "timed_out": False}


def test_bash_nonzero_exit_code_is_reported_not_raised(call):
    result = call("bash", command="echo failing >&2; exit 3")
    assert result.content == "failing\n[exit code 3]"
    assert result.data["exit_code"] == 3


def test_bash_stdout_and_stderr_are_merged_in_order(call):
    result = call("bash", command="echo one; echo two >&2; echo three; echo four >&2")
    assert result.content.splitlines()[:4] == ["one", "two", "three", "four"]


def test_bash_runs_in_the_workspace_root(call, session):
    (session.workspace / "marker.txt").write_text("")
    result = call("bash", command="pwd; ls")
    assert result.content.splitlines()[:2] == [str(session.workspace), "marker.txt"]


def test_bash_command_without_output_says_so(call):
    assert call("bash", command="true").content == "(no output)\n[exit code 0]"


def test_bash_gets_no_stdin_so_reading_it_does_not_hang(call):
    result = call("bash", command="cat; echo done", timeout=10)
    assert result.content == "done\n[exit code 0]"


def test_bash_long_output_keeps_head_and_tail_and_says_how_much_was_cut(call):
    result = call("bash", command="echo START; yes 0123456789 | head -n 20000; echo END")
    content = result.content
    assert content.startswith("START\n0123456789\n")
    assert content.endswith("0123456789\nEND\n[exit code 0]")
    total = len("START\n") + 20000 * 11 + len("END\n")
    cut = total - 2 * bash.KEEP_CHARS
    assert f"[{cut:,} characters of output cut here]" in content
    assert len(content) < 2 * bash.KEEP_CHARS + 200


def test_bash_multibyte_output_split_across_reads_is_decoded(call):
    result = call("bash", command="printf '\\xc3'; sleep 0.2; printf '\\xa9\\n'")
    assert result.content.startswith("\u00e9\n")


def test_bash_timeout_kills_the_process_group_within_seconds(unsandboxed, call, session):
    command = f"{SLEEP_THEN_MARK} & echo $! > pids; {SLEEP_THEN_MARK} & echo $! >> pids; wait"
    result = call("bash", command=command, timeout=1)
    assert result.is_error is True
    assert result.data["timed_out"] is True
    assert "timed out after 1 s" in result.content
    pids = [int(line) for line in (session.workspace / "pids").read_text().split()]
    assert len(pids) == 2
    assert wait_gone(pids) == []
    assert not (session.workspace / "slept").exists()  # killed, not waited out


def test_bash_sleep_in_background_and_foreground_times_out_quickly(call, session):
    result = call("bash", command=f"{SLEEP_THEN_MARK} & {SLEEP_THEN_MARK}", timeout=1)
    assert result.data["timed_out"] is True
    assert not (session.workspace / "slept").exists()  # neither sleep was waited out


def test_bash_timeout_escalates_to_sigkill_when_sigterm_is_ignored(
    unsandboxed, call, session, monkeypatch
):
    monkeypatch.setattr(bash, "_TERM_GRACE", 0.3)  # not 2 s of waiting in a test
    command = f"trap '' TERM; {SLEEP_THEN_MARK} & echo $! > pid; wait"
    result = call("bash", command=command, timeout=1)
    assert result.data["timed_out"] is True
    assert wait_gone([int((session.workspace / "pid").read_text())]) == []
    assert not (session.workspace / "slept").exists()  # killed, not waited out


def test_bash_output_before_a_timeout_is_kept(call):
    result = call("bash", command="echo before; sleep 30", timeout=1)
    assert result.content.startswith("before\n")


def test_bash_background_process_holding_output_does_not_block_the_result(unsandboxed, call):
    result = call("bash", command="sleep 3 & echo started")
    assert result.content.startswith("started\n[exit code 0]")
    # said only of output still held open when the result was made: before the sleep ended
    assert "background processes" in result.content


def test_bash_background_process_with_redirected_output_returns_at_once(call, session):
    result = call("bash", command=f"{SLEEP_THEN_MARK} > /dev/null 2>&1 & echo started")
    assert result.content == "started\n[exit code 0]"  # no note: nothing held the output
    assert not (session.workspace / "slept").exists()  # the sleep was not waited for


def test_bash_killed_by_a_signal_says_which(call):
    result = call("bash", command="kill -KILL $$")
    assert "[killed by signal SIGKILL]" in result.content


def test_bash_cancelled_call_kills_the_command(unsandboxed):
    session = unsandboxed
    tool = bash.build(session)
    pid_file = session.workspace / "pid"

    async def cancel_midway():
        task = asyncio.create_task(
            tool.invoke(bash.BashArgs(command=f"echo $$ > {pid_file}; sleep 30"))
        )
        while not pid_file.exists() or not pid_file.read_text().strip():
            await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_midway())
    assert wait_gone([int(pid_file.read_text())]) == []


def test_bash_timeout_over_600_seconds_is_rejected_by_the_schema(base_tools):
    args = base_tools["bash"].schema.args
    with pytest.raises(pydantic.ValidationError):
        args.model_validate({"command": "true", "timeout": 601})
    with pytest.raises(pydantic.ValidationError):
        args.model_validate({"command": ""})


def test_bash_in_a_missing_workspace_is_a_tool_error(tmp_path):
    session = neta.SessionContext(workspace=tmp_path / "gone")
    tool = bash.build(session)
    with pytest.raises(neta.ToolError, match="cannot start bash"):
        asyncio.run(tool.invoke(bash.BashArgs(command="true")))


def test_bash_unsandboxed_inherits_the_environment_with_a_non_interactive_pager(
    unsandboxed, call, monkeypatch
):
    monkeypatch.setenv("NETA_TEST_VALUE", "visible")
    result = call("bash", command='echo "$NETA_TEST_VALUE $PAGER"')
    assert result.content.startswith("visible cat\n")
    assert os.environ["NETA_TEST_VALUE"] == "visible"
