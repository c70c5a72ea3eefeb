"""The terminal clarify callback, alone, on a pseudo-terminal, and in ``neta run``/``neta chat``."""

import asyncio
import io
import json
import os
import pty
import subprocess
import sys
import textwrap

import pytest
from rich.console import Console

import neta
import neta_interaction.plugin
from neta.cli.clarify_prompt import terminal_clarify
from neta.cli.run_cmd import new_terminal_session
from neta.providers.scripted import ScriptedProvider
from neta.runtime.agent import Agent
from tests.core.cli.cli_runner import neta_in_process, run_neta
from tests.services import neta_environ

CHOICES = ["Postgres", "SQLite", "DuckDB"]


def console():
    return Console(file=io.StringIO(), width=120, color_system=None, highlight=False)


def ask(text, question="Which database?", choices=CHOICES):
    out = console()
    callback = terminal_clarify(console=out, stdin=io.StringIO(text))
    answer = asyncio.run(callback(question, choices))
    return answer, out.file.getvalue()


def test_terminal_clarify_shows_the_question_with_numbered_choices():
    _, shown = ask("1\n")
    assert shown.splitlines()[:5] == [
        "? Which database?",
        "  1. Postgres",
        "  2. SQLite",
        "  3. DuckDB",
        "  or type your own answer",
    ]
    assert "answer> " in shown


def test_terminal_clarify_number_picks_that_choice():
    assert ask("2\n")[0] == "SQLite"


def test_terminal_clarify_text_is_the_answer_as_typed():
    assert ask("  MySQL, the one we already run  \n")[0] == "MySQL, the one we already run"


def test_terminal_clarify_number_outside_the_choices_is_kept_as_typed():
    assert ask("7\n")[0] == "7"


def test_terminal_clarify_skips_empty_lines():
    answer, shown = ask("\n   \n3\n")
    assert answer == "DuckDB"
    assert shown.count("answer> ") == 3


def test_terminal_clarify_at_end_of_input_answers_empty():
    assert ask("")[0] == ""


@pytest.mark.parametrize("typed", ["\u00b2", "9" * 5000, "0", "-1"])
def test_terminal_clarify_digit_like_text_that_is_no_choice_number_is_kept_as_typed(typed):
    assert ask(f"{typed}\n")[0] == typed


def test_terminal_clarify_on_a_closed_input_answers_empty():
    stream = io.StringIO("1\n")
    stream.close()
    callback = terminal_clarify(console=console(), stdin=stream)
    assert asyncio.run(callback("Which database?", CHOICES)) == ""


def test_terminal_clarify_without_any_standard_input_answers_empty(monkeypatch):
    monkeypatch.setattr(sys, "stdin", None)
    callback = terminal_clarify(console=console())
    assert asyncio.run(callback("Which database?", CHOICES)) == ""


def test_terminal_clarify_abandoned_on_a_pipe_does_not_keep_the_process_alive():
    code = textwrap.dedent(
        """
        import asyncio, io, os
        from rich.console import Console
        from neta.cli.clarify_prompt import terminal_clarify

        read_fd, write_fd = os.pipe()  # the write end stays open: no line, no end of input
        callback = terminal_clarify(
            console=Console(file=io.StringIO()), stdin=os.fdopen(read_fd, "r")
        )

        async def main():
            try:
                await asyncio.wait_for(callback("Which?", None), 0.2)
            except TimeoutError:
                print("timed out")

        asyncio.run(main())
        """
    )
    # a process kept alive by the abandoned read never ends: the timeout is for that hang
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=30, check=False
    )
    assert (done.returncode, done.stdout.strip()) == (0, "timed out"), done.stderr


def test_terminal_clarify_without_choices_offers_no_list():
    answer, shown = ask("report.md\n", question="File name?", choices=None)
    assert answer == "report.md"
    assert "or type your own answer" not in shown
    assert "1." not in shown


def test_terminal_clarify_does_not_block_the_event_loop_while_waiting():
    read_fd, write_fd = os.pipe()

    async def scenario():
        with os.fdopen(read_fd, "r") as stream:
            callback = terminal_clarify(console=console(), stdin=stream)
            task = asyncio.create_task(callback("Which database?", CHOICES))
            ticks = 0
            for _ in range(10):
                await asyncio.sleep(0.02)
                ticks += 1
            assert not task.done()
            os.write(write_fd, b"1\n")
            answer = await asyncio.wait_for(task, 5)
            return ticks, answer

    try:
        ticks, answer = asyncio.run(scenario())
    finally:
        os.close(write_fd)
    assert ticks == 10
    assert answer == "Postgres"


def test_terminal_clarify_reads_an_answer_typed_on_a_terminal():
    master, slave = pty.openpty()
    try:
        with os.fdopen(slave, "r", closefd=False) as stream:
            assert stream.isatty()
            callback = terminal_clarify(console=console(), stdin=stream)
            os.write(master, b"2\n")
            assert asyncio.run(asyncio.wait_for(callback("Which?", CHOICES), 5)) == "SQLite"
    finally:
        os.close(master)
        os.close(slave)


