"""``HostConfig``: how a host process runs its agents and serves its clients."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neta.permissions import PermissionsLike
from neta.plugins import NetaPluginManager
from neta.providers.base import Provider


@dataclass
class HostConfig:
    """How a host process runs its agents.

    Attributes:
        provider: a provider name (``openai``, ``scripted``...) created once per session.
        provider_options: options for the provider's factory (``script``, ``base_url``...).
        provider_factory: overrides ``provider``: called once per session.
        model: the model name.
        workspace: the root every session's file tools are confined to.
        toolsets: toolsets requested on top of the defaults.
        deny: toolsets never given.
        home: where ``neta.db`` lives (default ``NETA_HOME`` or ``~/.neta``).
        clarify_timeout: seconds a question waits for its answer.
        max_frame_bytes: the largest WebSocket frame or REST request body accepted.
        handshake_timeout: seconds a client has to send a request's head (line and headers).
        body_timeout: seconds a client has to send a request's body, all of it, once its
            head has arrived (a slower one gets 408 and is closed).
        max_queued_frames: frames waiting for a slow client before its connection is closed.
        max_idle_sessions: sessions kept in memory without a run or a client (the least
            recently used beyond this are dropped; they stay on disk).
        max_turns: model turns per run.
        permissions: which tool calls run, which ask a person, which are refused
            (``Agent(permissions=...)``: a mode's name, a mapping shaped like a rules file,
            a ``RuleSet`` or a ``Policy``; ``None``: the user's and workspace's files, and the
            default mode, ``ask``). A gateway session asks its clients (``approval_request``);
            a REST session leaves the call for the next message to answer.
        agent_options: further ``Agent`` options (``tool_timeout``, ``crew_depth``,
            ``crew_concurrency``, ``crew_timeout``, ``compact_after``...).
        lease_seconds: how long a session stays owned by a server process that stopped
            renewing its lease (it died); live processes renew every third of this. A process
            of the same machine that provably runs no more is not waited for.
        drain_seconds: how long a stopping server (SIGTERM) lets its runs go on before it
            cuts them (``neta.hosting.drain``); ``neta serve --drain-timeout`` gives 30.
        session_ttl: seconds after its last save that a session nobody uses is deleted
            (``None``: kept until deleted).
        unused_session_seconds: seconds after its last client left that a connection's
            session in which nothing was ever said is deleted.
        database_url: the shared store (``postgresql://…``); default ``NETA_DATABASE_URL``,
            else SQLite in ``home``.
        redis_url: the shared bus (``redis://…``); default ``NETA_REDIS_URL``, else the
            in-process bus (one process only).
        token: the shared secret clients must present (required off loopback).
        metrics_token: a second secret that opens ``/metrics`` only (for a scraper that
            should not hold a token able to drive agents); ``token`` opens it too.
        plugin_manager: the plugins to use (default: all installed).
    """

    provider: str = "openai"
    provider_options: dict[str, Any] = field(default_factory=dict)
    provider_factory: Callable[[], Provider] | None = None
    model: str = ""
    workspace: Path = field(default_factory=Path.cwd)
    toolsets: Sequence[str] = ()
    deny: Sequence[str] = ()
    home: Path | None = None
    clarify_timeout: float = 300.0
    max_frame_bytes: int = 1 << 20
    handshake_timeout: float = 10.0
    body_timeout: float = 30.0
    max_queued_frames: int = 10_000
    max_idle_sessions: int = 256
    max_turns: int = 50
    permissions: PermissionsLike = None
    agent_options: dict[str, Any] = field(default_factory=dict)
    lease_seconds: float = 10.0
    drain_seconds: float = 0.0
    session_ttl: float | None = None
    unused_session_seconds: float = 60.0
    database_url: str | None = None
    redis_url: str | None = None
    token: str | None = None
    metrics_token: str | None = None
    plugin_manager: NetaPluginManager | None = None
