"""How large an image may be, and sizes in words."""

from __future__ import annotations

MAX_IMAGE_SIDE = 2048
"""Pixels an image may have on its longer side; a larger one is downscaled to fit."""

MAX_IMAGE_BYTES = 2 * 2**20
"""Bytes one image may take (2 MiB, about 2.7 MB of base64 in the stored history)."""

MAX_SOURCE_BYTES = 20 * 2**20
"""Bytes of an image file read at most (20 MiB); what fits is then downscaled to the caps."""

INSTALL_IMAGES = "pip install 'neta[images]'"
"""What to install for images past the caps to be downscaled (Pillow)."""


def amount(size: int) -> str:
    """``size`` bytes in words: ``812 KiB``, ``3.4 MiB``."""
    if size >= 2**20:
        return f"{size / 2**20:.1f} MiB".replace(".0 ", " ")
    if size >= 1024:
        return f"{size // 1024} KiB"
    return f"{size} bytes"
