"""Fixtures for the host tests: a real server replaying a script per session."""

import pytest

import neta
import neta_base.plugin
import neta_interaction.plugin
import neta_planning.plugin
from neta.hosting.hub import HostConfig
from neta.providers.scripted import ScriptedProvider
from tests.core.gateway.server_harness import start_server

ASK = {
    "tool_calls": [
        {"name": "clarify", "arguments": {"question": "Which colour?", "choices": ["red", "blue"]}}
    ]
}


def builtin_pm(*extra):
    """A plugin manager with the built-in plugins these tests use, and ``extra`` ones."""
    return neta.create_plugin_manager(
        load_entrypoints=False,
        plugins=[
            ("base", neta_base.plugin),
            ("planning", neta_planning.plugin),
            ("interaction", neta_interaction.plugin),
            *extra,
        ],
    )


@pytest.fixture
def serve(tmp_path):
    """Start servers whose sessions each replay ``turns``; all are stopped at the end."""
    running = []
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)

    def start(turns, **options):
        options.setdefault("home", tmp_path / "home")
        options.setdefault("provider_factory", lambda: ScriptedProvider(turns))
        options.setdefault("plugin_manager", builtin_pm())
        config = HostConfig(workspace=workspace, **options)
        server = start_server(config)
        running.append(server)
        return server

    yield start
    for server in running:
        if server.thread.is_alive():
            server.stop()
