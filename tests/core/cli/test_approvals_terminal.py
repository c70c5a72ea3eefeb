"""Approvals at the terminal: the approve prompt alone, in ``neta chat`` on a pseudo-terminal,
and ``neta run`` where nobody can be asked."""

import asyncio
import io
import json
import os
import pty
import subprocess
import sys

import pytest
from rich.console import Console

from neta.cli.approval_prompt import terminal_approve
from neta.cli.clarify_prompt import QuestionInterrupt
from neta.cli.run_cmd import new_terminal_session
from neta.permissions import ApprovalRequest
from neta.providers.scripted import ScriptedProvider
from neta.runtime.agent import Agent
from tests.core.cli.cli_runner import neta_in_process
from tests.core.cli.test_chat_pty import CTRL_C, Terminal
from tests.services import neta_environ

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="a POSIX pseudo-terminal and shell")

BASH = ApprovalRequest(
    request_id="call_1",
    tool="bash",
    toolset="base",
    effect="runs",
    arguments={"command": "pytest -x"},
    preview="$ pytest -x\n(in the sandbox; time limit 120 s)",
    reason="no rule decides it; mode 'ask' asks before a tool that runs",
    always=("bash(pytest -x)",),
)


def console():
    return Console(file=io.StringIO(), width=200, color_system=None, highlight=False)


def approve(typed, request=BASH):
    out = console()
    callback = terminal_approve(console=out, stdin=io.StringIO(typed))
    answer = asyncio.run(callback(request))
    return answer, out.file.getvalue()


def test_approval_prompt_shows_the_title_preview_reason_and_numbered_choices():
    _, shown = approve("1\n")
    assert shown.splitlines()[:7] == [
        "? allow bash to run?",
        "    $ pytest -x",
        "    (in the sandbox; time limit 120 s)",
        "  why: no rule decides it; mode 'ask' asks before a tool that runs",
        "  1. allow once",
        "  2. allow always (keeps: bash(pytest -x))",
        "  3. deny",
    ]
    assert "choice> " in shown


@pytest.mark.parametrize(
    ("typed", "choice"),
    [
        ("1", "allow_once"),
        ("2", "allow_always"),
        ("allow always", "allow_always"),
        ("y", "allow_once"),
    ],
)
def test_approval_prompt_a_number_or_a_choice_s_words_pick_it(typed, choice):
    answer, _ = approve(f"{typed}\n")
    assert (answer.choice, answer.by) == (choice, "user")


def test_approval_prompt_allow_always_says_which_rules_it_keeps_and_how_to_forget_them():
    _, shown = approve("2\n")
    assert "kept for this workspace: bash(pytest -x)" in shown
    assert "neta permissions remove" in shown


def test_approval_prompt_deny_takes_a_reason_the_model_reads():
    answer, shown = approve("3\nuse make test instead\n")
    assert (answer.choice, answer.reason) == ("deny", "use make test instead")
    assert "reason> " in shown


def test_approval_prompt_deny_with_an_empty_reason_denies_without_one():
    answer, _ = approve("3\n\n")
    assert (answer.choice, answer.reason) == ("deny", "")


def test_approval_prompt_deny_colon_reason_needs_no_second_question():
    answer, shown = approve("deny: not on main\n")
    assert (answer.choice, answer.reason) == ("deny", "not on main")
    assert "reason> " not in shown


def test_approval_prompt_unclear_answer_asks_again_instead_of_running_anything():
    answer, shown = approve("maybe\n9\n\n1\n")
    assert answer.choice == "allow_once"
    assert shown.count("Type a number from 1 to 3.") == 2
    assert shown.count("choice> ") == 4


def test_approval_prompt_at_end_of_input_denies():
    answer, shown = approve("")
    assert (answer.choice, answer.reason) == ("deny", "")
    assert "end of input: denied" in shown


def test_approval_prompt_without_rules_to_keep_offers_no_allow_always():
    request = ApprovalRequest(**{**BASH.__dict__, "always": ()})
    answer, shown = approve("2\n\n", request)
    assert "  1. allow once\n  2. deny\n" in shown
    assert "allow always" not in shown
    assert answer.choice == "deny"


