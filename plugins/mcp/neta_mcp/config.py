"""Which MCP servers a host has: ``mcp.json`` files and the host's own list, merged by name."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from neta import ConfigError, HostSettings, SandboxPolicy, neta_home
from neta.sandbox import sandbox_policy

CONFIG_NAME = "mcp.json"
"""The file name in ``NETA_HOME`` and in the workspace's ``.neta`` folder."""

HOST_OPTION = "mcp_servers"
"""The host option ``Agent(mcp_servers=...)`` fills."""


class ServerConfig(BaseModel):
    """One entry of ``mcpServers``: a command to run (stdio) or a URL (streamable HTTP).

    Attributes:
        command: the executable that speaks MCP on its standard input and output.
        args: its arguments.
        env: environment variables added to the few safe ones the SDK passes on.
        cwd: its working directory (relative to the workspace; the workspace by default).
        url: the streamable HTTP endpoint of a running server.
        headers: HTTP headers sent with every request (e.g. ``Authorization``).
        enabled: ``false`` keeps the server configured but off.
        timeout: seconds to wait for the server to start and list its tools.
        sandbox: how a stdio server is confined. A workspace's server always runs in the
            host's sandbox (its entry may only narrow it: ``{"network": false}``); a server of
            ``NETA_HOME/mcp.json`` or of the host runs unconfined unless this says ``true``
            (the host's sandbox) or gives ``SandboxPolicy`` fields.
    """

    model_config = ConfigDict(extra="ignore")

    command: str | None = Field(default=None, min_length=1)
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = Field(default=None, min_length=1)
    headers: dict[str, str] = Field(default_factory=dict)
    enabled: bool = True
    timeout: float = Field(default=30.0, gt=0)
    sandbox: bool | dict[str, Any] | None = None

    @model_validator(mode="after")
    def _one_transport(self) -> ServerConfig:
        if (self.command is None) == (self.url is None):
            raise ValueError('give exactly one of "command" (stdio) and "url" (streamable HTTP)')
        return self

    @property
    def transport(self) -> str:
        """``stdio`` or ``http``."""
        return "stdio" if self.command is not None else "http"

    def summary(self) -> str:
        """The command line or the URL, for listings."""
        if self.command is not None:
            return " ".join([self.command, *self.args])
        return str(self.url)


@dataclass(frozen=True)
class ConfiguredServer:
    """A server entry and where it came from; ``error`` says why the entry is unusable.

    ``from_workspace``: the entry comes from the workspace's own ``.neta/mcp.json``.
    """

    name: str
    source: str
    config: ServerConfig | None
    error: str = ""
    from_workspace: bool = False

    def sandbox(self, host: SandboxPolicy) -> SandboxPolicy | None:
        """The sandbox this stdio server runs in under the host's policy ``host``.

        ``None``: unconfined (an HTTP server, the host's ``--sandbox off``, or a server of the
        user's own that does not ask for the sandbox).
        """
        config = self.config
        if config is None or config.command is None or not host.enabled:
            return None
        wanted = config.sandbox
        if self.from_workspace:  # it may narrow the host's sandbox, never widen it
            network = wanted.get("network", True) if isinstance(wanted, dict) else True
            return dataclasses.replace(host, network=host.network and network)
        if wanted is True:
            return host
        if isinstance(wanted, dict):
            return sandbox_policy(wanted)
        return None


def load_servers(
    host: HostSettings, problems: list[str] | None = None
) -> dict[str, ConfiguredServer]:
    """The host's servers by name: home file, then workspace file, then the host's own list.

    A later source replaces an earlier one's entry of the same name. The workspace's file is
    read only while the workspace is trusted (``HostSettings.workspace_trusted``). A malformed
    entry is kept with its ``error`` (its toolset shows it). A file that cannot be read, or is
    not a JSON object of the ``mcpServers`` form, is left out and why is added to
    ``problems`` (naming the file, and the line and column of a JSON error): the other
    files' servers are still used. Without a ``problems`` list it raises ``ConfigError``.
    """
    servers: dict[str, ConfiguredServer] = {}
    for path, workspace in (
        (neta_home() / CONFIG_NAME, False),
        (host.workspace / ".neta" / CONFIG_NAME, True),
    ):
        if workspace and not host.workspace_trusted():
            continue
        if not path.is_file():
            continue
        try:
            raw = _read(path)
        except ConfigError as exc:
            if problems is None:
                raise
            problems.append(str(exc))
            continue
        servers.update(_entries(raw, str(path), from_workspace=workspace))
    own = host.options.get(HOST_OPTION)
    if own is not None and not isinstance(own, Mapping):
        raise ConfigError(f"mcp_servers must map server names to entries, not {own!r:.80}")
    if own:
        servers.update(_entries(own, "the host (mcp_servers)"))
    return servers


def _read(path: Path) -> Mapping[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path}:{exc.lineno}:{exc.colno}: cannot read MCP servers: {exc.msg}"
        ) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read MCP servers: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("mcpServers", {}), dict):
        raise ConfigError(f'{path}: expected {{"mcpServers": {{"NAME": {{...}}}}}}')
    servers: Mapping[str, Any] = data.get("mcpServers", {})
    return servers


def _entries(
    raw: Mapping[str, Any], source: str, *, from_workspace: bool = False
) -> dict[str, ConfiguredServer]:
    entries: dict[str, ConfiguredServer] = {}
    for name, entry in raw.items():
        try:
            config = ServerConfig.model_validate(entry)
            _check_sandbox(config, from_workspace)
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            where = ".".join(str(p) for p in first["loc"])
            detail = f"{where}: {first['msg']}" if where else first["msg"]
            entries[name] = ConfiguredServer(name, source, None, f"bad entry in {source}: {detail}")
        except ConfigError as exc:
            entries[name] = ConfiguredServer(name, source, None, f"bad entry in {source}: {exc}")
        else:
            entries[name] = ConfiguredServer(name, source, config, from_workspace=from_workspace)
    return entries


def _check_sandbox(config: ServerConfig, from_workspace: bool) -> None:
    """Refuse a ``sandbox`` setting the entry's source may not make.

    Raises:
        ConfigError: a workspace entry asks for anything but ``{"network": true|false}``,
            or a user's entry gives fields no ``SandboxPolicy`` has.
    """
    wanted = config.sandbox
    if wanted is None or wanted is True:
        return
    if from_workspace:
        if not isinstance(wanted, dict) or set(wanted) - {"network"}:
            raise ConfigError(
                "sandbox: a workspace's server always runs in the host's sandbox; its entry "
                'may only narrow it ({"network": false})'
            )
        if not isinstance(wanted.get("network", False), bool):
            raise ConfigError("sandbox.network must be true or false")
    elif isinstance(wanted, dict):
        sandbox_policy(wanted)
