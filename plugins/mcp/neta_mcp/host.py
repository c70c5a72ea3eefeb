"""One host's MCP servers: their toolsets and tools, and the connections its sessions use.

When the catalog is built, every enabled server whose toolset a session may get is started
(all at once) and asked for its tools; a server that fails makes its toolset unavailable with
the reason. A server whose toolset the agent's choice leaves out (``Agent(deny=...)``, a
``preset`` without it: the host option ``"toolsets"``) is never started, so its tools are not
listed either. Those connections stay open for the host's first session, which adopts them
instead of starting the servers a second time. Later sessions start a server on their first
call to it (lazily), so a session that never uses a server never starts it. Each session's
connections close when it ends, together with any the catalog opened and nobody adopted;
whatever is still open closes when the process exits.
"""

from __future__ import annotations

import atexit
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from neta import (
    ConfigError,
    HostSettings,
    SandboxPolicy,
    SessionContext,
    Tool,
    ToolResult,
    ToolSchema,
    ToolsetSpec,
    neta_home,
)
from neta.events import ToolProgress
from neta_mcp.config import ConfiguredServer, load_servers
from neta_mcp.elicitation import ServerQuestions
from neta_mcp.link import LinkDown, ServerLink
from neta_mcp.naming import qualified_tool_name, tool_name, toolset_name
from neta_mcp.results import to_tool_result

TOOLSETS_OPTION = "toolsets"
"""The host option with the agent's choice of toolsets: ``{"preset", "requested", "denied"}``."""

_LIVE: weakref.WeakSet[ServerLink] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for link in list(_LIVE):
        link.close()


CONFIG_TOOLSET = "mcp-config"
"""The toolset that stands for configuration files left out: always off, it says why."""


