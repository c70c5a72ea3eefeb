"""Typed results: what a run's final answer must be, how the model is told, how it is checked.

A run given an ``output_type`` (a pydantic model, a dataclass, a ``TypedDict``, or a JSON
Schema as a dict) asks for its final answer in that shape: the request carries the schema
(``ModelRequest.output``) and offers the tool ``final_result`` whose arguments are the answer.
A provider with structured output of its own sends the schema that way instead; the answer
then comes as the reply's text. Either way it is validated here, and an invalid one is sent
back to the model with what is wrong.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar, cast

from pydantic import PydanticSchemaGenerationError, PydanticUserError, TypeAdapter, ValidationError

from neta.arguments import check_json_schema, validate_with_json_schema
from neta.errors import ConfigError, ToolError
from neta.messages import Message
from neta.providers.base import OutputSchema
from neta.runtime.reply_check import CheckedReply
from neta.tools import ToolCall

OUTPUT_TOOL = "final_result"
"""The name of the tool a model gives a typed final answer with."""

DEFAULT_DESCRIPTION = (
    "Give your final answer: call this once you are done, with the answer as the arguments. "
    "Call no other tool in the same reply."
)
"""What the output tool says of itself when the output type has no description."""

T = TypeVar("T")

_HOW = (
    "Give the whole answer as one JSON object that matches the answer's schema, and nothing "
    f"else (as the arguments of a {OUTPUT_TOOL} call, when you have that tool)."
)

OutputType = type[T] | Mapping[str, object]
"""What ``Agent.run(output_type=...)`` takes: a type pydantic validates, or a JSON Schema."""


class InvalidAnswer(Exception):
    """An answer that does not fit; the message is what the model is told."""


class Output(Generic[T]):
    """One output type made ready: its schema for the request, and its check of an answer.

    Raises:
        ConfigError: the type has no JSON schema pydantic can make, or it is not an object, or
            the given JSON Schema is invalid.
    """

    def __init__(self, output_type: OutputType[T]) -> None:
        self._adapter: TypeAdapter[T] | None = None
        if isinstance(output_type, Mapping):
            schema = dict(output_type)
            problem = check_json_schema(schema)
            if problem:
                raise ConfigError(f"the output JSON schema is invalid: {problem}")
        else:
            try:
                self._adapter = TypeAdapter(output_type)
                schema = self._adapter.json_schema()
            except (PydanticSchemaGenerationError, PydanticUserError) as exc:
                raise ConfigError(f"output_type {output_type!r} cannot be used: {exc}") from exc
        if schema.get("type") != "object":
            raise ConfigError(
                f"output_type must describe a JSON object (a pydantic model, a dataclass, a "
                f"TypedDict or an object schema), not {schema.get('type') or 'this'!r}"
            )
        described = schema.get("description")
        description = described if isinstance(described, str) and described else ""
        self.schema = OutputSchema(
            OUTPUT_TOOL, schema, f"{DEFAULT_DESCRIPTION} {description}".strip()
        )

    def from_text(self, text: str) -> T:
        """The answer a reply's text holds (JSON, possibly in a Markdown code fence).

        Raises:
            InvalidAnswer: it is not JSON, or does not fit.
        """
        try:
            data = json.loads(_unfenced(text))
        except (ValueError, RecursionError):
            raise InvalidAnswer(f"your final answer is not valid JSON. {_HOW}") from None
        if not isinstance(data, dict):
            raise InvalidAnswer(
                f"your final answer must be a JSON object, not {type(data).__name__}. {_HOW}"
            )
        return self.from_data(data)

    def from_data(self, data: dict[str, object]) -> T:
        """The answer ``data`` (decoded JSON) is, validated.

        Raises:
            InvalidAnswer: it does not fit.
        """
        if self._adapter is None:  # a JSON Schema: the checked dict is the answer
            try:
                checked = validate_with_json_schema(OUTPUT_TOOL, self.schema.schema, data)
            except ToolError as exc:
                raise InvalidAnswer(f"your final answer is invalid: {exc}") from None
            return cast(T, checked)
        try:
            return self._adapter.validate_python(data)
        except ValidationError as exc:
            raise InvalidAnswer(f"your final answer is invalid: {_problems(exc)}") from None


_MADE_READY: dict[object, Output[object]] = {}
_KEPT = 64  # output types kept made ready (then it starts over)


def prepared(output_type: OutputType[T]) -> Output[T]:
    """``output_type`` made ready to ask for and check (a type once, a JSON Schema each time).

    Raises:
        ConfigError: it cannot be an output type.
    """
    if isinstance(output_type, Mapping):
        return Output(output_type)
    try:
        made = _MADE_READY.get(output_type)
    except TypeError:  # not hashable: made anew
        return Output(output_type)
    if made is None:
        if len(_MADE_READY) >= _KEPT:
            _MADE_READY.clear()
        made = _MADE_READY[output_type] = cast("Output[object]", Output(output_type))
    return cast("Output[T]", made)


@dataclass(frozen=True)
class Answer:
    """A reply that gives the final answer: its text, or a call of the output tool.

    Attributes:
        text: the answer's JSON as the model wrote it (the call's arguments, for a call).
        call: the output tool's call, when the answer came so.
        data: the call's arguments as read (``None``: they could not be read).
        refusal: why the call's arguments could not be read.
    """

    text: str
    call: ToolCall | None = None
    data: dict[str, object] | None = None
    refusal: str = ""

    def value(self, output: Output[T]) -> T:
        """The answer, validated by ``output``.

        Raises:
            InvalidAnswer: it does not fit.
        """
        if self.call is None:
            return output.from_text(self.text)
        if self.data is None:
            raise InvalidAnswer(self.refusal.removeprefix("Error: "))
        return output.from_data(self.data)


@dataclass(frozen=True)
class RejectedAnswer:
    """The last answer of a run that never gave a valid one, and why it was refused."""

    answer: str
    errors: str
    attempts: int

    @property
    def reason(self) -> str:
        """The run's reason, in words."""
        return f"the final answer did not match the output type after {self.attempts} tries"


