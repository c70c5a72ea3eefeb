"""``neta run --image PATH``: images that go with the task."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import typer

from neta.errors import ToolError
from neta.images import MAX_IMAGE_SIDE, ImagePart

ImageOpt = typer.Option(
    [],
    "--image",
    "-i",
    metavar="PATH",
    help=f"Attach an image (PNG, JPEG, GIF, WebP) to the task; repeatable. Past {MAX_IMAGE_SIDE} "
    "px or 2 MiB it is downscaled (with Pillow: pip install 'neta[images]').",
    show_default=False,
)
"""``--image``: an image file attached to the task (repeatable)."""


def read_images(paths: Sequence[Path]) -> list[ImagePart]:
    """The images at ``paths`` (the user's own files: not confined to the workspace).

    Raises:
        typer.BadParameter: a file cannot be read, is no image, or is too large to send
            without Pillow (the message says what to install).
    """
    images = []
    for path in paths:
        try:
            images.append(ImagePart.from_file(path.expanduser()))
        except ToolError as exc:
            raise typer.BadParameter(str(exc), param_hint="--image") from None
    return images
