"""Every exception Neta raises, grouped by who handles it.

```
NetaError
├── ToolError                  the model reads the message (a tool call failed)
│   ├── WorkspaceError         a path resolves outside the session's workspace root
│   └── MatchError             patch-style edits refused by neta.fuzzy_match
│       ├── NoMatchError
│       ├── AmbiguousMatchError
│       └── InvalidEditError
├── ConfigError                the developer or user configured something wrong
├── PluginError                a plugin failed to load or misbehaved
│   └── ToolConflictError      two plugins registered the same tool name
├── ProviderError              the model provider failed (``retryable`` says if it may pass)
├── OutputValidationError      the model's final answer never fit the run's output type
└── HostError                  a host app refuses a client's request (``code`` goes back to it)
    ├── BadFrame               a frame or body that cannot be read
    ├── Busy                   the session already runs
    ├── UnknownSession         no such session
    │   └── SessionDeleted     the session was deleted while a client used it
    ├── SessionOwned           another server process owns the session right now
    ├── AnswerRefused          an answer to a question was not accepted
    └── StorageUnavailable     the session store cannot write (a full disk): nothing runs unsaved
```

Only the CLI and the host apps catch broadly; everything else lets these travel.
"""

from __future__ import annotations

import errno
from collections.abc import Sequence
from typing import Any

from neta.safe_url import safe_url

__all__ = [
    "AmbiguousMatchError",
    "AnswerRefused",
    "BadFrame",
    "Busy",
    "ConfigError",
    "HostError",
    "InvalidEditError",
    "MatchError",
    "NetaError",
    "NoMatchError",
    "OutputValidationError",
    "PluginError",
    "ProviderError",
    "SessionDeleted",
    "SessionOwned",
    "StorageUnavailable",
    "ToolConflictError",
    "ToolError",
    "UnknownSession",
    "WorkspaceError",
    "os_reason",
    "quoted_id",
]


class NetaError(Exception):
    """Base class of every Neta exception."""


class ToolError(NetaError):
    """A tool call failed; the message is what the model reads."""


class WorkspaceError(ToolError):
    """A path resolves outside the workspace root (through ``..``, an absolute path or a symlink).

    Attributes:
        path: the path as it was given.
        root: the workspace root it had to stay inside.
        resolved: where the path really leads.
    """

    def __init__(self, path: str, *, root: str, resolved: str) -> None:
        super().__init__(
            f"path {path!r} is outside the workspace {root!r} (it resolves to {resolved!r}); "
            f"use a path inside the workspace"
        )
        self.path = path
        self.root = root
        self.resolved = resolved


class MatchError(ToolError):
    """An edit was refused by the matcher; the file must stay untouched."""


class NoMatchError(MatchError):
    """The text to replace was not found by any strategy."""


class AmbiguousMatchError(MatchError):
    """The text to replace was found more than once.

    Attributes:
        lines: the 1-based start line of every match.
        strategy: the strategy that found them.
    """

    def __init__(self, message: str, *, lines: Sequence[int], strategy: str) -> None:
        super().__init__(message)
        self.lines = list(lines)
        self.strategy = strategy


class InvalidEditError(MatchError):
    """The edit itself is unusable (empty, a no-op, already applied, unsafe)."""


class ConfigError(NetaError):
    """A configuration mistake by the developer or the user (bad option, unknown name)."""


class PluginError(NetaError):
    """A plugin failed to import, raised in a hook, or returned something malformed.

    Attributes:
        plugin: the plugin's registered name.
        entry_point: ``group:name = value`` of its entry point, when it came from one.
        distribution: the installed distribution that declared that entry point, if any.
        reason: what went wrong, without the plugin prefix.
    """

    def __init__(
        self,
        plugin: str,
        reason: str,
        *,
        entry_point: str | None = None,
        distribution: str | None = None,
        version: str | None = None,
    ) -> None:
        origin = [f"entry point {entry_point}"] if entry_point else []
        if distribution:
            origin.append(f"distribution {distribution}" + (f" {version}" if version else ""))
        where = f" ({', '.join(origin)})" if origin else ""
        super().__init__(f"plugin {plugin!r}{where}: {reason}")
        self.plugin = plugin
        self.entry_point = entry_point
        self.distribution = distribution
        self.reason = reason


class ToolConflictError(PluginError):
    """Two plugins registered a tool of the same name.

    Attributes:
        tool: the contested tool name.
        first: the plugin whose registration was kept.
    """

    def __init__(self, tool: str, *, first: str, second: str) -> None:
        super().__init__(
            second,
            f"tool {tool!r} is already registered by plugin {first!r}; "
            f"disable one of them (NETA_DISABLE_PLUGINS)",
        )
        self.tool = tool
        self.first = first


