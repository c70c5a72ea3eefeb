"""A provider that replays a script of assistant turns: offline, deterministic, checkable.

Used by ``neta demo``, by Neta's tests and by plugin authors' tests. A script is JSON::

    {"turns": [
        {"text": "Let me look.",
         "tool_calls": [{"name": "read_file", "arguments": {"path": "a.py"}}],
         "expect": {"tools_include": ["read_file"], "tools_exclude": ["clarify"]}},
        {"text": "Done."}
    ]}

``arguments`` may be an object or a raw string (to play a model that writes bad JSON). A turn
may also give ``usage`` ({"input_tokens", "output_tokens"}), ``delay`` (seconds to wait before
answering), ``finish_reason`` (e.g. ``"length"`` to play a reply cut at the output limit) or
``error`` ({"message", "retryable", "status", "retry_after"}) to play a failing API.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from neta.errors import ConfigError, ProviderError, os_reason
from neta.messages import Usage
from neta.providers.base import ModelRequest, ModelResponse, TextSink
from neta.tools import ToolCall


class ScriptedCall(BaseModel):
    """A tool call in a script."""

    model_config = ConfigDict(extra="forbid")  # a misspelt key must not pass unnoticed

    name: str
    arguments: dict[str, Any] | str = Field(default_factory=dict)
    id: str | None = None


class Expectation(BaseModel):
    """What a turn checks about the request it receives; a mismatch fails the run."""

    model_config = ConfigDict(extra="forbid")  # a misspelt key must not pass unnoticed

    tools_include: list[str] = []
    tools_exclude: list[str] = []
    system_includes: list[str] = []
    system_excludes: list[str] = []
    last_message_contains: str | None = None


class ScriptedError(BaseModel):
    """A provider failure to play instead of answering (``status``: the HTTP status played)."""

    model_config = ConfigDict(extra="forbid")  # a misspelt key must not pass unnoticed

    message: str
    retryable: bool = False
    status: int | None = None
    retry_after: float | None = None


class ScriptedTurn(BaseModel):
    """One assistant turn of a script."""

    model_config = ConfigDict(extra="forbid")  # a misspelt key must not pass unnoticed

    text: str = ""
    tool_calls: list[ScriptedCall] = []
    expect: Expectation | None = None
    usage: Usage | None = None
    delay: float = 0.0
    finish_reason: str | None = None
    error: ScriptedError | None = None


class Script(BaseModel):
    """A whole script: the turns, in order."""

    model_config = ConfigDict(extra="forbid")  # a misspelt key must not pass unnoticed

    turns: list[ScriptedTurn]


class ScriptedProvider:
    """Replays ``script`` one turn per request and records every request in ``received``.

    Each recorded request holds a copy of its messages, as they were when it was made. It
    plays a model without image input: the runtime sends it each image as its placeholder.
    """

    name = "scripted"
    """The provider's name, as traces report it (``gen_ai.provider.name``)."""
    image_input = False

    def __init__(self, script: Script | dict[str, Any] | list[dict[str, Any]]) -> None:
        if isinstance(script, list):
            script = {"turns": script}
        try:
            self.script = script if isinstance(script, Script) else Script.model_validate(script)
        except ValidationError as exc:
            raise ConfigError(f"invalid script: {_first_problem(exc)}") from None
        self.received: list[ModelRequest] = []

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedProvider:
        """Load a JSON script file."""
        try:
            return cls(json.loads(Path(path).read_text(encoding="utf-8")))
        except ConfigError as exc:
            raise ConfigError(f"script {str(path)!r}: {exc}") from None
        except OSError as exc:
            raise ConfigError(f"cannot load script {str(path)!r}: {os_reason(exc)}") from exc
        except ValueError as exc:
            raise ConfigError(f"cannot load script {str(path)!r}: {exc}") from exc

    @property
    def remaining(self) -> int:
        """How many turns have not been played yet."""
        return len(self.script.turns) - len(self.received)

    async def complete(self, request: ModelRequest, on_text: TextSink) -> ModelResponse:
        """Play the next turn (checking its expectations against ``request``)."""
        index = len(self.received)
        self.received.append(replace(request, messages=list(request.messages)))
        if index >= len(self.script.turns):
            raise ProviderError(
                f"scripted provider: no turn {index + 1} (the script has {len(self.script.turns)})"
            )
        turn = self.script.turns[index]
        if turn.delay:
            await asyncio.sleep(turn.delay)
        if turn.expect is not None:
            _check(turn.expect, request, index + 1)
        if turn.error is not None:
            error = turn.error
            raise ProviderError(
                error.message,
                retryable=error.retryable,
                status=error.status,
                retry_after=error.retry_after,
            )
        for piece in re.findall(r"\S+\s*|\s+", turn.text):
            on_text(piece)
        calls = [
            ToolCall(
                id=call.id or f"call_{index + 1}_{n}",
                name=call.name,
                arguments=call.arguments
                if isinstance(call.arguments, str)
                else json.dumps(call.arguments),
            )
            for n, call in enumerate(turn.tool_calls, start=1)
        ]
        return ModelResponse(
            text=turn.text, tool_calls=calls, usage=turn.usage, finish_reason=turn.finish_reason
        )


def _check(expect: Expectation, request: ModelRequest, turn: int) -> None:
    problems: list[str] = []
    offered = set(request.tool_names)
    problems += [f"tool {n!r} was not offered" for n in expect.tools_include if n not in offered]
    problems += [f"tool {n!r} was offered" for n in expect.tools_exclude if n in offered]
    system = "\n".join(m.content or "" for m in request.messages if m.role == "system")
    problems += [f"system prompt lacks {s!r}" for s in expect.system_includes if s not in system]
    problems += [f"system prompt contains {s!r}" for s in expect.system_excludes if s in system]
    if expect.last_message_contains is not None:
        last = request.messages[-1].content or "" if request.messages else ""
        if expect.last_message_contains not in last:
            problems.append(f"last message {last[:200]!r} lacks {expect.last_message_contains!r}")
    if problems:
        raise ProviderError(f"scripted turn {turn}: expect failed: " + "; ".join(problems))


def _first_problem(exc: ValidationError) -> str:
    """The first problem pydantic found, named by turn and key (``turn 2: unknown key 'txt'``)."""
    first = exc.errors()[0]
    where: list[str] = []
    for part in first["loc"]:
        if isinstance(part, int) and where and where[-1] == "turns":
            where[-1] = f"turn {part + 1}"
        else:
            where.append(str(part))
    *path, key = where or ["script"]
    place = ".".join(path) + ": " if path else ""
    if first["type"] == "extra_forbidden":
        return f"{place}unknown key {key!r}"
    return f"{place}{key}: {first['msg']}"
