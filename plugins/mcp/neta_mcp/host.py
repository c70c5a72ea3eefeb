"""One host's MCP servers: their toolsets and tools, and the connections its sessions use.

When the catalog is built, each enabled server whose toolset a session may get lists its
tools: from the cache in ``NETA_HOME`` when an entry for that very server is kept there
(``tool_cache``), without starting it; otherwise the server is started (all such at once),
asked, and its list cached. A server that fails makes its toolset unavailable with the
reason. A server whose toolset the agent's choice leaves out (``Agent(deny=...)``, a
``preset`` without it: the host option ``"toolsets"``) is never started, so its tools are not
listed either. Connections the catalog opened stay open for the host's first session, which
adopts them instead of starting the servers a second time; otherwise a session starts a
server on its first call to it, so a session that never uses a server never starts it.

Before the first call on each connection goes out, the server's tools as it lists them now are
compared with the catalog's: a server that lists other tools or reports another version has
its cache entry replaced, and a call to a tool it no longer has, or whose description,
arguments or annotations changed, is not made (the model gets an error result saying so); the
new list is offered from the next catalog built. Each session's connections close when it
ends, together with any the catalog opened and nobody adopted; whatever is still open closes
when the process exits.
"""

from __future__ import annotations

import atexit
import contextlib
import threading
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextvars import ContextVar
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
from neta_mcp.tool_cache import CACHE_FOLDER, Listing, ToolCache, cache_key

TOOLSETS_OPTION = "toolsets"
"""The host option with the agent's choice of toolsets: ``{"preset", "requested", "denied"}``."""

_LIVE: weakref.WeakSet[ServerLink] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    for link in list(_LIVE):
        link.close()


CONFIG_TOOLSET = "mcp-config"
"""The toolset that stands for configuration files left out: always off, it says why."""

_ASK_SERVERS: ContextVar[bool] = ContextVar("neta_mcp_ask_servers", default=False)


@contextlib.contextmanager
def asking_servers() -> Iterator[None]:
    """Within it, a catalog build asks every server for its tools rather than the cache.

    (``neta mcp list`` checks the servers this way; their cache entries are refreshed.)
    """
    token = _ASK_SERVERS.set(True)
    try:
        yield
    finally:
        _ASK_SERVERS.reset(token)


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
        self.listed: dict[str, Listing] = {}  # what the catalog offers of each server
        self.cache = ToolCache(neta_home() / CACHE_FOLDER)
        self._keys: dict[str, str] = {}  # each listed server's cache key (if it has one)
        self._surveyed = False
        self._lock = threading.Lock()
        self._idle: dict[str, ServerLink] = {}
        self._sessions: dict[str, dict[str, ServerLink]] = {}
        self._compared: weakref.WeakSet[ServerLink] = weakref.WeakSet()

    def survey(self) -> None:
        """List the tools of every enabled server a session may use (once).

        From the cache where it has the server; the others are started at once and waited for.
        """
        with self._lock:
            if self._surveyed:
                return
            self._surveyed = True
            ask = _ASK_SERVERS.get()
            links: dict[str, ServerLink] = {}
            for name, server in self.servers.items():
                if server.config is None:
                    self.unavailable[name] = server.error
                elif not server.config.enabled:
                    self.unavailable[name] = f'"enabled": false in {server.source}'
                elif not self.wanted(toolset_name(name)):
                    continue  # denied, or not chosen: its toolset is off and says why
                else:
                    key = cache_key(server.config, self.workspace, server.sandbox(self.sandbox))
                    cached = None if key is None or ask else self.cache.get(key)
                    if key is not None:
                        self._keys[name] = key
                    if cached is not None:
                        self.listed[name] = cached
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
                    assert link.listing is not None
                    self.listed[name] = link.listing
                    self._compared.add(link)
                    self._idle[name] = link
                    if name in self._keys:
                        self.cache.put(self._keys[name], name, link.listing)
            # in the configuration's order, cached or not: it decides who keeps a shared name
            self.listed = {name: self.listed[name] for name in self.servers if name in self.listed}

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
            _schema(server, tool, names[server, tool["name"]])
            for server, listing in self.listed.items()
            for tool in listing.tools
        ]

    def build_tools(self, session: SessionContext) -> list[Tool]:
        """Tool instances for ``session``: each calls its server through the session's link."""
        names = self._names()
        return [
            Tool(
                name=names[server, tool["name"]],
                execute=self._executor(session, server, tool["name"], names[server, tool["name"]]),
            )
            for server, listing in self.listed.items()
            for tool in listing.tools
        ]

    def _names(self) -> dict[tuple[str, str], str]:
        """Each server tool's Neta name: its own, or ``SERVER_TOOL`` when a server before took it.

        (A name another plugin's tool has is resolved by the catalog, with the same prefix.)
        """
        names: dict[tuple[str, str], str] = {}
        taken: set[str] = set()
        for server, listing in self.listed.items():
            for tool in listing.tools:
                name = tool_name(tool["name"])
                if name in taken:
                    name = qualified_tool_name(server, tool["name"])
                taken.add(name)
                names[server, tool["name"]] = name
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
                await link.started()
                changed = self._changed(server, link, tool)
                if changed:
                    return ToolResult(content=f"Error: {changed}", is_error=True)
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

    def _changed(self, server: str, link: ServerLink, tool: str) -> str:
        """Why ``tool`` may not be called as the catalog has it; empty when it may.

        The first time, the server's tools on ``link`` are compared with the catalog's: when
        they differ (or the server reports another version), its cache entry is replaced.
        """
        live, offered = link.listing, self.listed[server]
        assert live is not None
        with self._lock:
            first = link not in self._compared
            self._compared.add(link)
        if first and live != offered and server in self._keys:
            self.cache.put(self._keys[server], server, live)
        now = live.tool(tool)
        if now == offered.tool(tool):
            return ""
        change = "no longer has" if now is None else "changed"
        return (
            f"MCP server {server!r} {change} the tool {tool!r} since Neta listed its tools, so "
            "the call was not made; the tools as the server has them now are offered from "
            "Neta's next start"
        )


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


def _schema(server: str, tool: Mapping[str, Any], name: str) -> ToolSchema:
    """The catalog's schema of ``tool`` (as ``tools/list`` gives it) of server ``server``."""
    description = str(tool.get("description") or tool.get("title") or f"The {tool['name']} tool")
    description = description.strip()
    summary = description.split("\n", 1)[0].split(". ", 1)[0].rstrip(".")[:160]
    qualified = qualified_tool_name(server, tool["name"])
    annotations = tool.get("annotations")
    read_only = isinstance(annotations, Mapping) and annotations.get("readOnlyHint") is True
    return ToolSchema(
        name=name,
        qualified_name=qualified if qualified != name else "",
        toolset=toolset_name(server),
        description=f"{description}\n(from MCP server {server!r})",
        json_schema={"type": "object", **dict(tool["inputSchema"])},
        # the server's word that the tool changes nothing; without it, it runs something
        effect="reads" if read_only else None,
        when_to_use=f"When the task needs {summary[:1].lower()}{summary[1:]}, use "
        f"{name} (MCP server {server!r}).",
    )
