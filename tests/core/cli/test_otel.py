"""``neta run --otel`` and ``neta serve --otel``: traces exported over OTLP/HTTP, real processes."""

import json
import signal
import subprocess
import sys

from tests import http_clients
from tests.otlp_collector import OtlpCollector
from tests.services import bearer, neta_environ, start_neta_serve

TURNS = [
    {
        "tool_calls": [{"name": "list_dir", "arguments": {"path": "."}}],
        "usage": {"input_tokens": 11, "output_tokens": 2},
    },
    {"text": "Nothing much here."},
]


def run_neta(tmp_path, *options, environ=None, code=None):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": TURNS}))
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    command = [sys.executable, "-c", code] if code else [sys.executable, "-m", "neta"]
    command += ["run", "look around", "--script", str(script), "-w", str(workspace), *options]
    env = neta_environ(NETA_HOME=str(tmp_path / "home"), **(environ or {}))
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)


def otlp_environ(collector, **extra):
    return {
        "OTEL_EXPORTER_OTLP_ENDPOINT": collector.endpoint,
        "OTEL_SERVICE_NAME": "neta-under-test",
        **extra,
    }


def test_run_with_otel_exports_its_spans_over_otlp_http(tmp_path):
    with OtlpCollector() as collector:
        done = run_neta(tmp_path, "--otel", environ=otlp_environ(collector))
        assert done.returncode == 0, done.stderr
        assert done.stdout == "Nothing much here.\n"
        spans = collector.spans()
    assert set(collector.paths) == {"/v1/traces"}
    assert set(collector.content_types) == {"application/x-protobuf"}
    names = sorted(span.name for span in spans)
    assert names == ["chat", "chat", "execute_tool list_dir", "invoke_agent"]
    [run] = [s for s in spans if s.name == "invoke_agent"]
    assert all(s.trace_id == run.trace_id for s in spans)
    assert all(s.parent_span_id == run.span_id for s in spans if s is not run)
    assert {s.service for s in spans} == {"neta-under-test"}
    assert run.attributes["neta.run.outcome"] == "completed"
    assert run.attributes["gen_ai.provider.name"] == "scripted"
    [first, _] = [s for s in spans if s.name == "chat"]
    assert first.attributes["gen_ai.usage.input_tokens"] == 11
    assert "neta.run_finished" in run.events
    assert not any(k.startswith("gen_ai.input") for s in spans for k in s.attributes)


def test_chat_with_otel_exports_the_spans_of_its_turns(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": TURNS}))
    (tmp_path / "ws").mkdir()
    command = [sys.executable, "-m", "neta", "chat", "--otel", "--script", str(script)]
    with OtlpCollector() as collector:
        done = subprocess.run(
            [*command, "-w", str(tmp_path / "ws")],
            input="look around\n",  # not a terminal: lines from stdin, then its end
            env=neta_environ(NETA_HOME=str(tmp_path / "home"), **otlp_environ(collector)),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert "Nothing much here." in done.stdout
        spans = collector.spans()
    names = sorted(span.name for span in spans)
    assert names == ["chat", "chat", "execute_tool list_dir", "invoke_agent"]


def test_run_exports_when_the_standard_variable_names_otlp(tmp_path):
    with OtlpCollector() as collector:
        done = run_neta(tmp_path, environ=otlp_environ(collector, OTEL_TRACES_EXPORTER="otlp"))
        assert done.returncode == 0, done.stderr
        assert len(collector.spans()) == 4


def test_run_without_otel_exports_nothing_even_with_an_endpoint_set(tmp_path):
    with OtlpCollector() as collector:
        done = run_neta(tmp_path, environ=otlp_environ(collector))
        assert done.returncode == 0, done.stderr
        assert collector.bodies == []


def test_run_with_otel_records_content_when_the_standard_variable_says_so(tmp_path):
    capture = {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"}
    with OtlpCollector() as collector:
        done = run_neta(tmp_path, "--otel", environ=otlp_environ(collector, **capture))
        assert done.returncode == 0, done.stderr
        spans = collector.spans()
    [tool] = [s for s in spans if s.name == "execute_tool list_dir"]
    assert json.loads(tool.attributes["gen_ai.tool.call.arguments"]) == {"path": "."}


def test_run_with_otel_but_without_the_extra_exits_2_naming_what_to_install(tmp_path):
    blocked = "import sys; sys.modules['opentelemetry.sdk'] = None\n"
    code = blocked + "from neta.cli.app import main; sys.argv[0] = 'neta'; main()"
    done = run_neta(tmp_path, "--otel", code=code)
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("Error: ")
    assert "pip install 'neta[otel]'" in line


def test_serve_with_otel_exports_the_spans_of_a_rest_run(tmp_path):
    with OtlpCollector() as collector:
        proc, base = start_neta_serve(
            tmp_path,
            [{"text": "served"}],
            "--otel",
            environ=otlp_environ(collector, OTEL_SERVICE_NAME="neta-served"),
        )
        try:
            sid = http_clients.post(f"{base}/v1/sessions", headers=bearer()).json()["sessionId"]
            reply = http_clients.post(
                f"{base}/v1/sessions/{sid}/messages",
                json={"text": "hi"},
                headers=bearer(),
                timeout=30,
            )
            assert reply.json()["reply"] == "served"
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(30)
        # FastAPI traces its requests too, through the same (global) provider
        spans = [s for s in collector.spans() if "gen_ai.operation.name" in s.attributes]
    assert sorted(s.name for s in spans) == ["chat", "invoke_agent"]
    chat, run = sorted(spans, key=lambda s: s.name)
    assert run.attributes["gen_ai.conversation.id"] == sid
    assert chat.parent_span_id == run.span_id
    assert run.service == "neta-served"
