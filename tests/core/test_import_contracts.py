"""The import-linter contract that keeps plugins on the public API: names, not just modules."""

import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

GOOD = """
import neta
import neta.todos
from neta import ToolError, hookimpl
from neta.crew import CREW_PARENT
from neta.events import TodoUpdate
from neta.fuzzy_match import fuzzy_replace

LIMIT = neta.todos.MAX_TODOS
SPEC = neta.ToolsetSpec(name="x", requires=CREW_PARENT)
KINDS = (TodoUpdate, ToolError, hookimpl, fuzzy_replace, neta.SessionContext.capabilities)
"""

BAD = """
from typing import TYPE_CHECKING

import neta
import neta.runtime.agent as agent_module
from neta import MAX_TODOS
from neta.fuzzy_match import _strategies
from neta.session import SessionContext
from neta.todos import _check_rules

if TYPE_CHECKING:
    from neta.hosting.hub import SessionHub

LIMIT = neta.CREW_PARENT
AGENT = neta.runtime.agent.Agent
"""


@pytest.fixture
def packages(tmp_path, monkeypatch):
    """Write plugin packages under ``tmp_path`` (on ``sys.path``); return their directory."""
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))

    def write(name, source):
        package = root / name
        package.mkdir()
        (package / "__init__.py").write_text('"""A plugin."""\n')
        (package / "tool.py").write_text(textwrap.dedent(source))
        return package

    write.root = root
    return write


def public_modules():
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]
    [contract] = [c for c in config["contracts"] if c["type"] == "public_api"]
    return contract


def test_the_contract_covers_every_plugin_and_lists_the_public_modules():
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]
    plugins = {name for name in config["root_packages"] if name != "neta"}
    assert plugins >= {path.name for path in REPO.glob("plugins/*/neta_*")}
    assert "neta_tools_hello" in plugins
    contract = public_modules()
    assert set(contract["source_modules"]) == plugins
    assert contract["public_modules"][0] == "neta"


def test_imports_of_public_names_and_modules_are_kept(packages):
    from lint.public_api import violations_in

    packages("neta_tmp_good", GOOD)
    assert violations_in("neta_tmp_good.tool", public_modules()["public_modules"]) == []


def test_internal_modules_and_names_are_each_reported_with_their_line(packages):
    from lint.public_api import violations_in

    packages("neta_tmp_bad", BAD)
    found = violations_in("neta_tmp_bad.tool", public_modules()["public_modules"])
    assert found == [
        "neta_tmp_bad.tool:5: imports neta.runtime.agent, an internal module",
        "neta_tmp_bad.tool:6: imports MAX_TODOS from neta, which does not export it",
        "neta_tmp_bad.tool:7: imports _strategies from neta.fuzzy_match, which does not export it",
        "neta_tmp_bad.tool:8: imports neta.session, an internal module",
        "neta_tmp_bad.tool:9: imports _check_rules from neta.todos, which does not export it",
        "neta_tmp_bad.tool:12: imports neta.hosting.hub, an internal module",
        "neta_tmp_bad.tool:14: uses neta.CREW_PARENT, which neta does not export",
        "neta_tmp_bad.tool:15: uses neta.runtime, which neta does not export",
    ]


def test_lint_imports_fails_on_a_plugin_using_an_internal_name(packages, tmp_path):
    packages("neta_tmp_bad", BAD)
    config = tmp_path / "contracts.toml"
    config.write_text(
        textwrap.dedent(
            """
            [tool.importlinter]
            root_packages = ["neta_tmp_bad"]
            contract_types = ["public_api: lint.public_api.PublicApiContract"]

            [[tool.importlinter.contracts]]
            name = "Plugins use only public names"
            type = "public_api"
            source_modules = ["neta_tmp_bad"]
            public_modules = ["neta", "neta.todos", "neta.fuzzy_match"]
            """
        )
    )
    lint_imports = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run(
        [str(lint_imports), str(config), "--no-cache"],
        cwd=REPO,
        env={"PYTHONPATH": str(packages.root), "PATH": str(lint_imports.parent)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Plugins use only public names BROKEN" in done.stdout
    assert "imports MAX_TODOS from neta, which does not export it" in done.stdout
