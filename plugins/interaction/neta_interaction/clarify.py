"""The ``clarify`` tool: ask the user one question, live or in their next message.

With a clarify callback in the session (the gateway's, the terminal's) the tool awaits the
answer, for at most ``session.clarify_timeout`` seconds. Without one (the REST
service, ``neta run --no-input``) it returns the question as text and ends the turn: the
user's next message is the answer.

The tool emits no ``ClarifyRequest`` event itself: the callback is the one that knows the
request id the host will match the answer with, so it emits (or sends) the request. This
keeps a question from being announced twice.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable
from typing import Annotated

from pydantic import BaseModel, Field, StringConstraints, field_validator

import neta

DEFAULT_CLARIFY_TIMEOUT = 300.0
"""Seconds to wait for an answer when the session sets no ``clarify_timeout``."""

TIMEOUT_MARGIN = 30.0
"""Seconds the tool's own timeout exceeds the clarify timeout, so the answer wait ends first."""

CANCEL_GRACE = 1.0
"""Seconds a timed-out callback gets to finish cleaning up before the tool stops waiting."""

MAX_CHOICES = 4

NO_ANSWER_IN_TIME = (
    "The user did not answer in time. Decide for yourself from what you know and continue."
)
"""What the model reads when the user does not answer before the clarify timeout."""

EMPTY_ANSWER = "The user gave no answer. Decide for yourself from what you know and continue."
"""What the model reads when the answer is empty (e.g. the terminal's input was closed)."""

_Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class ClarifyArgs(BaseModel):
    """Arguments of ``clarify``."""

    question: _Text = Field(description="One clear question for the user.")
    choices: list[_Text] | None = Field(
        None,
        max_length=MAX_CHOICES,
        description=f"Up to {MAX_CHOICES} short answers to choose from; the user may also "
        "answer in their own words.",
    )

    @field_validator("choices")
    @classmethod
    def _each_choice_once(cls, choices: list[str] | None) -> list[str] | None:
        """Drop repeated choices (ignoring case), keeping the first spelling and the order."""
        if choices is None:
            return None
        unique: dict[str, str] = {}
        for choice in choices:
            unique.setdefault(choice.casefold(), choice)
        return list(unique.values())


def build(session: neta.SessionContext) -> neta.Tool:
    """The ``clarify`` tool for ``session``: asks through its clarify callback, if any."""
    timeout = clarify_timeout(session)

    async def clarify(args: ClarifyArgs) -> neta.ToolResult:
        choices = args.choices or None
        data = {"question": args.question, "choices": choices}
        if session.clarify is None:
            return neta.ToolResult(
                content=degraded_text(args.question, choices), end_turn=True, data=data
            )
        answer = await _answer_within(session.clarify(args.question, choices), timeout)
        if answer is None:
            return neta.ToolResult(content=NO_ANSWER_IN_TIME, data={**data, "timed_out": True})
        answer = answer.strip()
        content = f"User answered: {answer}" if answer else EMPTY_ANSWER
        return neta.ToolResult(content=content, data={**data, "answer": answer})

    return neta.Tool(
        name=SCHEMA.name, execute=clarify, sequential=True, timeout=timeout + TIMEOUT_MARGIN
    )


_abandoned: set[asyncio.Future[str]] = set()
"""Timed-out questions whose callbacks still run (held so they are not garbage-collected)."""


async def _answer_within(pending: Awaitable[str], timeout: float) -> str | None:
    """The callback's answer, or ``None`` when none came within ``timeout`` seconds.

    A callback may also raise ``TimeoutError`` itself (a host with its own deadline).

    Unlike ``asyncio.wait_for``, this never waits on a callback that ignores its cancellation:
    it gets ``CANCEL_GRACE`` seconds to finish, then it is left behind.
    """
    asking = asyncio.ensure_future(pending)
    try:
        done, _ = await asyncio.wait({asking}, timeout=timeout)
    except asyncio.CancelledError:
        asking.cancel()
        raise
    if done:
        try:
            return asking.result()
        except TimeoutError:  # the host's own deadline passed first
            return None
    asking.cancel()
    await asyncio.wait({asking}, timeout=CANCEL_GRACE)
    if not asking.done():
        _abandoned.add(asking)
        asking.add_done_callback(_abandoned.discard)
    asking.add_done_callback(_retrieve)
    return None


def _retrieve(future: asyncio.Future[str]) -> None:
    """Mark a left-behind callback's outcome as seen, so asyncio does not log it."""
    if not future.cancelled():
        future.exception()


def clarify_timeout(session: neta.SessionContext) -> float:
    """Seconds to wait for an answer: the session's ``clarify_timeout``, or the default.

    Raises:
        neta.ConfigError: it was set to something other than a positive, finite number.
    """
    value: object = session.clarify_timeout
    if value is None:
        return DEFAULT_CLARIFY_TIMEOUT
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise neta.ConfigError(
            f"session.clarify_timeout must be a positive, finite number of seconds, not {value!r}"
        )
    return float(value)


def degraded_text(question: str, choices: list[str] | None) -> str:
    """The question as the user reads it when nobody can be asked live (choices numbered)."""
    text = f"[clarify] Question: {question}"
    if choices:
        text += "\nChoices: " + "; ".join(f"{n}. {c}" for n, c in enumerate(choices, start=1))
    return text


SCHEMA = neta.ToolSchema(
    effect="reads",
    name="clarify",
    toolset="interaction",
    description=(
        "Ask the user one question and wait for the answer, optionally offering up to "
        f"{MAX_CHOICES} choices. Returns what the user answered."
    ),
    args=ClarifyArgs,
    guidance=(
        "Ask with clarify when the request is ambiguous in a way that changes the result, "
        "when a key parameter is missing and cannot be inferred, or before an action that is "
        "risky or hard to undo (deleting data, overwriting work, anything outside the request).\n"
        "Do not ask when the task is clear, when the answer can be found in the workspace or "
        "the conversation, or about a trivial detail: choose a sensible default and say so.\n"
        "Ask one question at a time, short and specific, and offer choices when the likely "
        "answers are few. If no answer comes in time, decide for yourself and continue."
    ),
    when_to_use=(
        "When the request is ambiguous, misses a key parameter you cannot infer, or the next "
        "step is risky, ask the user with clarify."
    ),
)