def final_answer(reply: CheckedReply) -> Answer | None:
    """The final answer ``reply`` gives, if any: an output tool call, or (no call) its text."""
    if not reply.calls:
        return Answer(reply.message.content or "")
    call = next((c for c in reply.calls if c.name == OUTPUT_TOOL), None)
    if call is None:
        return None
    return Answer(
        call.arguments, call, reply.arguments.get(call.id), reply.refused.get(call.id, "")
    )


def answer_results(
    calls: Sequence[ToolCall], answer: ToolCall | None, problem: str
) -> list[Message]:
    """What the history adds after a final answer.

    ``problem`` (empty: the answer was valid) is told to the model, as the output call's
    result or in a message of its own; each other call of the reply is answered as not run,
    so the history stays one every API accepts.
    """
    if answer is None:
        return [Message(role="user", content=_retry(problem))] if problem else []
    results = []
    for call in calls:
        if call is answer:
            content, failed = (_retry(problem), True) if problem else (_RECEIVED, False)
        else:
            content, failed = _NOT_RUN, True
        results.append(
            Message(
                role="tool", content=content, tool_call_id=call.id, name=call.name, is_error=failed
            )
        )
    return results


_RECEIVED = "The final answer was received."
_NOT_RUN = (
    f"Error: not run: a reply that calls {OUTPUT_TOOL} runs no other tool. Call the tools you "
    f"need first, then give the final answer."
)


def _retry(problem: str) -> str:
    return f"Error: {problem} Answer again, with the whole answer."


def _unfenced(text: str) -> str:
    """``text`` without a Markdown code fence around it."""
    stripped = text.strip()
    if stripped.startswith("```") and stripped.endswith("```") and len(stripped) >= 6:
        body = stripped[3:-3]
        first, _, rest = body.partition("\n")
        return rest if first.strip().isalnum() or not first.strip() else body
    return stripped


def _problems(exc: ValidationError) -> str:
    """Every problem pydantic found, each with where it is: ``celsius: Field required``."""
    parts = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(part) for part in error["loc"]) or "(answer)"
        parts.append(f"{where}: {error['msg']}")
    return "; ".join(parts)
