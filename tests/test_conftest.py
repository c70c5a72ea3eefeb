"""What the suite's own conftest gives every test: its own NETA_HOME, a lighter collector."""

from __future__ import annotations

import gc
import os
import weakref
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests import freezing
from tests.conftest import pytest_xdist_auto_num_workers

HOMES: list[str] = []


@pytest.mark.parametrize("turn", [1, 2])
def test_each_test_has_its_own_neta_home_not_made_beforehand(turn, tmp_path_factory):
    home = Path(os.environ["NETA_HOME"])
    assert not home.exists()  # Neta makes it, as for a new user
    assert home.is_relative_to(tmp_path_factory.getbasetemp())
    assert home.as_posix() not in HOMES
    HOMES.append(home.as_posix())


class Cycle:
    def __init__(self) -> None:
        self.me = self


def frozen(obj: object) -> bool:
    """Whether ``obj`` was moved out of the collector's generations by ``gc.freeze``.

    Asked of the object itself, not of ``gc.get_freeze_count()``: a thread an earlier test
    left running (a server's, a client's) may free frozen objects at any moment, and the count
    falls with each.
    """
    return not any(o is obj for o in gc.get_objects())


def test_after_a_modules_last_test_cycles_are_freed_and_what_lives_is_frozen():
    gc.disable()  # no collection but the ones under test
    try:
        garbage = Cycle()
        gone = weakref.ref(garbage)
        del garbage
        kept = Cycle()

        assert not freezing.after_test(Path("tests/a.py"), Path("tests/a.py"))  # not its last
        assert gone() is not None
        assert not frozen(kept)

        assert freezing.after_test(Path("tests/a.py"), Path("tests/b.py"))
        assert gone() is None
        assert frozen(kept)

        assert freezing.after_test(Path("tests/b.py"), None)  # the worker's last test
    finally:
        gc.enable()


def test_while_collecting_the_collector_pauses_then_frees_cycles_and_freezes_the_rest():
    with freezing.while_collecting():
        assert not gc.isenabled()
        garbage = Cycle()
        gone = weakref.ref(garbage)
        del garbage
        kept = Cycle()
        _ = [[] for _ in range(10 * gc.get_threshold()[0])]  # would set off young collections
        assert gone() is not None
    assert gc.isenabled()
    assert gone() is None
    assert frozen(kept)


@pytest.mark.parametrize(("cores", "workers"), [(1, 3), (2, 6), (3, 8), (4, 8), (16, 8)])
def test_n_auto_starts_three_workers_per_core_at_most_eight(cores, workers, monkeypatch):
    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cores)))
    config = SimpleNamespace(option=SimpleNamespace(numprocesses="auto"))
    assert pytest_xdist_auto_num_workers(config) == workers


def test_n_auto_leaves_an_explicit_count_to_xdist(monkeypatch):
    monkeypatch.setenv("PYTEST_XDIST_AUTO_NUM_WORKERS", "3")
    config = SimpleNamespace(option=SimpleNamespace(numprocesses="auto"))
    assert pytest_xdist_auto_num_workers(config) is None
