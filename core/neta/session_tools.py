"""Pairing the catalog's schemas with the tool instances plugins build for one session."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass

from pydantic import InstanceOf, TypeAdapter

from neta.catalog import ToolSchema
from neta.plugins import NetaPluginManager
from neta.session import SessionContext
from neta.tools import Tool
from neta.toolsets import ToolsetResolution, resolve_toolsets

__all__ = ["BoundTool", "build_session_tools", "resolve_session_toolsets"]

_TOOLS: TypeAdapter[list[Tool]] = TypeAdapter(list[InstanceOf[Tool]])


@dataclass(frozen=True)
class BoundTool:
    """A session's tool: the catalog schema and the instance built for that session."""

    schema: ToolSchema
    tool: Tool

    @property
    def name(self) -> str:
        """The tool name."""
        return self.schema.name


def resolve_session_toolsets(
    pm: NetaPluginManager,
    session: SessionContext,
    *,
    preset: Iterable[str] | None = None,
    requested: Iterable[str] = (),
    denied: Iterable[str] = (),
) -> ToolsetResolution:
    """Resolve the toolsets of ``session`` from the plugins' specs and its capabilities."""
    return resolve_toolsets(
        pm.toolset_specs(),
        preset=preset,
        requested=requested,
        denied=denied,
        capabilities=session.capabilities,
    )


def build_session_tools(
    pm: NetaPluginManager, session: SessionContext, toolsets: Iterable[str]
) -> dict[str, BoundTool]:
    """Build the tools of ``toolsets`` for ``session``, keyed by name in catalog order.

    Every plugin's ``neta_build_tools`` is called with the session. An instance without a
    schema, an instance for another plugin's schema, or an enabled schema without an instance
    is recorded in ``pm.problems`` and that tool is left out; other tools are unaffected.
    A tool whose schema was registered under its qualified name is built under that name.
    """
    catalog = pm.catalog()
    instances: dict[str, Tool] = {}
    for plugin, tools in pm.call_each("neta_build_tools", _TOOLS, session=session):
        for tool in tools:
            if (plugin, tool.name) in pm.rejected_tools:
                continue  # its schema lost a name conflict, already reported
            registered = catalog.registered_name(plugin, tool.name)
            if registered != tool.name:
                tool = dataclasses.replace(tool, name=registered)
            if tool.name not in catalog:
                pm.record_for(plugin, f"built tool {tool.name!r}, which has no schema")
            elif catalog.plugin_of(tool.name) != plugin:
                owner = catalog.plugin_of(tool.name)
                pm.record_for(
                    plugin, f"built tool {tool.name!r}, whose schema belongs to {owner!r}"
                )
            else:
                instances[tool.name] = tool
    bound: dict[str, BoundTool] = {}
    for name in catalog.tool_names(toolsets):
        if name in instances:
            bound[name] = BoundTool(catalog.get(name), instances[name])
        else:
            pm.record_for(
                catalog.plugin_of(name), f"registered tool {name!r} but built no instance"
            )
    return bound
