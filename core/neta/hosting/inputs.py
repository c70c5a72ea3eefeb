"""Text clients send (messages, answers): it must be storable, so valid Unicode."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, StringConstraints


def _storable(text: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # JSON lets "\ud800" through; such a message could never be saved or sent to a model
        raise ValueError("text contains an unpaired surrogate (not valid Unicode)") from None
    return text


UserText = Annotated[str, StringConstraints(min_length=1), AfterValidator(_storable)]
"""A user's message: at least one character, valid Unicode."""

AnswerText = Annotated[str, AfterValidator(_storable)]
"""An answer to a question: valid Unicode (the registry refuses an empty one)."""
