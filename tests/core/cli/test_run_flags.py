"""Timeouts a user sets, and what ``neta run`` / ``chat`` / ``serve`` say in the odd cases."""

import asyncio
import io
import json
import re
import signal
import socket
import subprocess
import sys
import time

import httpx
import pytest
from rich.console import Console

from neta.cli.render import EventRenderer, keep_waiting_notice
from neta.cli.run_report import AWAITING_HINT
from neta.events import RunFinished, RunStarted, TextDelta, ToolCallStart, ToolResultEvent
from neta.providers.scripted import ScriptedProvider
from neta.runtime.agent import Agent
from tests import http_clients
from tests.core.cli.cli_runner import neta_in_process
from tests.fake_openai import FakeOpenAI, Reply
from tests.services import free_port, neta_environ, require_sandbox


def env():
    return neta_environ()


def neta(*args, input_text=None):
    return neta_in_process(*args, input_text=input_text, env=env())


def script(tmp_path, turns):
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"turns": turns}))
    return str(path)


def test_run_model_timeout_stops_a_silent_server_and_says_so_in_json(tmp_path):
    # silent before each chunk five times as long as the timeout: a late one would read it all
    with FakeOpenAI([Reply(text="never finished", trickle=2.5)]) as server:
        done = neta(
            "run", "go", "-p", "openai", "--base-url", server.base_url, "--api-key", "k",
            "-w", str(tmp_path), "--model-timeout", "0.5", "--max-tries", "1", "--json",
        )  # fmt: skip
    assert done.returncode == 1, done.stderr
    result = json.loads(done.stdout)
    assert result["outcome"] == "error"
    assert "sent nothing for 0.5 s" in result["reason"]


@pytest.mark.parametrize("tries", [1, 2])
def test_run_max_tries_sets_how_often_a_cut_reply_is_asked_for(tmp_path, tries):
    cut = Reply(text="A long answer that the server cuts " * 4, cut_after_chars=40)
    with FakeOpenAI([cut, cut]) as server:
        done = neta(
            "run", "go", "-p", "openai", "--base-url", server.base_url, "--api-key", "k",
            "-w", str(tmp_path), "--max-tries", str(tries), "--json",
        )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert len(server.requests) == tries
    reason = json.loads(done.stdout)["reason"]
    assert "cut off" in reason


def test_run_that_cannot_reach_the_model_api_names_the_url_and_the_variable(tmp_path):
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    done = neta_in_process(
        "run", "hi", "-p", "openai", "--base-url", url, "--max-tries", "1", "-w", str(tmp_path),
        env=neta_environ(OPENAI_API_KEY="k"),
    )  # fmt: skip
    assert done.returncode == 1
    # one line, as a usage error's: what failed, in plain words, and where the URL comes from
    assert done.stderr.splitlines()[0] == (
        f"Error: openai model 'gpt-4o-mini' at {url}: cannot reach the model API: connection "
        "refused (is the server up? the URL comes from --base-url or OPENAI_BASE_URL)"
    )


