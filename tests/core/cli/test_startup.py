"""What a ``neta`` process loads and keeps as it starts (``bench/startup_bench.py`` times it).

These guard against gross regressions only: a command that does not serve, or talk to a
model through an SDK, must not pay for loading a web framework or an SDK.
"""

import gc
import json
import os
import subprocess
import sys

from tests.core.cli.cli_runner import neta_in_process

# Loaded only by the commands that use them: serving, a model SDK, MCP, a terminal prompt.
HEAVY = (
    "fastapi",
    "starlette",
    "uvicorn",
    "openai",
    "anthropic",
    "aiohttp",
    "mcp",
    "prompt_toolkit",
    "neta.server",
)

# Runs ``python -m neta ARGS`` and reports, as the process exits, which of HEAVY it loaded
# and how many objects it had moved out of the collector's way.
_REPORTER = """
import atexit, gc, json, runpy, sys
heavy, out = sys.argv[1].split(","), sys.argv[2]
def report():
    with open(out, "w") as f:
        json.dump({"loaded": [m for m in heavy if m in sys.modules],
                   "frozen": gc.get_freeze_count()}, f)
atexit.register(report)
sys.argv = ["neta", *sys.argv[3:]]
runpy.run_module("neta", run_name="__main__", alter_sys=True)
"""


def started(tmp_path, *args):
    """``neta ARGS`` as its own process: its exit code and what ``_REPORTER`` saw."""
    out = tmp_path / "report.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
    done = subprocess.run(
        [sys.executable, "-c", _REPORTER, ",".join(HEAVY), str(out), *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done, json.loads(out.read_text())


def test_version_loads_no_server_no_model_sdk_and_no_prompt(tmp_path):
    done, report = started(tmp_path, "--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("neta ")
    assert report["loaded"] == []


def test_a_scripted_run_loads_no_server_and_no_model_sdk(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"text": "hello"}]}))
    done, report = started(tmp_path, "run", "--script", str(script), "hi")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "hello\n"
    assert report["loaded"] == []


def test_a_neta_process_keeps_its_start_up_objects_out_of_later_collections(tmp_path):
    done, report = started(tmp_path, "--version")
    assert done.returncode == 0, done.stderr
    assert report["frozen"] > 10_000  # the modules, classes and schemas it loaded


def test_main_called_from_python_leaves_the_callers_collector_alone():
    frozen, threshold = gc.get_freeze_count(), gc.get_threshold()
    done = neta_in_process("--version")
    assert done.returncode == 0, done.stderr
    # nothing more is frozen (what the suite froze may be freed meanwhile: the count can fall)
    assert gc.get_freeze_count() <= frozen
    assert gc.get_threshold() == threshold


def test_a_host_loading_the_plugins_loads_no_command_line_framework():
    """A host (a server worker, an app embedding Neta) gets the plugins without typer or rich."""
    probe = (
        "import sys; from neta import create_plugin_manager; create_plugin_manager(); "
        "print(','.join(m for m in ('typer', 'click', 'rich', *sys.argv[1:]) if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, *HEAVY], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "\n"