def test_approval_prompt_shows_what_the_model_wrote_without_the_terminal_obeying_it():
    sneaky = "echo hi\x1b[2K\x1b[1A\rrm -rf ~ \u202e"
    request = ApprovalRequest(
        **{**BASH.__dict__, "preview": f"$ {sneaky}", "always": (f"bash({sneaky})",)}
    )
    _, shown = approve("1\n", request)
    assert "\x1b" not in shown
    assert "\r" not in shown
    assert "\u202e" not in shown
    assert "$ echo hi\\x1b[2K\\x1b[1A\\rrm -rf ~ \\u202e" in shown


def test_approval_prompt_cuts_a_long_preview_and_says_so():
    diff = "--- a.txt\n+++ a.txt\n@@ -0,0 +1,300 @@\n" + "".join(f"+{n}\n" for n in range(300))
    _, shown = approve("1\n", ApprovalRequest(**{**BASH.__dict__, "preview": diff}))
    assert "    +116\n" in shown
    assert "+117" not in shown
    assert "… 183 more lines not shown" in shown


def test_approval_prompt_ctrl_c_denies_just_that_call():
    master, slave = pty.openpty()  # nothing is typed: only Ctrl-C ends the wait
    interrupt = QuestionInterrupt()
    out = console()

    async def scenario():
        with os.fdopen(slave, "r", closefd=False) as stream:
            callback = terminal_approve(console=out, stdin=stream, interrupt=interrupt)
            task = asyncio.create_task(callback(BASH))
            while not interrupt.cancel_question():  # what chat's Ctrl-C handler does
                await asyncio.sleep(0.01)
            return await asyncio.wait_for(task, 5)

    try:
        answer = asyncio.run(scenario())
    finally:
        os.close(master)
        os.close(slave)
    assert (answer.choice, answer.by) == ("deny", "user")
    assert "(Ctrl-C: denied; the agent goes on)" in out.file.getvalue()


def test_new_terminal_session_gives_only_interactive_sessions_an_approve_callback(tmp_path):
    agent = Agent(provider=ScriptedProvider([]), workspace=tmp_path)
    assert new_terminal_session(agent, interactive=True).context.approve is not None
    assert new_terminal_session(agent, interactive=False).context.approve is None


# -- neta run where nobody can be asked ---------------------------------------------------------


def script(tmp_path, turns):
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"turns": turns}))
    return str(path)


def neta(*args, input_text=None):
    return neta_in_process(*args, input_text=input_text, env=neta_environ())


def bash_turn(command):
    return {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}


def touching(tmp_path, name="made.txt", final="I could not create it."):
    final_turn = {"text": final, "expect": {"last_message_contains": "no one can be asked"}}
    return script(tmp_path, [bash_turn(f"touch {name}"), final_turn])


def run_args(tmp_path, turns_script, *extra):
    return ("run", "make the file", "-p", "scripted", "--script", turns_script,
            "-w", str(tmp_path), "--sandbox", "off", *extra)  # fmt: skip


def test_run_no_input_denies_a_call_needing_approval_lists_it_and_exits_4(tmp_path):
    done = neta(*run_args(tmp_path, touching(tmp_path), "--no-input"))
    assert done.returncode == 4, done.stderr
    assert not (tmp_path / "made.txt").exists()
    assert done.stdout == "I could not create it.\n"
    assert (
        "denied: bash touch made.txt — no rule decides it; mode 'ask' asks before a tool "
        "that runs (nobody could be asked)"
    ) in done.stderr
    assert "to let them run: --allow 'bash(touch made.txt)', or --mode auto" in done.stderr


def test_run_json_lists_the_denials_and_exits_4(tmp_path):
    done = neta(*run_args(tmp_path, touching(tmp_path), "--json"))
    assert done.returncode == 4, done.stderr
    data = json.loads(done.stdout)
    assert data["outcome"] == "completed"
    [denial] = data["denials"]
    assert denial["tool"] == "bash"
    assert denial["arguments"]["command"] == "touch made.txt"
    assert denial["by"] == "no one to ask"
    assert "mode 'ask'" in denial["reason"]
    decided = [e for e in data["events"] if e["type"] == "permission_decision"]
    assert [(e["action"], e["decided_by"]) for e in decided] == [("deny", "no one to ask")]


