"""``neta serve --workers N`` logs a line when a worker starts, dies, is replaced, stops."""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path

from tests.processes import pool_workers, wait_gone
from tests.services import start_neta_serve


def lines_saying(log: Path, event: str, seconds: float = 30.0, count: int = 1) -> list[str]:
    """The log's lines for ``event``, once there are ``count`` of them."""
    deadline = time.monotonic() + seconds
    while True:
        found = [line for line in log.read_text().splitlines() if f"event={event} " in line]
        if len(found) >= count or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def fields(line: str) -> dict[str, str]:
    return dict(re.findall(r"(\w+)=(\S+)", line))


def test_a_killed_worker_is_logged_as_dead_and_its_replacement_as_started(tmp_path, redis_url):
    proc, _ = start_neta_serve(
        tmp_path, [], "--workers", "2", environ={"NETA_REDIS_URL": redis_url}
    )
    log = tmp_path / "serve.log"
    try:
        workers = pool_workers(proc.pid, 2)
        started = lines_saying(log, "worker_started", count=2)
        assert sorted(int(fields(line)["pid"]) for line in started) == workers
        os.kill(workers[0], signal.SIGKILL)
        assert wait_gone([workers[0]]) == []
        (died,) = lines_saying(log, "worker_died")
        (replaced,) = lines_saying(log, "worker_respawned")
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(30)
    assert fields(died)["pid"] == str(workers[0])
    assert fields(died)["signal"] == "SIGKILL"
    replacement = int(fields(replaced)["pid"])
    assert fields(replaced)["replaces"] == str(workers[0])
    assert replacement not in workers
    assert {fields(line)["pid"] for line in lines_saying(log, "worker_stopped", count=2)} == {
        str(workers[1]),
        str(replacement),
    }
