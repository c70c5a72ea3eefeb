"""The project's own sources, compiled once for the whole run.

pip compiles what it installs into site-packages, but an editable install leaves the project's
packages as sources. Where ``PYTHONDONTWRITEBYTECODE`` is set (as in CI), no process writes
their bytecode either, so each of the run's ~60 Python processes (the xdist workers, every
``neta`` the tests start, the servers) compiled neta and its plugins again: about 10 s of
the suite's CPU. The controller compiles them once, before any worker starts, into their
usual ``__pycache__`` folders; a process importing them then only checks that the bytecode is
current. Folders whose name starts with a dot and virtual environments are left alone, and so
are test modules and conftests: pytest compiles those itself, rewriting their asserts.
"""

from __future__ import annotations

import importlib.util
import os
import py_compile
from pathlib import Path


def compile_sources(root: Path) -> int:
    """Compile every ``.py`` file under ``root`` whose bytecode is missing or out of date;
    the number compiled. A file that does not compile is left for its import to report."""
    compiled = 0
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = [
            name
            for name in subfolders
            if not name.startswith(".")
            and name != "__pycache__"
            and not (Path(folder, name) / "pyvenv.cfg").exists()
        ]
        for name in files:
            source = Path(folder, name)
            if _compiled_by_import(name) and not _current(source):
                try:
                    py_compile.compile(str(source), doraise=True)
                except (py_compile.PyCompileError, OSError):
                    continue
                compiled += 1
    return compiled


def _compiled_by_import(name: str) -> bool:
    test_module = name.startswith("test_") or name == "conftest.py"
    return name.endswith(".py") and not test_module


def _current(source: Path) -> bool:
    """Whether the bytecode of ``source`` is there and made from its present text (the
    timestamp check the import system makes: its header's mtime and size)."""
    try:
        stat = source.stat()
        with open(importlib.util.cache_from_source(str(source)), "rb") as cached:
            header = cached.read(16)
    except OSError:
        return False
    return (
        header[:4] == importlib.util.MAGIC_NUMBER
        and int.from_bytes(header[4:8], "little") == 0  # timestamp-based, as py_compile writes
        and int.from_bytes(header[8:12], "little") == int(stat.st_mtime) & 0xFFFF_FFFF
        and int.from_bytes(header[12:16], "little") == stat.st_size & 0xFFFF_FFFF
    )