def test_run_allow_flag_lets_the_call_run_without_asking(tmp_path):
    turns = [
        bash_turn("touch made.txt"),
        {"text": "Made it."},
    ]
    done = neta(
        *run_args(tmp_path, script(tmp_path, turns), "--no-input", "--allow", "bash(touch *)")
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "made.txt").exists()
    assert "denied:" not in done.stderr


def test_run_deny_rule_refuses_the_call_even_in_mode_auto_and_exits_0(tmp_path):
    turns = [
        bash_turn("touch made.txt"),
        {"text": "Refused.", "expect": {"last_message_contains": "denied by bash(touch *)"}},
    ]
    done = neta(
        *run_args(tmp_path, script(tmp_path, turns), "--no-input", "--mode", "auto",
                  "--deny-rule", "bash(touch *)")
    )  # fmt: skip
    assert done.returncode == 0, done.stderr  # refused as the user said: nothing went missing
    assert not (tmp_path / "made.txt").exists()
    assert "denied: bash touch made.txt — denied by bash(touch *) (--deny-rule) (by rule)" in (
        done.stderr
    )


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (("--mode", "yolo"), "--mode: unknown mode 'yolo'"),
        (("--allow", "bash(pytest"), "--allow: invalid rule 'bash(pytest'"),
        (("--ask", "a b"), "--ask: invalid rule 'a b'"),
        (("--deny-rule", "x)"), "--deny-rule: invalid rule 'x)'"),
    ],
)
def test_run_invalid_mode_or_rule_is_an_error_naming_the_flag_exit_2(tmp_path, flags, named):
    done = neta(*run_args(tmp_path, touching(tmp_path), *flags))
    assert done.returncode == 2
    assert done.stderr.startswith(f"Error: {named}")
    assert len(done.stderr.splitlines()) == 1


def test_chat_invalid_mode_is_an_error_naming_the_flag_exit_2(tmp_path):
    done = neta("chat", "-p", "scripted", "--script", touching(tmp_path), "-w", str(tmp_path),
                "--mode", "sometimes", input_text="hi\n")  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.startswith("Error: --mode: unknown mode 'sometimes'")


@pytest.mark.parametrize("where", ["home", "workspace"])
def test_run_with_a_broken_rules_file_names_the_file_and_line_and_exits_2(tmp_path, where):
    folder = tmp_path / ".neta" if where == "workspace" else tmp_path / "home"
    folder.mkdir()
    rules = folder / "permissions.toml"
    rules.write_text('mode = "ask"\ndeny = [\n  "bash(rm *)",\n  "bash(",\n]\n')
    env = neta_environ(**({"NETA_HOME": str(folder)} if where == "home" else {}))
    done = neta_in_process(*run_args(tmp_path, touching(tmp_path), "--no-input"), env=env)
    assert done.returncode == 2
    error = done.stderr.splitlines()[-1]  # after the note that the workspace is not trusted
    assert error.startswith(f"Error: {rules}:4: invalid rule 'bash('"), done.stderr
    assert not (tmp_path / "made.txt").exists()


def test_mcp_serve_invalid_rule_is_an_error_naming_the_flag_exit_2(tmp_path):
    done = neta("mcp", "serve", "-w", str(tmp_path), "--allow", "(")
    assert done.returncode == 2
    assert done.stderr.startswith("Error: --allow: invalid rule '('")


# -- neta chat on a pseudo-terminal -------------------------------------------------------------


