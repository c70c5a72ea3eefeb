"""The run compiles the project's own sources once (``bytecode.py``)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

import neta.catalog
import neta_base
from tests.suite_speed import bytecode


def cached(source: Path) -> Path:
    return Path(importlib.util.cache_from_source(str(source)))


def test_sources_are_compiled_once_even_where_python_writes_no_bytecode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "a.py").write_text("A = 1\n")
    (tmp_path / "pkg" / "sub" / "b.py").write_text("B = 2\n")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "c.py").write_text("C = 3\n")
    (tmp_path / "pkg" / "test_d.py").write_text("def test_d(): assert True\n")  # pytest's own
    assert bytecode.compile_sources(tmp_path) == 2
    assert cached(tmp_path / "pkg" / "a.py").is_file()
    assert cached(tmp_path / "pkg" / "sub" / "b.py").is_file()
    assert not cached(tmp_path / ".hidden" / "c.py").exists()
    assert not cached(tmp_path / "pkg" / "test_d.py").exists()
    assert bytecode.compile_sources(tmp_path) == 0  # up to date: nothing compiled again
    (tmp_path / "pkg" / "a.py").write_text("A = 10  # changed\n")
    assert bytecode.compile_sources(tmp_path) == 1


def test_the_projects_sources_are_compiled_for_the_processes_of_this_run() -> None:
    for module in (neta.catalog, neta_base):
        assert module.__file__ is not None
        assert cached(Path(module.__file__)).is_file(), module.__name__