class McpHost:
    """The MCP servers of one host (one ``HostSettings``) and their connections.

    Args:
        workspace: the host's workspace (stdio servers run in it).
        options: the host options (``mcp_servers``, ``sandbox`` and ``toolsets`` are read).
    """

    def __init__(self, workspace: Path, options: Mapping[str, object]) -> None:
        self.workspace = workspace
        self.problems: list[str] = []  # configuration files left out, and why
        # the host's sandbox (Agent(sandbox=...)); a workspace's stdio servers run in it
        policy = options.get("sandbox")
        self.sandbox = policy if isinstance(policy, SandboxPolicy) else SandboxPolicy()
        try:
            self.servers = load_servers(HostSettings(workspace, options), self.problems)
        except ConfigError as exc:  # the host's own list is malformed
            self.servers = {}
            self.problems.append(str(exc))
        self.wanted = _wanted_by(options.get(TOOLSETS_OPTION))
        self.unavailable: dict[str, str] = {}
        self.listed: dict[str, list[Any]] = {}
        self._surveyed = False
        self._lock = threading.Lock()
        self._idle: dict[str, ServerLink] = {}
        self._sessions: dict[str, dict[str, ServerLink]] = {}

    def survey(self) -> None:
        """Start every enabled server a session may use at once, list its tools (once)."""
        with self._lock:
            if self._surveyed:
                return
            self._surveyed = True
            links: dict[str, ServerLink] = {}
            for name, server in self.servers.items():
                if server.config is None:
                    self.unavailable[name] = server.error
                elif not server.config.enabled:
                    self.unavailable[name] = f'"enabled": false in {server.source}'
                elif not self.wanted(toolset_name(name)):
                    continue  # denied, or not chosen: its toolset is off and says why
                else:
                    links[name] = self._new_link(server)
                    links[name].start()
            for name, link in links.items():
                try:
                    link.wait_started()
                except LinkDown as exc:
                    self.unavailable[name] = f"the server did not start: {exc}"
                    link.close()
                else:
                    self.listed[name] = list(link.tools)
                    self._idle[name] = link

    def toolset_specs(self) -> list[ToolsetSpec]:
        """One toolset per configured server, unavailable (with the reason) when it is down."""
        self.survey()
        specs = []
        if self.problems:  # shown by ``neta toolsets`` and ``neta mcp list``
            specs.append(
                ToolsetSpec(
                    name=CONFIG_TOOLSET,
                    description="MCP server configuration files",
                    unavailable="; ".join(self.problems),
                )
            )
        for name, server in self.servers.items():
            where = server.config.summary() if server.config is not None else "bad entry"
            specs.append(
                ToolsetSpec(
                    name=toolset_name(name),
                    description=f"MCP server {name!r} ({where}) from {server.source}",
                    unavailable=self.unavailable.get(name, ""),
                )
            )
        return specs

    def tool_schemas(self) -> list[ToolSchema]:
        """The tools every running server listed, with their JSON Schema as the arguments."""
        self.survey()
        names = self._names()
        return [
            _schema(server, tool, names[server, tool.name])
            for server, tools in self.listed.items()
            for tool in tools
        ]

    def build_tools(self, session: SessionContext) -> list[Tool]:
        """Tool instances for ``session``: each calls its server through the session's link."""
        names = self._names()
        return [
            Tool(
                name=names[server, tool.name],
                execute=self._executor(session, server, tool.name, names[server, tool.name]),
            )
            for server, tools in self.listed.items()
            for tool in tools
        ]

    def _names(self) -> dict[tuple[str, str], str]:
        """Each server tool's Neta name: its own, or ``SERVER_TOOL`` when a server before took it.

        (A name another plugin's tool has is resolved by the catalog, with the same prefix.)
        """
        names: dict[tuple[str, str], str] = {}
        taken: set[str] = set()
        for server, tools in self.listed.items():
            for tool in tools:
                name = tool_name(tool.name)
                if name in taken:
                    name = qualified_tool_name(server, tool.name)
                taken.add(name)
                names[server, tool.name] = name
        return names

    def end_session(self, session: SessionContext) -> None:
        """Close the session's connections, and those the catalog opened that nobody adopted."""
        with self._lock:
            links = list(self._sessions.pop(session.session_id, {}).values())
            links += self._idle.values()
            self._idle.clear()
        for link in links:
            link.close()

    def close(self) -> None:
        """Close every connection of this host."""
        with self._lock:
            links = list(self._idle.values())
            links += [link for per in self._sessions.values() for link in per.values()]
            self._idle.clear()
            self._sessions.clear()
        for link in links:
            link.close()

    def link_for(self, session: SessionContext, server: str) -> ServerLink:
        """The session's connection to ``server``: adopted, kept, or new (after one died)."""
        with self._lock:
            links = self._sessions.setdefault(session.session_id, {})
            link = links.get(server)
            if link is None or link.error:
                if link is not None:
                    link.close()
                link = self._idle.pop(server, None) or self._new_link(self.servers[server])
                link.elicit = ServerQuestions(session, server)
                links[server] = link
            return link

    def _new_link(self, server: ConfiguredServer) -> ServerLink:
        assert server.config is not None
        link = ServerLink(
            server.name, server.config, self.workspace, sandbox=server.sandbox(self.sandbox)
        )
        _LIVE.add(link)
        return link

    def _executor(self, session: SessionContext, server: str, tool: str, name: str) -> Any:
        media = neta_home() / "mcp-media" / session.session_id

        def progress(done: float, total: float | None, message: str | None) -> None:
            session.emit(ToolProgress(name=name, progress=done, total=total, message=message or ""))

        async def execute(args: dict[str, Any]) -> ToolResult:
            link = self.link_for(session, server)
            try:
                result = await link.call(tool, args, progress)
            except LinkDown as exc:
                reason = f"MCP server {server!r} is not running: {exc}"
                return ToolResult(content=f"Error: {reason}", is_error=True)
            except Exception as exc:  # the server refused the call (an MCP error)
                reason = f"MCP server {server!r} refused the call: {exc}"
                return ToolResult(content=f"Error: {reason}", is_error=True)
            notes = link.elicit.take_notes() if isinstance(link.elicit, ServerQuestions) else []
            return to_tool_result(result, server=server, media_dir=media, notes=notes)

        return execute


def _wanted_by(choice: object) -> Callable[[str], bool]:
    """Whether a session may get toolset ``name`` under the agent's ``choice`` of toolsets.

    A server's toolset is on by default; it is left out when denied, or when a preset is
    given that does not name it and no request adds it. No choice: any may be on.
    """
    if not isinstance(choice, Mapping):
        return lambda name: True
    denied = _names(choice.get("denied"))
    preset = choice.get("preset")
    chosen = None if preset is None else _names(preset) | _names(choice.get("requested"))
    return lambda name: name not in denied and (chosen is None or name in chosen)


def _names(value: object) -> frozenset[str]:
    if isinstance(value, str) or not isinstance(value, Iterable):
        return frozenset()
    return frozenset(str(item) for item in value)


def _schema(server: str, tool: Any, name: str) -> ToolSchema:
    description = (tool.description or tool.title or f"The {tool.name} tool").strip()
    summary = description.split("\n", 1)[0].split(". ", 1)[0].rstrip(".")[:160]
    qualified = qualified_tool_name(server, tool.name)
    return ToolSchema(
        name=name,
        qualified_name=qualified if qualified != name else "",
        toolset=toolset_name(server),
        description=f"{description}\n(from MCP server {server!r})",
        json_schema={"type": "object", **dict(tool.input_schema)},
        # the server's word that the tool changes nothing; without it, it runs something
        effect="reads" if getattr(tool.annotations, "read_only_hint", None) is True else None,
        when_to_use=f"When the task needs {summary[:1].lower()}{summary[1:]}, use "
        f"{name} (MCP server {server!r}).",
    )
