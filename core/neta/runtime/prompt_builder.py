"""The system prompt, built from the tools a session actually has."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence

from neta.catalog import Catalog
from neta.runtime.prompt_guidance import (
    IDENTITY,
    catalog_tools_missing,
    drop_lines_naming,
    get_tool_use_enforcement,
)
from neta.session import SessionContext


def collect_available_tool_names(catalog: Catalog, toolsets: Iterable[str]) -> list[str]:
    """The names of the catalog's tools in ``toolsets`` (never a hard-coded list)."""
    return catalog.tool_names(toolsets)


def build_system_prompt(
    *,
    catalog: Catalog,
    tool_names: Sequence[str],
    session: SessionContext,
    extras: Sequence[str] = (),
    today: dt.date | None = None,
    session_guidance: Mapping[str, str] | None = None,
) -> str:
    """Identity, tool-use rules, each available tool's guidance, the environment, host extras.

    ``session_guidance`` adds per-session text to a tool's block (``Tool.session_guidance``).
    A guidance line that mentions a catalog tool the session lacks is left out, so a
    third-party block cannot make the model reach for a tool it does not have.
    """
    missing = catalog_tools_missing(catalog, tool_names)
    sections = [IDENTITY, get_tool_use_enforcement(tool_names, catalog)]
    for name in tool_names:
        parts = (catalog.get(name).guidance, (session_guidance or {}).get(name, ""))
        guidance = "\n\n".join(p.strip() for p in parts if p.strip())
        if guidance:
            kept = drop_lines_naming(guidance, missing)
            if kept:
                sections.append(f"## {name}\n{kept}")
    sections.append(
        "# Environment\n"
        f"- Workspace: {session.workspace}\n"
        f"- Today: {(today or dt.date.today()).isoformat()}"
    )
    sections += [extra.strip() for extra in extras if extra.strip()]
    return "\n\n".join(sections) + "\n"