def test_run_with_deeply_nested_arguments_still_prints_its_json_result(tmp_path):
    nested = "[" * 10_000 + "]" * 10_000
    turns = [{"tool_calls": [{"name": "read_file", "arguments": nested}]}, {"text": "moved on"}]
    done = neta(
        "run", "go", "-p", "scripted", "--script", script(tmp_path, turns), "-w", str(tmp_path),
        "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert (result["outcome"], result["text"]) == ("completed", "moved on")
    [error] = [e for e in result["events"] if e["type"] == "tool_result"]
    assert "nested too deeply" in error["content"]


def test_run_turn_timeout_ends_a_turn_that_takes_too_long(tmp_path):
    turns = [{"text": "much later", "delay": 30}]
    done = neta(
        "run", "go", "-p", "scripted", "--script", script(tmp_path, turns), "-w", str(tmp_path),
        "--turn-timeout", "1", "--json",
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "within 1 s (the turn deadline)" in json.loads(done.stdout)["reason"]


def test_chat_turn_timeout_ends_the_turn_and_the_chat_goes_on(tmp_path):
    turns = [{"text": "much later", "delay": 30}, {"text": "on time"}]
    done = neta(
        "chat", "-p", "scripted", "--script", script(tmp_path, turns), "-w", str(tmp_path),
        "--turn-timeout", "1",
        input_text="first\nsecond\n/exit\n",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Error: the model did not finish its reply within 1 s" in done.stderr
    assert "on time" in done.stdout


def test_serve_turn_timeout_reaches_every_session(tmp_path, monkeypatch):
    # the command builds its app here; where uvicorn would serve it, a client calls it
    from neta.cli import serve_cmd

    replies = []

    def serve_here(app, options, store, announce):
        async def scenario():
            transport = httpx.ASGITransport(app=app)
            async with (
                app.router.lifespan_context(app),  # its start and its end, as uvicorn runs them
                http_clients.async_client(
                    transport=transport,
                    base_url=f"http://{options['host']}",
                    headers={"Authorization": "Bearer s3cret"},
                    timeout=30,
                ) as http,
            ):
                sid = (await http.post("/v1/sessions")).json()["sessionId"]
                replies.append(await http.post(f"/v1/sessions/{sid}/messages", json={"text": "hi"}))

        asyncio.run(scenario())

    monkeypatch.setattr(serve_cmd, "_serve_app", serve_here)
    turns = [{"text": "much later", "delay": 30}]
    done = neta(
        "serve", "-p", "scripted", "--script", script(tmp_path, turns), "-w", str(tmp_path),
        "--port", str(free_port()), "--turn-timeout", "1", "--model-timeout", "5",
        "--token", "s3cret",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    [reply] = replies
    assert reply.json()["outcome"] == "error"
    assert "within 1 s" in json.dumps(reply.json())


def test_run_with_an_empty_final_reply_says_it_was_empty(tmp_path):
    done = neta(
        "run", "go", "-p", "scripted", "--script", script(tmp_path, [{"text": ""}]),
        "-w", str(tmp_path),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "the model's final reply was empty" in done.stderr


def test_run_awaiting_an_answer_says_how_to_answer_a_one_shot_run(tmp_path):
    turns = [{"tool_calls": [{"name": "clarify", "arguments": {"question": "Which one?"}}]}]
    done = neta(
        "run", "go", "-p", "scripted", "--script", script(tmp_path, turns), "-w", str(tmp_path),
        "--no-input",
    )  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert "Which one?" in done.stdout
    assert AWAITING_HINT in done.stderr
    assert "next message" not in done.stderr


def test_ctrl_c_with_json_prints_the_cancelled_result(tmp_path):
    require_sandbox()  # its bash call runs in the default sandbox
    started = tmp_path / "started"
    turns = [
        {"tool_calls": [{"name": "bash", "arguments": {"command": f"touch {started}; sleep 30"}}]}
    ]
    proc = subprocess.Popen(
        [
            sys.executable, "-m", "neta", "run", "go", "-p", "scripted",
            "--script", script(tmp_path, turns), "-w", str(tmp_path), "--json",
            "--mode", "auto",  # Ctrl-C is tested, not asking before the command runs
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env(),
    )  # fmt: skip
    deadline = time.monotonic() + 30
    while not started.exists():
        assert time.monotonic() < deadline
        assert proc.poll() is None
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    result = json.loads(out)
    assert result["outcome"] == "cancelled"
    assert "Ctrl-C" in result["reason"]
    assert result["turns"] == 1
    kinds = [e["type"] for e in result["events"]]
    assert kinds[0] == "run_started"
    assert kinds[-2:] == ["tool_result", "run_finished"]


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def terminal_renderer(**options):
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=100, highlight=False)
    return EventRenderer(console, **options), out


def test_renderer_shows_the_wait_for_a_slow_model_and_clears_it_when_it_answers():
    clock = Clock()
    renderer, out = terminal_renderer(clock=clock)
    renderer(RunStarted(message="go", tools=[]))
    clock.now += 0.2
    renderer.tick()
    assert "waiting" not in out.getvalue()  # no flicker for a quick answer
    clock.now += 2.8
    renderer.tick()
    assert out.getvalue().endswith("⠋ waiting for the model (3 s)…")
    clock.now += 42
    renderer.tick()
    assert out.getvalue().endswith("⠙ waiting for the model (45 s)…")  # the spinner moves
    renderer(TextDelta(text="Here"))
    assert out.getvalue().endswith("\r\x1b[2KHere")


def test_renderer_does_not_count_the_time_tools_take_as_waiting_for_the_model():
    clock = Clock()
    renderer, out = terminal_renderer(clock=clock)
    renderer(RunStarted(message="go", tools=[]))
    renderer(ToolCallStart(call_id="a", name="bash", arguments="{}"))
    clock.now += 60
    renderer.tick()
    assert "waiting for the model" not in out.getvalue()
    renderer(ToolResultEvent(call_id="a", name="bash", content="ok"))
    clock.now += 6
    renderer.tick()
    assert out.getvalue().endswith(" waiting for the model (6 s)…")
    renderer(RunFinished(outcome="completed"))
    clock.now += 60
    renderer.tick()
    assert out.getvalue().count("waiting for the model") == 1


def test_renderer_off_a_terminal_never_shows_the_wait():
    out = io.StringIO()
    clock = Clock()
    renderer = EventRenderer(Console(file=out, force_terminal=False), clock=clock)
    renderer(RunStarted(message="go", tools=[]))
    clock.now += 60
    renderer.tick()
    assert "waiting" not in out.getvalue()


def test_a_slow_turn_shows_the_waiting_line_while_the_run_goes_on(tmp_path):
    renderer, out = terminal_renderer(quiet=0.2)
    agent = Agent(provider=ScriptedProvider([{"text": "late", "delay": 0.8}]), workspace=tmp_path)

    async def scenario():
        async with keep_waiting_notice(renderer, interval=0.1):
            return await agent.run("go", on_event=renderer)

    result = asyncio.run(scenario())
    assert result.text == "late"
    assert re.search(r"waiting for the model \(\d s\)…", out.getvalue())
    assert out.getvalue().rstrip().endswith("late")
