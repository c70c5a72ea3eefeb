"""Tracing off (the default): nothing of OpenTelemetry is loaded, no span is made."""

import inspect
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import neta
import neta.tracing
from neta.errors import ConfigError
from tests.services import neta_environ

REPO = Path(__file__).resolve().parents[3]

SCRIPTED_RUN = """
    import asyncio, sys
    import neta
    from tests.core.runtime import kit

    pm = neta.create_plugin_manager(load_entrypoints=False, plugins=[("kit", kit)])
    turns = [
        {"tool_calls": [{"name": "echo", "arguments": {"text": "x"}}]},
        {"text": "done"},
    ]
    agent = neta.Agent(
        provider=neta.ScriptedProvider(turns), plugin_manager=pm, permissions="auto", name="a"
    )
    result = asyncio.run(agent.run("go"))
    assert result.outcome == "completed", result.reason
    print(sorted(name for name in sys.modules if name.split(".")[0] == "opentelemetry"))
"""


def run_python(code, *, block=()):
    """Run ``code`` in a fresh interpreter from the repository, with ``block`` not importable."""
    blocked = "".join(f"sys.modules[{name!r}] = None\n" for name in block)
    source = f"import sys\n{blocked}" + textwrap.dedent(code)
    return subprocess.run(
        [sys.executable, "-c", source],
        env=neta_environ(),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_run_without_tracing_imports_nothing_of_opentelemetry():
    done = run_python(SCRIPTED_RUN)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_run_without_opentelemetry_installed_runs_as_ever():
    done = run_python(SCRIPTED_RUN, block=["opentelemetry"])
    assert done.returncode == 0, done.stderr


def test_enabling_without_opentelemetry_installed_says_what_to_install():
    code = """
        import neta.tracing
        from neta.errors import ConfigError
        try:
            neta.tracing.enable()
        except ConfigError as exc:
            print(exc)
    """
    done = run_python(code, block=["opentelemetry"])
    assert done.returncode == 0, done.stderr
    assert "pip install 'neta[otel]'" in done.stdout
    assert neta.tracing.INSTALL_HINT == "pip install 'neta[otel]'"


def test_exporting_without_the_sdk_installed_says_what_to_install():
    code = """
        import neta.tracing
        from neta.errors import ConfigError
        try:
            neta.tracing.enable_otlp()
        except ConfigError as exc:
            print(exc)
        print(neta.tracing.active())
    """
    done = run_python(code, block=["opentelemetry.sdk"])
    assert done.returncode == 0, done.stderr
    said, active = done.stdout.splitlines()
    assert "pip install 'neta[otel]'" in said
    assert active == "None"


def test_tracing_is_off_until_enabled():
    assert neta.tracing.active() is None


def test_a_grpc_protocol_is_refused_by_name(monkeypatch):
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
    with pytest.raises(ConfigError, match="OTEL_EXPORTER_OTLP_PROTOCOL=grpc"):
        neta.tracing.enable_otlp()
    assert neta.tracing.active() is None


def test_the_tracing_module_exports_a_sorted_documented_all():
    from tests.core.test_public_api import defined_public_names, isort_key

    exported = neta.tracing.__all__
    assert exported == sorted(exported, key=isort_key)
    for name in exported:
        value = getattr(neta.tracing, name)
        if inspect.isfunction(value):
            assert inspect.getdoc(value), name
    assert defined_public_names(neta.tracing) == set(exported)
    assert "``neta.tracing``" in neta.__doc__
