"""The images one message may carry, and their names in its text."""

from __future__ import annotations

from collections.abc import Sequence

from neta.images.limits import amount
from neta.images.part import ImagePart

MAX_MESSAGE_IMAGE_BYTES = 6 * 2**20
"""Bytes of images one message (a prompt, a tool's result) keeps (6 MiB: three full-size ones).

An image past it is left out and the message's text says so. Every later request of the session
sends what the history keeps, and the session store keeps it as base64 (a third larger).
"""


def fit_images(content: str, images: Sequence[ImagePart]) -> tuple[str, list[ImagePart]]:
    """The text and the images of a message that keeps ``images`` within the message cap.

    Each kept image is named in the text by its placeholder (put first when the text does not
    name it already); each one left out is named with why.
    """
    kept: list[ImagePart] = []
    notes: list[str] = []
    total = 0
    for image in images:
        if total + image.size > MAX_MESSAGE_IMAGE_BYTES:
            notes.append(
                f"{image.placeholder[:-1]} left out: a message carries at most "
                f"{amount(MAX_MESSAGE_IMAGE_BYTES)} of images]"
            )
            continue
        total += image.size
        kept.append(image)
    unnamed = [image.placeholder for image in kept if image.placeholder not in content]
    text = "\n".join([*unnamed, content] if content else unnamed)
    return "\n".join([text, *notes]) if notes else text, kept
