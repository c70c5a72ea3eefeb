"""``neta serve --workers N``: uvicorn's worker processes, each start, death and restart logged.

uvicorn's supervisor starts the workers, pings them, and replaces one that died or hangs; it
says so only at its info level, which ``neta serve`` does not show. This one says it, one line
each on standard error (after the time, the level and ``neta.serve:``), as ``key=value``
fields an operator can grep for::

    event=worker_started pid=4242 slot=0
    event=worker_died pid=4242 slot=0 exit=-9 signal=SIGKILL
    event=worker_respawned pid=4300 slot=0 replaces=4242
    event=worker_stopped pid=4300 slot=0 exit=0
"""

from __future__ import annotations

import logging
import signal
import sys
from typing import Any

import uvicorn
from uvicorn.supervisors import Multiprocess

_log = logging.getLogger("neta.serve")


def _show_on_stderr() -> None:
    """Send the supervisor's lines to standard error (once), whatever uvicorn's log level."""
    if _log.handlers:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    _log.addHandler(handler)
    _log.setLevel(logging.INFO)
    _log.propagate = False


def _ending(exitcode: int | None) -> str:
    """How a worker process ended, as log fields (``exit=-9 signal=SIGKILL``)."""
    if exitcode is None or exitcode >= 0:
        return f"exit={exitcode}"
    try:
        name = signal.Signals(-exitcode).name
    except ValueError:
        name = str(-exitcode)
    return f"exit={exitcode} signal={name}"


class _Supervisor(Multiprocess):
    """uvicorn's supervisor, telling the log what becomes of each worker."""

    def init_processes(self) -> None:
        super().init_processes()
        for slot, process in enumerate(self.processes):
            _log.info("event=worker_started pid=%s slot=%d", process.pid, slot)

    def keep_subprocess_alive(self) -> None:
        before = list(self.processes)
        super().keep_subprocess_alive()
        for slot, (old, new) in enumerate(zip(before, self.processes, strict=False)):
            if new is not old:
                _log.warning(
                    "event=worker_died pid=%s slot=%d %s", old.pid, slot, _ending(old.exitcode)
                )
                _log.warning(
                    "event=worker_respawned pid=%s slot=%d replaces=%s", new.pid, slot, old.pid
                )

    def join_all(self) -> None:
        super().join_all()
        for slot, process in enumerate(self.processes):
            _log.info(
                "event=worker_stopped pid=%s slot=%d %s",
                process.pid,
                slot,
                _ending(process.exitcode),
            )


def run_workers(app: str, workers: int, options: dict[str, Any]) -> None:
    """Serve the app factory ``app`` (an import string) in ``workers`` processes until stopped.

    ``options`` are ``uvicorn.Config``'s; the port is bound once, here, and shared.
    """
    config = uvicorn.Config(app, factory=True, workers=workers, **options)
    _show_on_stderr()
    sock = config.bind_socket()
    try:
        _Supervisor(config, sockets=[sock]).run()
    except KeyboardInterrupt:  # a second Ctrl-C while the workers stop
        pass
    finally:
        sock.close()
