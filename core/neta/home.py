"""Where Neta keeps its own files: ``NETA_HOME``, by default ``~/.neta``."""

from __future__ import annotations

import os
from pathlib import Path

from neta.errors import ConfigError


def neta_home() -> Path:
    """``NETA_HOME`` (``~`` expanded), or ``~/.neta`` when it is not set.

    Sessions (``neta.db``), memory databases and home skills all live under it.
    """
    return Path(os.environ.get("NETA_HOME") or Path.home() / ".neta").expanduser()


def usable_home(home: Path) -> Path:
    """``home``, checked to be a folder Neta can keep things in (or make).

    Raises:
        ConfigError: it is a file.
    """
    if home.is_file():
        raise ConfigError(f"NETA_HOME {str(home)!r} is a file; set it to a directory")
    return home
