"""The suite-speed plugin's hooks, loaded by ``tests/conftest.py``; the work is in the modules
each hook names (README.md says what each does and why)."""

from __future__ import annotations

import os

import pytest

from tests.suite_speed import bytecode, freezing, scratch, shares, workers


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto``: three workers per core, at most eight (``workers.py``)."""
    return workers.auto_count(config.option.numprocesses, os.environ)


def pytest_addoption(parser: pytest.Parser) -> None:
    shares.addoption(parser)


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # the controller, before any worker starts
        bytecode.compile_sources(config.rootpath)
        folder = scratch.memory_tmpdir(os.environ)  # pytest's tmp_path follows, bar --basetemp
        if folder is not None:  # workers and the processes tests start inherit TMPDIR
            scratch.use(folder, os.environ)
    shares.register(config)  # with -n, each worker collects and runs only its share


@pytest.hookimpl(wrapper=True)
def pytest_collection(session: pytest.Session) -> object:
    with freezing.while_collecting():  # the xdist controller collects no tests: it just pauses
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> object:
    outcome = yield
    freezing.after_test(item.path, nextitem.path if nextitem else None)
    return outcome