def test_terminal_clarify_abandoned_on_a_terminal_does_not_swallow_the_next_line():
    master, slave = pty.openpty()
    try:
        with os.fdopen(slave, "r", closefd=False) as stream:
            out = console()
            callback = terminal_clarify(console=out, stdin=stream)

            async def scenario():
                with pytest.raises(TimeoutError):
                    await asyncio.wait_for(callback("First?", None), 0.2)
                await asyncio.sleep(0.3)  # the abandoned read notices and stops
                os.write(master, b"second answer\n")
                return await asyncio.wait_for(callback("Second?", None), 5)

            assert asyncio.run(scenario()) == "second answer"
            assert "no answer in time" in out.file.getvalue()
    finally:
        os.close(master)
        os.close(slave)


# -- wiring in the CLI --------------------------------------------------------------------------


def test_new_terminal_session_gives_only_interactive_sessions_a_clarify_callback(tmp_path):
    pm = neta.create_plugin_manager(
        load_entrypoints=False, plugins=[("interaction", neta_interaction.plugin)]
    )
    agent = Agent(provider=ScriptedProvider([]), plugin_manager=pm, workspace=tmp_path)
    interactive = new_terminal_session(agent, interactive=True)
    batch = new_terminal_session(agent, interactive=False)
    assert interactive.context.clarify is not None
    assert batch.context.clarify is None
    assert "clarify" in interactive.tools
    assert "clarify" in batch.tools  # it degrades instead of disappearing


def clarify_script(tmp_path, final_expect):
    turns = [
        {
            "tool_calls": [
                {
                    "name": "clarify",
                    "arguments": {"question": "Which database?", "choices": CHOICES},
                }
            ]
        },
        {"text": "Done.", "expect": {"last_message_contains": final_expect}},
    ]
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"turns": turns}))
    return str(path)


def neta_env():
    return neta_environ(NETA_LOAD_PLUGINS="base,planning,interaction")


def neta_args(tmp_path, command, script, *extra):
    """``python -m neta COMMAND …`` (drop the first three for ``neta_in_process``)."""
    return [sys.executable, "-m", "neta", command, *extra, "-p", "scripted", "--script", script,
            "-w", str(tmp_path)]  # fmt: skip


def test_neta_chat_asks_at_the_prompt_and_a_number_picks_the_choice(tmp_path):
    script = clarify_script(tmp_path, "User answered: SQLite")
    done = neta_in_process(
        *neta_args(tmp_path, "chat", script)[3:],
        input_text="set up a database\n2\n/exit\n",
        env=neta_env(),
    )
    assert done.returncode == 0, done.stderr
    assert "? Which database?" in done.stderr  # the question is the conversation, not output
    assert "  2. SQLite" in done.stderr
    assert "or type your own answer" in done.stderr
    assert "Done." in done.stdout


def test_neta_run_without_a_terminal_degrades_and_exits_awaiting_input(tmp_path):
    script = clarify_script(tmp_path, "never reached")
    done = neta_in_process(
        *neta_args(tmp_path, "run", script, "set up a database")[3:],
        input_text="2\n",
        env=neta_env(),
    )
    assert done.returncode == 3, done.stderr
    assert "[clarify] Question: Which database?" in done.stdout
    assert "Choices: 1. Postgres; 2. SQLite; 3. DuckDB" in done.stdout
    assert 'To answer, run: neta run -c "your answer"' in done.stderr
    assert "answer> " not in done.stdout


def test_neta_run_no_input_on_a_terminal_degrades(tmp_path):
    script = clarify_script(tmp_path, "never reached")
    master, slave = pty.openpty()
    try:
        done = subprocess.run(
            neta_args(tmp_path, "run", script, "set up a database", "--no-input"),
            stdin=slave,
            capture_output=True,
            text=True,
            env=neta_env(),
            timeout=60,
            check=False,
        )
    finally:
        os.close(master)
        os.close(slave)
    assert done.returncode == 3, done.stderr
    assert "[clarify] Question: Which database?" in done.stdout


def test_neta_run_on_a_terminal_asks_and_continues_with_the_answer(tmp_path):
    script = clarify_script(tmp_path, "User answered: DuckDB")
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen(
            neta_args(tmp_path, "run", script, "set up a database"),
            stdin=slave,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=neta_env(),
        )
        os.write(master, b"3\n")  # the terminal keeps the line until neta reads it
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        os.close(master)
        os.close(slave)
    assert proc.returncode == 0, stderr
    assert "? Which database?" in stderr
    assert stdout == "Done.\n"


def test_tools_call_clarify_on_a_terminal_asks_there_and_gives_the_answer(capsys):
    question = json.dumps({"question": "Pick a colour?", "choices": ["red", "blue"]})
    done = run_neta(capsys, "tools", "call", "clarify", "--args", question, stdin="2\n", typed=True)
    assert done.code == 0, done.stderr
    assert "? Pick a colour?" in done.stderr
    assert "2. blue" in done.stderr
    assert "User answered: blue" in done.stdout


def test_tools_call_clarify_without_a_terminal_says_nobody_can_answer(capsys):
    question = json.dumps({"question": "Pick a colour?", "choices": ["red", "blue"]})
    done = run_neta(capsys, "tools", "call", "clarify", "--args", question, stdin="2\n")
    assert done.code == 0, done.stderr
    assert "? Pick a colour?" not in done.stderr  # nobody was asked
    assert "User answered" not in done.stdout  # what stdin held is no answer
