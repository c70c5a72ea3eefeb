"""Check the plugin names ``NETA_DISABLE_PLUGINS`` gives: a misspelt one would disable nothing."""

from __future__ import annotations

import importlib.metadata
import os

from rapidfuzz import process


def unknown_disabled_plugins() -> list[str]:
    """One warning per ``NETA_DISABLE_PLUGINS`` name no installed plugin has, with close names.

    (``NETA_LOAD_PLUGINS`` names are checked as the plugins load.)
    """
    raw = os.environ.get("NETA_DISABLE_PLUGINS", "")
    names = [part.strip() for part in raw.split(",") if part.strip()]
    if not names:
        return []
    known: set[str] = set()
    for ep in importlib.metadata.entry_points(group="neta"):
        known.add(ep.name)
        if ep.dist is not None:
            known.add(ep.dist.name)
    warnings = []
    for name in names:
        if name in known or name.replace("_", "-").lower() in {k.lower() for k in known}:
            continue
        close = [match for match, score, _ in process.extract(name, known, limit=2) if score >= 60]
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        warnings.append(
            f"NETA_DISABLE_PLUGINS names {name!r}, but no installed plugin has that name{hint}"
        )
    return warnings
