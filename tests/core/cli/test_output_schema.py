"""``neta run --output-schema``: the answer checked against a JSON Schema, printed as its JSON."""

import json

from tests.core.cli.cli_runner import neta_in_process
from tests.services import neta_environ

SCHEMA = {
    "type": "object",
    "properties": {"files": {"type": "integer"}, "summary": {"type": "string"}},
    "required": ["files", "summary"],
}


def neta(*args):
    return neta_in_process(*args, env=neta_environ())


def files(tmp_path, turns):
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(SCHEMA))
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": turns}))
    return str(schema), str(script)


def final(**arguments):
    return {"tool_calls": [{"name": "final_result", "arguments": arguments}]}


def test_run_with_an_output_schema_prints_the_checked_json(tmp_path):
    schema, script = files(tmp_path, [final(files=2), final(files=2, summary="two files")])
    done = neta(
        "run", "count", "-p", "scripted", "--script", script, "-w", str(tmp_path),
        "--output-schema", schema,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"files": 2, "summary": "two files"}


def test_run_json_with_an_output_schema_has_the_output(tmp_path):
    schema, script = files(tmp_path, [final(files=1, summary="one")])
    done = neta(
        "run", "count", "-p", "scripted", "--script", script, "-w", str(tmp_path),
        "--output-schema", schema, "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(json.loads(done.stdout)["text"]) == {"files": 1, "summary": "one"}


def test_an_answer_that_never_fits_the_schema_fails_with_the_last_answer(tmp_path):
    schema, script = files(tmp_path, [final(files="many")] * 3)
    done = neta(
        "run", "count", "-p", "scripted", "--script", script, "-w", str(tmp_path),
        "--output-schema", schema,
    )  # fmt: skip
    assert done.returncode == 1
    assert done.stdout == ""
    assert "Error:" in done.stderr
    assert "did not match" in done.stderr
    assert "many" in done.stderr


def test_an_unreadable_schema_file_is_a_usage_error(tmp_path):
    _, script = files(tmp_path, [final(files=1, summary="x")])
    done = neta(
        "run", "count", "-p", "scripted", "--script", script, "-w", str(tmp_path),
        "--output-schema", str(tmp_path / "missing.json"),
    )  # fmt: skip
    assert done.returncode == 2
    assert "missing.json" in done.stderr
