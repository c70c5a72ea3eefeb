"""A lighter cycle collector: paused while collecting, frozen after a module (``freezing.py``)."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

from tests.suite_speed import freezing


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