class ProviderError(NetaError):
    """The model provider failed.

    Give ``provider`` (and ``model``, ``url``) and the message names them up front, so the one
    line a user sees says which API refused what: ``anthropic model 'm' at URL: ...``.

    Attributes:
        retryable: whether the same request may succeed if sent again (rate limits, 5xx,
            dropped connections); a bad key or an unknown model is not.
        retry_after: seconds the API asked to wait before trying again (``Retry-After``).
        status: the HTTP status the API answered with, when it answered.
        provider: the provider's name, when known.
        model: the model asked for, when known.
        url: the API root the request went to, when known (``safe_url``: no credentials).
        detail: the message without the provider, model and URL.
    """

    def __init__(
        self,
        message: str,
        *,
        retryable: bool = False,
        retry_after: float | None = None,
        status: int | None = None,
        provider: str | None = None,
        model: str | None = None,
        url: str | None = None,
    ) -> None:
        url = safe_url(url) if url else url  # printed and logged: never its credentials
        where = ""
        if provider:
            where = (
                provider + (f" model {model!r}" if model else "") + (f" at {url}" if url else "")
            )
        super().__init__(f"{where}: {message}" if where else message)
        self.retryable = retryable
        self.retry_after = retry_after
        self.status = status
        self.provider = provider
        self.model = model
        self.url = url
        self.detail = message


class OutputValidationError(NetaError):
    """A run's final answer did not fit its output type, however often it was sent back.

    Raised by ``Agent.run(output_type=...)`` (and by a stream's iteration) once the model
    answered ``attempts`` times without a valid answer (``RunLimits.output_retries``).

    Attributes:
        answer: the last answer, as the model wrote it (JSON text, or the output tool's
            arguments).
        errors: why it does not fit (the validation errors, as the model was told them).
        attempts: how many answers the model gave.
        result: the run's ``RunResult`` (outcome ``error``, ``output`` ``None``): its
            history, events and what it cost.
    """

    def __init__(self, answer: str, errors: str, *, attempts: int, result: Any = None) -> None:
        shown = answer if len(answer) <= 300 else answer[:300] + "…"
        super().__init__(
            f"the model's final answer did not match the output type after {attempts} "
            f"answer{'' if attempts == 1 else 's'}: {errors} (its last answer: {shown!r})"
        )
        self.answer = answer
        self.errors = errors
        self.attempts = attempts
        self.result = result


class HostError(NetaError):
    """A host app (WebSocket gateway, REST service) refuses what a client asked.

    ``code`` is what the client reads: the ``error {code, message}`` frame's code, and the key
    of the one table (``neta.hosting.protocol.HTTP_STATUS``) that gives the HTTP status.

    Attributes:
        code: the machine-readable reason (``busy``, ``unknown_session``...).
    """

    code: str = "internal"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code


class BadFrame(HostError):
    """A frame or request body that cannot be read.

    ``code`` is ``frame_too_large``, ``invalid_json``, ``unknown_type`` or ``invalid_frame``.
    """

    code = "invalid_frame"


class Busy(HostError):
    """The session already has a run in progress."""

    code = "busy"

    def __init__(self, session_id: str) -> None:
        super().__init__(f"session {quoted_id(session_id)} already has a run in progress")
        self.session_id = session_id


class UnknownSession(HostError):
    """No live or saved session has this id (or it was deleted).

    Attributes:
        session_id: the id asked for.
    """

    code = "unknown_session"

    def __init__(self, session_id: str, message: str | None = None) -> None:
        super().__init__(message or f"no session {quoted_id(session_id)}")
        self.session_id = session_id


class SessionDeleted(UnknownSession):
    """The session was deleted while a client used it."""

    code = "session_deleted"

    def __init__(self, session_id: str) -> None:
        super().__init__(session_id, "the session was deleted")


class SessionOwned(HostError):
    """Another server process sharing the session store runs this session right now.

    Attributes:
        session_id: the session.
    """

    code = "session_owned"

    def __init__(self, session_id: str) -> None:
        super().__init__(
            f"session {quoted_id(session_id)} is in use by another server process on the same "
            "NETA_HOME; try again when its run has ended"
        )
        self.session_id = session_id


class AnswerRefused(HostError):
    """An answer to a question was not accepted.

    ``code`` is ``unknown_request`` (no such question, or another session's: which, is not
    told), ``already_resolved``, ``expired`` or ``invalid_answer``.
    """

    code = "unknown_request"


class StorageUnavailable(HostError):
    """The session store failed to write (a full disk, a read-only file).

    The host stops the run instead of going on unsaved; what was saved before stays readable.
    """

    code = "storage_unavailable"


_OS_REASONS = {
    errno.ENOENT: "no such file or directory",
    errno.EISDIR: "it is a directory, not a file",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.ENOTDIR: "a parent is not a directory",
    errno.ENXIO: "it is not a regular file",
    errno.ENOSPC: "no space left on the device",
    errno.EROFS: "the file system is read-only",
}


_ID_SHOWN = 64
"""How much of an id a client sent is said back in a refusal (see ``quoted_id``)."""


def quoted_id(value: str) -> str:
    """An id a client sent, quoted for a message about it: cut short when it is long.

    An id nobody issued can be anything a client sends; a refusal names it without echoing
    a megabyte back.
    """
    if len(value) <= _ID_SHOWN:
        return repr(value)
    return f"{value[:_ID_SHOWN]!r}… ({len(value)} characters)"


def os_reason(exc: OSError) -> str:
    """Why an operation on a file failed, in words (not the ``[Errno N] …`` of the exception)."""
    said = exc.strerror or str(exc)
    return _OS_REASONS.get(exc.errno or 0, said[:1].lower() + said[1:])
