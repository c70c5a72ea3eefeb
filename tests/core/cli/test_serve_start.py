"""A ``neta serve`` that cannot start: one ``Error:`` line and exit 2, as a real process."""

import json
import socket
import subprocess
import sys

from tests.services import neta_environ


def _serve(tmp_path, home, *options, code=None):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"text": "hi"}]}))
    (tmp_path / "ws").mkdir(exist_ok=True)
    neta = [sys.executable, "-c", code] if code else [sys.executable, "-m", "neta"]
    command = [*neta, "serve", "-p", "scripted", "--script", str(script)]
    command += ["-w", str(tmp_path / "ws"), *options]
    environ = neta_environ(NETA_HOME=str(home), NETA_TOKEN="t")
    return subprocess.run(command, env=environ, capture_output=True, text=True, timeout=60)


def _one_error_line(done):
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("Error: ")
    return lines[0]


def test_serve_on_a_busy_port_exits_2_with_one_line(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = _serve(tmp_path, tmp_path / "home", "--port", str(port))
    assert f"port {port} on 127.0.0.1 is already in use" in _one_error_line(done)


def test_serve_on_a_database_file_that_is_no_database_exits_2_with_one_line(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "neta.db").write_text("not a database\n")
    line = _one_error_line(_serve(tmp_path, home, "--port", "0"))
    assert line == f"Error: cannot start: file is not a database (store: SQLite {home}/neta.db)"


def test_serve_whose_home_cannot_be_made_exits_2_with_one_line(tmp_path):
    (tmp_path / "a-file").write_text("")
    home = tmp_path / "a-file" / "home"  # under a file: no folder can be made there
    line = _one_error_line(_serve(tmp_path, home, "--port", "0"))
    assert line.startswith("Error: cannot start: ")
    assert "not a directory" in line


# The store fails once the app is made, as the hub starts (a disk filling up, a database going
# away in between): the hub's start raises as the store would.
FAILING_START = """
import sys
from neta.errors import StorageUnavailable
from neta.hosting.hub import SessionHub

async def start(self):
    raise StorageUnavailable("the session store cannot write: no space left on the device")

SessionHub.start = start
from neta.cli.app import main
sys.argv[0] = "neta"
main()
"""


def test_serve_whose_hub_cannot_start_exits_2_with_one_line_before_serving(tmp_path):
    done = _serve(tmp_path, tmp_path / "home", "--port", "0", code=FAILING_START)
    line = _one_error_line(done)
    assert "no space left on the device" in line
    assert "Neta serving on" not in done.stdout
