"""Which providers take images, and what a model without image input is sent instead.

A provider says its model takes images with a true ``image_input`` attribute (the ``openai``
and ``anthropic`` providers do, unless told otherwise; the scripted one does not). Any other
provider, a host's own included, is sent each image as its placeholder text, with a note that
the model cannot see it; the stored history keeps the images all the same, so a later model
that can see them does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from neta.messages import Message
from neta.providers.base import ModelRequest, ModelResponse, Provider, TextSink

NOT_SHOWN = "not shown: this model takes no image input"
"""What a text-only model reads in place of each image, after its name."""


def takes_images(provider: Provider) -> bool:
    """Whether ``provider`` declares that its model takes images (``image_input = True``)."""
    return getattr(provider, "image_input", False) is True


def text_only(message: Message) -> Message:
    """``message`` without its images: each one's placeholder in the text says it is not shown."""
    text = message.content or ""
    for image in message.images:
        named = image.placeholder
        instead = f"{named[:-1]} ({NOT_SHOWN})]"
        text = text.replace(named, instead, 1) if named in text else f"{text}\n{instead}".lstrip()
    return message.model_copy(update={"content": text, "images": []})


class TextOnlyProvider:
    """``provider``, sent every image of a request as text (``text_only``).

    The text-only copy of a message is made once and sent again while the message is in the
    history, so a provider that reuses a message's encoded form by its identity still can.
    """

    def __init__(self, provider: Provider) -> None:
        self.provider = provider
        self._copies: dict[int, tuple[Message, Message]] = {}
        # how many leading messages of the last request were looked at, and whether one
        # held an image: a run's history only grows, so each turn looks at its new messages
        self._scanned: tuple[int, Message | None, bool] = (0, None, False)

    def _any_images(self, messages: Sequence[Message]) -> bool:
        scanned, last, found = self._scanned
        if scanned > len(messages) or (scanned and messages[scanned - 1] is not last):
            scanned, found = 0, False  # another history, or one compacted: look again
        found = found or any(message.images for message in messages[scanned:])
        self._scanned = (len(messages), messages[-1] if messages else None, found)
        return found

    async def complete(self, request: ModelRequest, on_text: TextSink) -> ModelResponse:
        """The provider's answer to ``request``, its images made text."""
        if not self._any_images(request.messages):
            return await self.provider.complete(request, on_text)
        copies: dict[int, tuple[Message, Message]] = {}
        messages = []
        for message in request.messages:
            if message.images:
                kept = self._copies.get(id(message)) or (message, text_only(message))
                copies[id(message)] = kept  # holds the message: its id stays its own
                message = kept[1]
            messages.append(message)
        self._copies = copies
        return await self.provider.complete(replace(request, messages=messages), on_text)
