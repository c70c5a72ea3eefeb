"""A second process flips a workspace folder between a directory and a symlink out of it.

File tools resolve and use a path in one step (descriptor-pinned), so however the flips fall,
no byte is ever read from or written to the folder outside.
"""

import contextlib
import subprocess
import sys
import time

import pytest

import neta

FLIP_SECONDS = 1.0  # some hundreds of tool calls against some 10**5 flips; the floors are below
MIN_CALLS = 50
"""The calls made while the folder flips, however long a busy machine takes to make them."""

_FLIPPER = r"""
import ctypes, os, signal, sys, time

workspace, outside, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
stop = []
signal.signal(signal.SIGTERM, lambda *_: stop.append(True))
folder = os.path.join(workspace, "d").encode()
parked = os.path.join(workspace, ".parked").encode()
os.symlink(outside, parked)
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
print("ready", flush=True)
flips = 0
deadline = time.monotonic() + seconds  # in case nobody says stop
while not stop and time.monotonic() < deadline:
    # swap d and .parked in one step: d is the directory or the symlink out, never missing
    if libc.renameat2(AT_FDCWD, folder, AT_FDCWD, parked, RENAME_EXCHANGE) != 0:
        raise OSError(ctypes.get_errno(), "renameat2")
    flips += 1
print(flips, flush=True)
"""


@pytest.fixture
def flipped(session, tmp_path):
    """``d/x.txt`` inside and ``outside/x.txt`` outside; ``run(body)`` flips ``d`` meanwhile."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.txt").write_text("OUTSIDE SECRET\n")
    (session.workspace / "d").mkdir()
    (session.workspace / "d" / "x.txt").write_text("inside 0\n")

    def run(body):
        flipper = subprocess.Popen(
            [sys.executable, "-c", _FLIPPER, str(session.workspace), str(outside), "60"],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert flipper.stdout.readline().strip() == "ready"
        calls = 0
        started = time.monotonic()
        # at least FLIP_SECONDS and MIN_CALLS: a busy machine makes fewer calls a second
        while calls < MIN_CALLS or time.monotonic() - started < FLIP_SECONDS:
            assert flipper.poll() is None, "the flipper stopped before the calls were made"
            body(calls)
            calls += 1
        flipper.terminate()
        rest, _ = flipper.communicate(timeout=30)
        flips = int(rest.split()[-1])
        return calls, flips

    return outside, run


def test_read_and_write_while_a_folder_flips_never_touch_the_outside(call, flipped):
    outside, run = flipped
    seen = []

    def body(number):
        with contextlib.suppress(neta.ToolError):
            call("write_file", path="d/x.txt", content=f"inside {number}\n")
        with contextlib.suppress(neta.ToolError):
            seen.append(call("read_file", path="d/x.txt").content)

    calls, flips = run(body)
    assert flips >= 1000
    assert calls >= MIN_CALLS
    assert seen, "no read succeeded while the folder flipped"
    assert not [text for text in seen if "OUTSIDE" in text]
    assert sorted(p.name for p in outside.iterdir()) == ["x.txt"]
    assert (outside / "x.txt").read_text() == "OUTSIDE SECRET\n"


def test_patch_while_a_folder_flips_never_touches_the_outside(call, flipped):
    outside, run = flipped

    def body(number):
        with contextlib.suppress(neta.ToolError):
            call("patch", path="d/x.txt", old_string="x.txt", new_string="y")
        with contextlib.suppress(neta.ToolError):
            call("list_dir", path="d")

    (outside / "x.txt").write_text("OUTSIDE SECRET in x.txt\n")
    calls, flips = run(body)
    assert flips >= 1000
    assert calls >= MIN_CALLS
    assert sorted(p.name for p in outside.iterdir()) == ["x.txt"]
    assert (outside / "x.txt").read_text() == "OUTSIDE SECRET in x.txt\n"
