"""Where Neta keeps its own files: ``NETA_HOME``, by default ``~/.neta``."""

from __future__ import annotations

import os
from pathlib import Path


def neta_home() -> Path:
    """``NETA_HOME`` (``~`` expanded), or ``~/.neta`` when it is not set.

    Sessions (``neta.db``), memory databases and home skills all live under it.
    """
    return Path(os.environ.get("NETA_HOME") or Path.home() / ".neta").expanduser()
