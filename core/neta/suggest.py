"""Close-name suggestions for unknown names ("did you mean ...?")."""

from __future__ import annotations

from collections.abc import Iterable

from rapidfuzz import fuzz, process


def close_names(name: str, choices: Iterable[str], *, limit: int = 3) -> list[str]:
    """Return up to ``limit`` of ``choices`` that look like ``name``, best first."""
    found = process.extract(name, list(choices), scorer=fuzz.WRatio, limit=limit, score_cutoff=60)
    return [choice for choice, _score, _index in found]


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """``did you mean 'a' or 'b'?`` for the ``choices`` that look like ``name``; ``""`` if none."""
    close = close_names(name, choices)
    return "did you mean " + " or ".join(repr(c) for c in close) + "?" if close else ""


def unknown_name_message(kind: str, name: str, choices: Iterable[str]) -> str:
    """Say ``name`` is no known ``kind``, suggesting close names or listing the valid ones."""
    pool = sorted(set(choices))
    known = "known: " + ", ".join(pool) if pool else f"no {kind}s are available"
    return f"unknown {kind} {name!r}; {did_you_mean(name, pool) or known}"
