"""What a model provider is, and how a plugin registers one."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, overload, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from neta.messages import Message, Usage
from neta.tools import ToolCall

TextSink = Callable[[str], None]
"""Receives the reply text piece by piece while it streams."""


class Conversation(Sequence[Message]):
    """The messages of one request without copying the history: ``head``, then ``history``.

    It shows the history as it was when the request was made (later messages are not in it)
    and is meant to be read during that turn; a provider that keeps requests copies it
    (``list(request.messages)``), since the runtime may compact the history between turns.
    """

    __slots__ = ("_head", "_history", "_length")

    def __init__(self, head: Sequence[Message], history: list[Message]) -> None:
        self._head = tuple(head)
        self._history = history
        self._length = len(history)

    def __len__(self) -> int:
        return len(self._head) + self._length

    @overload
    def __getitem__(self, index: int) -> Message: ...

    @overload
    def __getitem__(self, index: slice) -> list[Message]: ...

    def __getitem__(self, index: int | slice) -> Message | list[Message]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        size = len(self)
        position = index + size if index < 0 else index
        if not 0 <= position < size:
            raise IndexError("conversation index out of range")
        head = len(self._head)
        return self._head[position] if position < head else self._history[position - head]

    def __iter__(self) -> Iterator[Message]:
        yield from self._head
        yield from itertools.islice(self._history, self._length)


ToolDefinition = dict[str, Any]
"""One tool as the model is offered it: a JSON object in the OpenAI ``tools`` format."""


@dataclass(frozen=True)
class OutputSchema:
    """The shape a run's final answer must have (``Agent.run(output_type=...)``).

    Attributes:
        name: the answer's name, and the name of the tool the model gives it with.
        schema: the answer's JSON Schema (of an object).
        description: what the answer is, for the model.
        tool: the same as a tool in the OpenAI ``tools`` format, which the request's
            ``tools`` end with.
    """

    name: str
    schema: dict[str, Any]
    description: str = ""
    tool: ToolDefinition = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        function = {"name": self.name, "description": self.description, "parameters": self.schema}
        object.__setattr__(self, "tool", {"type": "function", "function": function})

    def response_format(self) -> dict[str, Any]:
        """The answer as a Chat Completions ``response_format`` (a JSON schema, not strict)."""
        spec = {"name": self.name, "description": self.description, "schema": self.schema}
        return {"type": "json_schema", "json_schema": {**spec, "strict": False}}


@dataclass(frozen=True)
class ModelRequest:
    """What the runtime sends a provider each turn.

    A provider may keep what it derived from a message or tool definition (its encoded form)
    and use it again for the same object on a later turn, so neither is changed in place once
    sent: a changed message (a note in place of an answer, repaired tool calls) is a new
    ``Message`` (``model_copy``), a changed tool list is built anew.

    Attributes:
        messages: the whole conversation, system prompt first (a ``Conversation`` view
            when the runtime sends it; copy it to keep it past the turn).
        tools: the available tools in the OpenAI ``tools`` format.
        model: the model name (providers may ignore it).
        output: when the run wants a typed answer, its shape; ``tools`` then ends with
            ``output.tool``, the tool the model gives its final answer with. A provider whose
            API takes a schema for the answer itself (OpenAI's ``response_format``) may send
            ``output.schema`` so instead, and leave that tool out: the runtime takes as the
            answer either a reply whose text is the JSON or a call of that tool.
    """

    messages: Sequence[Message]
    tools: list[ToolDefinition] = field(default_factory=list)
    model: str = ""
    output: OutputSchema | None = None

    @property
    def tool_names(self) -> list[str]:
        """The names of the tools offered."""
        return [t["function"]["name"] for t in self.tools]


@dataclass(frozen=True)
class ModelResponse:
    """A provider's answer for one turn: text, tool calls, or both.

    Attributes:
        text: the reply text.
        tool_calls: the tool calls, in the order the model made them.
        usage: tokens used, when the provider reports them.
        finish_reason: why the reply stopped, in Chat Completions terms (``stop``,
            ``tool_calls``, ``length``: cut at the output token limit, ``content_filter``).
        model: the model that answered, as the API named it (empty when it did not say).
        id: the API's id of the reply (empty when it gave none).
    """

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage | None = None
    finish_reason: str | None = None
    model: str = ""
    id: str = ""


@runtime_checkable
class Provider(Protocol):
    """A model behind an API: one method, one turn.

    A provider may name itself with a ``name`` attribute (``openai``, ``anthropic``): traces
    report it as the model's provider (``neta.tracing``).
    """

    async def complete(self, request: ModelRequest, on_text: TextSink) -> ModelResponse:
        """Send ``request``; stream text pieces to ``on_text``; return the whole turn.

        Raises:
            ProviderError: the request failed (``retryable`` says whether to try again).
        """
        ...


class ProviderSpec(BaseModel):
    """A named model provider, registered through the ``neta_providers`` hook.

    Attributes:
        name: what users pass to ``--provider``.
        description: one line for listings.
        factory: called with keyword options (``model``, ``base_url``, ``api_key``...) to
            create the provider.
        env_vars: the environment variables it reads (``neta providers`` lists them).
        install: what to install for it to work, when that is more than Neta itself (e.g.
            ``pip install 'neta[anthropic]'``).
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    name: str = Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")
    description: str = ""
    factory: Callable[..., Provider]
    env_vars: tuple[str, ...] = ()
    install: str = ""
