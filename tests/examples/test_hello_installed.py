"""The example plugin, installed for real, is found through its entry point.

A real ``neta`` process calls it once; the other commands run in-process.
"""

import json
import subprocess
import sys

import neta
from tests.core.cli.cli_runner import neta_in_process
from tests.services import neta_environ


def _env(env_extra):
    return neta_environ(**(env_extra or {}))


def neta_cli(*args, env_extra=None):
    return neta_in_process(*args, env=_env(env_extra))


def neta_process(*args, env_extra=None):
    return subprocess.run(
        [sys.executable, "-m", "neta", *args],
        capture_output=True,
        text=True,
        env=_env(env_extra),
        timeout=60,
        check=False,
    )


def test_installed_example_plugin_is_discovered_through_its_entry_point():
    pm = neta.create_plugin_manager(allow=["neta-tools-hello"])
    info = pm.info("hello")
    assert info.distribution == "neta-tools-hello"
    assert info.entry_point == "neta:hello = neta_tools_hello"
    assert not info.builtin
    assert "hello" in pm.catalog()


def test_installed_example_plugin_is_callable_from_the_cli():
    done = neta_process("tools", "call", "hello", "--args", '{"name": "Lin", "shout": true}')
    assert done.returncode == 0, done.stderr
    assert done.stdout == "HELLO, LIN!\n"


def test_installed_example_plugin_is_gone_when_disabled():
    done = neta_cli("tools", "list", "--json", env_extra={"NETA_DISABLE_PLUGINS": "hello"})
    assert done.returncode == 0, done.stderr
    assert "hello" not in {row["name"] for row in json.loads(done.stdout)}
    plugins = json.loads(
        neta_cli("plugins", "--json", env_extra={"NETA_DISABLE_PLUGINS": "hello"}).stdout
    )
    assert "hello" not in {row["name"] for row in plugins}
