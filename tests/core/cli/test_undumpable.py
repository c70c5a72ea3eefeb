"""A ``neta`` process is undumpable: another process of the same user cannot read its
environment or its memory (where the token and the API keys are)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.processes import becomes_undumpable, observable_group
from tests.services import neta_environ

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="prctl and /proc are Linux's")

_DUMPABLE_BEFORE_AND_AFTER = """
import ctypes
from neta.cli.undumpable import make_undumpable
libc = ctypes.CDLL(None)
before = libc.prctl(3, 0, 0, 0, 0)  # PR_GET_DUMPABLE
make_undumpable()
print(before, libc.prctl(3, 0, 0, 0, 0))
"""


def test_make_undumpable_clears_the_process_dumpable_flag():
    done = subprocess.run(
        [sys.executable, "-c", _DUMPABLE_BEFORE_AND_AFTER],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "1 0\n"


COMMANDS = {
    "serve": ["serve", "--port", "0", "--script", "{script}"],
    "mcp serve": ["mcp", "serve"],
    "run": ["run", "hi", "--script", "{script}"],
    "chat": ["chat", "--script", "{script}"],
}


@pytest.mark.parametrize("command", COMMANDS.values(), ids=COMMANDS.keys())
def test_a_neta_command_makes_its_process_undumpable_as_it_starts(tmp_path, command):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"text": "much later", "delay": 60}]}))
    args = [a.format(script=script) for a in command]
    proc = subprocess.Popen(
        [sys.executable, "-m", "neta", *args, "-w", str(tmp_path)],
        env=neta_environ(NETA_HOME=str(tmp_path / "home")),
        stdin=subprocess.PIPE,  # chat and mcp serve wait on it
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        group=observable_group(),
    )
    try:
        made = becomes_undumpable(proc.pid)
        assert proc.poll() is None, proc.communicate()[1].decode()  # (an ended one looks so)
        assert made
        if observable_group() is None:  # not root: refused as any process of this user is
            with pytest.raises(PermissionError):
                Path(f"/proc/{proc.pid}/environ").read_bytes()
    finally:
        proc.kill()
        proc.communicate()
