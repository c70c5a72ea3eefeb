"""``ToolsetPlugin``: the toolset, schema and build hooks of a plugin, written once."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from neta.catalog import ToolSchema
from neta.hookspecs import hookimpl
from neta.session import SessionContext
from neta.tools import Tool
from neta.toolsets import ToolsetSpec

__all__ = ["ToolsetPlugin"]


class ToolsetPlugin:
    """A plugin that announces toolsets, registers their schemas and builds their tools.

    It implements the three hooks most toolset plugins would otherwise write by hand:
    ``neta_toolsets`` returns the given toolsets, ``neta_tools`` the given schemas, and
    ``neta_build_tools(session)`` calls each tool's build function with the session, every
    time a session's tools are built.

    The object is a plugin: register it, or name it in an entry point
    (``notes = "neta_tools_notes.plugin:plugin"``). A plugin module that implements other hooks
    too stays the plugin itself, and binds the three hooks by name next to its own (see the
    example).

    Args:
        *toolsets: the toolsets the plugin announces.
        tools: ``(schema, build)`` pairs, in the order the catalog lists the tools;
            ``build(session)`` returns the schema's ``Tool`` for one session, as a closure
            over it. A schema names its toolset, one of ``toolsets`` or another plugin's.

    Attributes:
        toolsets: the toolsets the plugin announces.
        tools: the ``(schema, build)`` pairs.

    Example:
        A plugin module with a hook of its own:

        ```python
        PLUGIN = neta.ToolsetPlugin(TOOLSET, tools=[(note.SCHEMA, note.build)])

        neta_toolsets = PLUGIN.neta_toolsets
        neta_tools = PLUGIN.neta_tools
        neta_build_tools = PLUGIN.neta_build_tools


        @neta.hookimpl
        def neta_session_start(session: neta.SessionContext) -> None:
            session.extras.setdefault("notebook", Notebook(session.workspace))
        ```
    """

    def __init__(
        self,
        *toolsets: ToolsetSpec,
        tools: Iterable[tuple[ToolSchema, Callable[[SessionContext], Tool]]],
    ) -> None:
        self.toolsets = toolsets
        self.tools = tuple(tools)

    def __repr__(self) -> str:
        names = ", ".join(repr(toolset.name) for toolset in self.toolsets)
        return f"{type(self).__name__}({names})"

    @hookimpl
    def neta_toolsets(self) -> list[ToolsetSpec]:
        """Announce the plugin's toolsets."""
        return list(self.toolsets)

    @hookimpl
    def neta_tools(self) -> list[ToolSchema]:
        """Register the schemas of the plugin's tools."""
        return [schema for schema, _ in self.tools]

    @hookimpl
    def neta_build_tools(self, session: SessionContext) -> list[Tool]:
        """Build the plugin's tools for ``session``."""
        return [build(session) for _, build in self.tools]
