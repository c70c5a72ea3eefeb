"""Fixtures shared by every test: plugin managers built from named plugins, temp plugins."""

from __future__ import annotations

import importlib
import itertools
import os
import ssl
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.services import (  # noqa: F401 (fixtures)
    postgres_server,
    postgres_url,
    redis_server,
    redis_url,
)

if TYPE_CHECKING:  # the xdist controller runs no test: it need not import neta
    import neta
    import neta.plugins

pytest_plugins = ["tests.suite_speed.plugin"]  # the suite's own speed: its README says how

_HOMES = itertools.count()


@pytest.fixture(autouse=True)
def _own_neta_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every test gets its own NETA_HOME: no test reads or writes another's (or the user's).

    It is not made: Neta makes it when it first keeps something there, as for a new user. Most
    tests never do, and making a numbered folder per test first scanned all those before it.
    """
    home = tmp_path_factory.getbasetemp() / "neta-homes" / f"{os.getpid()}-{next(_HOMES)}"
    monkeypatch.setenv("NETA_HOME", str(home))


@pytest.fixture
def make_pm() -> Callable[..., neta.plugins.NetaPluginManager]:
    """Build a plugin manager holding exactly the given ``name=plugin`` pairs (no entry points)."""

    import neta

    def build(**plugins: object) -> neta.plugins.NetaPluginManager:
        return neta.create_plugin_manager(load_entrypoints=False, plugins=plugins.items())

    return build


@pytest.fixture
def session(tmp_path: Path) -> neta.SessionContext:
    """A terminal session rooted at a fresh temporary workspace."""
    import neta

    workspace = tmp_path / "workspace"
    workspace.mkdir()
    return neta.SessionContext(workspace=workspace, entry="cli")


class PluginDir:
    """A directory on ``sys.path`` where tests install throw-away plugin distributions."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def add(self, dist: str, module: str, source: str, *, entry_name: str | None = None) -> None:
        """Write module ``module`` and a ``.dist-info`` declaring it as a ``neta`` entry point."""
        (self.root / f"{module}.py").write_text(textwrap.dedent(source))
        info = self.root / f"{dist.replace('-', '_')}-0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
        (info / "entry_points.txt").write_text(f"[neta]\n{entry_name or module} = {module}\n")
        importlib.invalidate_caches()

    def env(self, **extra: str) -> dict[str, str]:
        """An environment for a subprocess that sees these plugins."""
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(self.root), env.get("PYTHONPATH", "")])
        env.pop("NETA_LOAD_PLUGINS", None)
        env.pop("NETA_DISABLE_PLUGINS", None)
        env.update(extra)
        return env

    def neta(
        self,
        *args: str,
        input_text: str | None = None,
        encoding: str | None = None,
        together: bool = False,
        **env: str,
    ) -> subprocess.CompletedProcess[str]:
        """Run ``neta ARGS`` in this process, seeing these plugins and only them (of the temp ones).

        Nothing the command imported from this directory stays imported afterwards, so the next
        command (or test) loads its plugins afresh, as a new process would.
        """
        from tests.core.cli.cli_runner import neta_in_process

        before = set(sys.modules)
        try:
            return neta_in_process(
                *args,
                input_text=input_text,
                env=self.env(**env),
                encoding=encoding,
                together=together,
            )
        finally:
            for name in set(sys.modules) - before:
                if self._from_here(sys.modules[name]):
                    del sys.modules[name]

    def _from_here(self, module: object) -> bool:
        origin = getattr(module, "__file__", None)
        return origin is not None and Path(origin).is_relative_to(self.root)

    def neta_process(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        """Run ``python -m neta ARGS`` in a subprocess that sees these plugins."""
        return subprocess.run(
            [sys.executable, "-m", "neta", *args],
            capture_output=True,
            text=True,
            env=self.env(**env),
            timeout=60,
            check=False,
        )


@pytest.fixture
def certificate_loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each loading of CA certificates into a TLS context from here on: a file or folder given
    (``load_verify_locations``) or OpenSSL's defaults (``set_default_verify_paths``)."""
    loads: list[str] = []
    for name in ("load_verify_locations", "set_default_verify_paths"):
        method = getattr(ssl.SSLContext, name)

        def counted(context: ssl.SSLContext, *args: Any, _m: Any = method, **kwargs: Any) -> Any:
            loads.append(_m.__name__)
            return _m(context, *args, **kwargs)

        monkeypatch.setattr(ssl.SSLContext, name, counted)
    return loads


@pytest.fixture
def plugin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PluginDir:
    """A fresh ``PluginDir``, also on this process's ``sys.path``."""
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.delenv("NETA_LOAD_PLUGINS", raising=False)
    monkeypatch.delenv("NETA_DISABLE_PLUGINS", raising=False)
    return PluginDir(root)
