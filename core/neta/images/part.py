"""``ImagePart``: an image in a message or a tool's result, and the caps every image is held to.

An image travels as its bytes in base64 with its media type, so a session's history stays JSON
(the session store keeps it as it is). Each image is capped (``MAX_IMAGE_SIDE`` pixels a side,
``MAX_IMAGE_BYTES``); a larger one is downscaled when Pillow is installed
(``pip install 'neta[images]'``) and refused, saying so, when it is not.
"""

from __future__ import annotations

import base64
import os
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from neta.errors import ToolError
from neta.images.headers import FORMATS, media_type, pixel_size
from neta.images.limits import (
    MAX_IMAGE_BYTES,
    MAX_IMAGE_SIDE,
    MAX_SOURCE_BYTES,
)
from neta.paths import RootLike, printable, read_bytes

MediaType = Literal["image/png", "image/jpeg", "image/gif", "image/webp"]
"""The image formats models take."""


class ImagePart(BaseModel):
    """An image a message or a tool result carries: base64 bytes and their media type.

    A message keeps its text in ``content`` and names each of its images there by its
    ``placeholder`` (``[image: chart.png 800x600]``), so a host that shows text shows the
    image's name, and a model that takes no image input reads that it was not shown. Make
    one with ``from_bytes`` or ``from_file``, which check the format and hold the image to
    the caps (``MAX_IMAGE_SIDE``, ``MAX_IMAGE_BYTES``).

    Attributes:
        media_type: ``image/png``, ``image/jpeg``, ``image/gif`` or ``image/webp``.
        data: the image's bytes in base64.
        name: what it is called (a file name), for placeholders; may be empty.
        width: its width in pixels (0: unknown).
        height: its height in pixels (0: unknown).
    """

    model_config = ConfigDict(frozen=True)

    media_type: MediaType
    data: str = Field(repr=False)
    name: str = ""
    width: int = Field(0, ge=0)
    height: int = Field(0, ge=0)

    @property
    def size(self) -> int:
        """How many bytes the image is (``data`` decoded)."""
        return len(self.data) * 3 // 4 - self.data[-2:].count("=")

    @property
    def placeholder(self) -> str:
        """The image in words: ``[image: chart.png 800x600]`` (what text-only readers get)."""
        label = self.name or FORMATS[self.media_type]
        if self.width and self.height:
            label += f" {self.width}x{self.height}"
        return f"[image: {label}]"

    @staticmethod
    def media_type_of(data: bytes) -> str | None:
        """The image media type ``data`` (a file's first 16 bytes suffice) is, or ``None``."""
        return media_type(data)

    def data_url(self) -> str:
        """The image as a ``data:`` URL (``data:image/png;base64,...``)."""
        return f"data:{self.media_type};base64,{self.data}"

    @classmethod
    def from_bytes(cls, data: bytes, *, name: str = "") -> ImagePart:
        """An image from a file's bytes, held to the caps.

        Within the caps the bytes are kept as they are; past them the image is downscaled
        (re-encoded, as JPEG when nothing else fits) with Pillow.

        Raises:
            ToolError: not a PNG, JPEG, GIF or WebP image; unreadable; or past the caps
                while Pillow is not installed (the message says how to install it).
        """
        kind = media_type(data)
        label = printable(name) if name else "the data"
        if kind is None:
            raise ToolError(f"{label} is not a PNG, JPEG, GIF or WebP image")
        size = pixel_size(data, kind)
        if size is not None and _within_caps(len(data), size):
            return cls(media_type=kind, data=_b64(data), name=name, width=size[0], height=size[1])
        from neta.images.downscale import downscale  # Pillow loads only for large images

        fitted, kind, (width, height) = downscale(data, kind, label, size)
        return cls(media_type=kind, data=_b64(fitted), name=name, width=width, height=height)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], *, root: RootLike = None) -> ImagePart:
        """The image file at ``path`` (relative to ``root`` when given), held to the caps.

        At most ``MAX_SOURCE_BYTES`` are read; the name is the file's.

        Raises:
            ToolError: the file cannot be read, is too large, or is no image ``from_bytes``
                takes.
            WorkspaceError: ``path`` leads outside ``root``.
        """
        real, data = read_bytes(path, limit=MAX_SOURCE_BYTES, root=root)
        return cls.from_bytes(data, name=real.name or os.fspath(path))


def _within_caps(size: int, pixels: tuple[int, int]) -> bool:
    return size <= MAX_IMAGE_BYTES and max(pixels) <= MAX_IMAGE_SIDE


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
