"""Tool instances, the calls a model makes, and what a call returns."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from neta.images import ImagePart
from neta.tool_threads import TOOL_THREADS


@dataclass(frozen=True)
class ToolResult:
    """The outcome of one tool call.

    Attributes:
        content: the text the model reads.
        is_error: whether the call failed (the model should react to the message).
        end_turn: ask the runtime to stop after this call and wait for the user
            (the degraded clarify does this).
        data: structured data for hosts and events; never sent to the model.
        images: images the model sees with ``content`` (``ImagePart.from_file``, say); the
            runtime names each in the stored text by its placeholder and keeps a message's
            images within ``MAX_MESSAGE_IMAGE_BYTES``. A model without image input reads the
            placeholders only.
    """

    content: str
    is_error: bool = False
    end_turn: bool = False
    data: dict[str, Any] = field(default_factory=dict)
    images: tuple[ImagePart, ...] = ()


ExecuteFn = Callable[[Any], "str | ToolResult | Awaitable[str | ToolResult]"]
"""The shape of ``Tool.execute``: validated args in, text or a ``ToolResult`` out."""


@dataclass(frozen=True)
class ToolCall:
    """One tool call requested by the model.

    Attributes:
        id: the provider's id for the call, echoed back with the result.
        name: the tool name the model asked for.
        arguments: the raw JSON text of the arguments, as the model wrote it.
    """

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class Tool:
    """A tool instance for one session: a name and the function that runs it.

    ``execute`` receives the validated arguments (an instance of the schema's pydantic model,
    or the checked ``dict`` for a JSON-Schema-described tool) and returns ``str`` or a
    ``ToolResult``, synchronously or as a coroutine. A plain
    (synchronous) function runs in a worker thread, so a slow one stalls neither the event
    loop nor its timeout; events it emits still reach the host on the loop.

    Attributes:
        name: must equal the name of a schema in the catalog.
        execute: the function run for each call.
        sequential: never run this tool concurrently with other calls of the same turn.
        timeout: seconds before the call is abandoned; ``None`` uses the runtime default.
        session_guidance: text for this session's system prompt, after the schema's guidance
            (e.g. the skills this session can read); shown only while the tool is available.
        preview: what a call would do, without doing it, for a person asked to approve it
            (the diff an edit would make); receives the validated arguments like ``execute``
            and may be a coroutine function. ``None``: the person reads the arguments.
    """

    name: str
    execute: ExecuteFn
    sequential: bool = False
    timeout: float | None = None
    session_guidance: str = ""
    preview: Callable[[Any], str | Awaitable[str]] | None = None

    @functools.cached_property
    def runs_in_thread(self) -> bool:
        """Whether ``execute`` is a plain function (run in a worker thread), not a coroutine."""
        return not inspect.iscoroutinefunction(self.execute)

    async def invoke(self, args: Any) -> ToolResult:
        """Run ``execute`` with validated arguments and normalise its return value.

        A plain function runs in a reused daemon thread (``neta.tool_threads``): when the
        call is abandoned (a timeout, a cancelled run) the thread finishes the call on its
        own but never holds the process open.
        """
        if self.runs_in_thread:
            outcome = await _in_thread(self.execute, args)
        else:
            outcome = self.execute(args)
        if inspect.isawaitable(outcome):
            outcome = await outcome
        if isinstance(outcome, ToolResult):
            if not isinstance(outcome.content, str):
                raise TypeError(
                    f"tool {self.name!r} returned a ToolResult whose content is "
                    f"{type(outcome.content).__name__}; expected str"
                )
            return outcome
        if isinstance(outcome, str):
            return ToolResult(content=outcome)
        raise TypeError(
            f"tool {self.name!r} returned {type(outcome).__name__}; expected str or ToolResult"
        )


async def _in_thread(function: Callable[[Any], Any], argument: Any) -> Any:
    loop = asyncio.get_running_loop()
    done: asyncio.Future[Any] = loop.create_future()
    context = contextvars.copy_context()

    def settle(outcome: Any, error: BaseException | None) -> None:
        if done.cancelled():
            return
        if error is not None:
            done.set_exception(error)
        else:
            done.set_result(outcome)

    ended: list[tuple[Any, BaseException | None]] = []

    def work() -> None:
        try:
            ended.append((context.run(function, argument), None))
        except StopIteration as exc:  # a future refuses one: the call would never end
            error = RuntimeError(f"the tool raised StopIteration: {exc}")
            error.__cause__ = exc
            ended.append((None, error))
        except BaseException as exc:  # handed to the awaiting task, which decides
            ended.append((None, exc))

    def tell() -> None:  # once the worker is free again: the next call can have it
        outcome, error = ended.pop()
        with contextlib.suppress(RuntimeError):  # the loop closed while the call ran on
            loop.call_soon_threadsafe(settle, outcome, error)

    TOOL_THREADS.submit(work, then=tell)
    return await done
