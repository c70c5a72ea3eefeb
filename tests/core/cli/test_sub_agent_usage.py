"""``neta run`` shows what its sub-agents' model calls cost, apart and in the total: a crew run
against a real model server on loopback, which serves the parent and its children alike."""

import json
import re

from tests.core.cli.cli_runner import neta_in_process
from tests.fake_openai import FakeOpenAI, Reply
from tests.services import neta_environ


def crew_replies():
    """The parent delegates twice at once; each child answers in one call; the parent ends."""
    tasks = [{"goal": "count the files"}, {"goal": "read the notes"}]
    return [
        Reply(tool_calls=[("delegate_parallel", json.dumps({"tasks": tasks}))], usage=(10, 5)),
        Reply(text="A child's report.", usage=(100, 20)),
        Reply(text="A child's report.", usage=(100, 20)),
        Reply(text="Both done.", usage=(10, 5)),
    ]


def run_crew(tmp_path, server, *flags):
    return neta_in_process(
        "run", "survey this", "-p", "openai", "--base-url", server.base_url, "-m", "crew-model",
        "-t", "crew", "--mode", "auto", "-w", str(tmp_path), *flags,
        env=neta_environ(OPENAI_API_KEY="k"),
    )  # fmt: skip


def test_run_json_reports_the_sub_agents_calls_and_tokens_apart_and_the_total(tmp_path):
    with FakeOpenAI(crew_replies()) as server:
        done = run_crew(tmp_path, server, "--json")
    assert done.returncode == 0, done.stderr
    assert len(server.requests) == 4
    assert server.rejected == []
    result = json.loads(done.stdout)
    assert result["text"] == "Both done."
    assert (result["usage"]["input_tokens"], result["usage"]["output_tokens"]) == (20, 10)
    sub_agents = result["sub_agents"]
    assert sub_agents["calls"] == 2
    assert (sub_agents["usage"]["input_tokens"], sub_agents["usage"]["output_tokens"]) == (200, 40)
    total = result["total_usage"]
    assert (total["input_tokens"], total["output_tokens"]) == (220, 50)
    [row] = json.loads(neta_in_process("logs", "--json", env=neta_environ()).stdout)
    assert (row["input_tokens"], row["output_tokens"]) == (220, 50)  # what the conversation cost


def test_run_summary_line_adds_the_sub_agents_calls_and_the_total(tmp_path):
    with FakeOpenAI(crew_replies()) as server:
        done = run_crew(tmp_path, server)
    assert done.returncode == 0, done.stderr
    assert re.fullmatch(
        r"2 turns, 1 tool call, 30 tokens \(20 in, 10 out\) \+ 2 sub-agent calls, 240 tokens "
        r"\(200 in, 40 out\), 270 tokens in all, \d+\.\d s",
        done.stderr.splitlines()[-1],
    )