def test_chat_runs_a_bash_call_the_user_allows_and_not_one_denied_whose_reason_the_model_reads(
    tmp_path,
):
    turns = [
        bash_turn("touch allowed.txt"),
        {"text": "Made it.", "expect": {"last_message_contains": "[exit code 0]"}},
        bash_turn("touch denied.txt"),
        {
            "text": "Understood, I will not.",
            "expect": {"last_message_contains": "the user denied it: not that one"},
        },
        bash_turn("touch interrupted.txt"),
        {"text": "Not then.", "expect": {"last_message_contains": "not run: the user denied it."}},
    ]
    term = Terminal(tmp_path, turns, "--sandbox", "off")
    workspace = tmp_path / "ws"
    term.expect("you>")
    term.type("make a file\r")
    screen = term.expect("choice>")
    assert "? allow bash to run?" in screen
    assert "$ touch allowed.txt" in screen
    assert "1. allow once" in screen
    assert "2. allow always (keeps: bash(touch allowed.txt))" in screen
    assert "3. deny" in screen
    term.type("1\r")
    term.expect("Made it.")
    assert (workspace / "allowed.txt").exists()
    term.expect("you>")
    term.type("make another\r")
    term.expect("choice>")
    term.type("3\r")
    term.expect("reason>")
    term.type("not that one\r")
    term.expect("Understood, I will not.")
    term.expect("you>")
    term.type("one more\r")
    term.expect("choice>")
    term.type(CTRL_C)  # denies this call only: the conversation goes on
    term.expect("(Ctrl-C: denied; the agent goes on)")
    term.expect("Not then.")
    term.expect("you>")
    term.type("/exit\r")
    assert term.wait() == 0
    assert not (workspace / "denied.txt").exists()
    assert not (workspace / "interrupted.txt").exists()
    # the record of each decision is kept with the conversation
    [conversation] = json.loads(neta("logs", "--json").stdout)
    shown = neta("logs", "show", conversation["session_id"]).stdout
    call = shown.index('→ bash {"command": "touch denied.txt"')
    assert shown[call:].splitlines()[1].startswith("    denied by user · not that one · ")
    assert "    allowed by user · allow once · " in shown
    kept = json.loads(neta("logs", "show", "--json", conversation["session_id"]).stdout)
    decisions = [m["permission"] for m in kept["messages"] if m["role"] == "tool"]
    assert [(d["action"], d["decided_by"], d["reason"]) for d in decisions][:2] == [
        ("allow", "user", "allow once"),
        ("deny", "user", "not that one"),
    ]
    assert (decisions[2]["action"], decisions[2]["decided_by"]) == ("deny", "user")


def test_run_on_a_terminal_asks_before_a_command_and_runs_it_once_allowed(tmp_path):
    turns = [bash_turn("touch made.txt"), {"text": "Made it."}]
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "neta", *run_args(tmp_path, script(tmp_path, turns))],
            stdin=slave,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=neta_environ(),
        )
        os.write(master, b"1\n")  # the terminal keeps the line until neta reads it
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        os.close(master)
        os.close(slave)
    assert proc.returncode == 0, stderr
    assert "? allow bash to run?" in stderr
    assert "choice> " in stderr
    assert stdout == "Made it.\n"
    assert (tmp_path / "made.txt").exists()
    assert "denied:" not in stderr


def test_chat_allow_always_keeps_the_rule_until_neta_permissions_remove_forgets_it(tmp_path):
    turns = [
        bash_turn("touch first.txt"),
        {"text": "One."},
        bash_turn("touch first.txt"),
        {"text": "Two, unasked."},
    ]
    term = Terminal(tmp_path, turns, "--sandbox", "off")
    workspace = tmp_path / "ws"
    term.expect("you>")
    term.type("make it\r")
    term.expect("choice>")
    term.type("2\r")
    term.expect("kept for this workspace: bash(touch first.txt)")
    term.expect("One.")
    term.expect("you>")
    term.type("again\r")
    screen = term.expect("Two, unasked.")
    assert "choice>" not in screen[screen.index("again") :]  # the same call ran unasked
    term.expect("you>")
    term.type("/exit\r")
    assert term.wait() == 0
    listed = neta("permissions", "-w", str(workspace))
    assert listed.returncode == 0, listed.stderr
    [row] = [line.split() for line in listed.stdout.splitlines() if "touch first.txt" in line]
    assert row == ["allow", "bash(touch", "first.txt)", "NETA_HOME/approvals.json"]
    as_json = json.loads(neta("permissions", "list", "--json", "-w", str(workspace)).stdout)
    assert as_json["rules"] == [
        {"action": "allow", "rule": "bash(touch first.txt)", "source": "NETA_HOME/approvals.json"}
    ]
    removed = neta("permissions", "remove", "bash(touch first.txt)", "-w", str(workspace))
    assert removed.returncode == 0, removed.stderr
    assert "Forgot 'bash(touch first.txt)'" in removed.stdout
    assert json.loads(neta("permissions", "--json", "-w", str(workspace)).stdout)["rules"] == []
    # forgotten: the same call asks again
    again = neta(*run_args(workspace, touching(tmp_path, "first.txt"), "--no-input"))
    assert again.returncode == 4, again.stderr
