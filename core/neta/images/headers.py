"""What an image file's first bytes say: its media type and its size in pixels.

Read from the headers alone, so an image within the caps needs no imaging library to be sent.
"""

from __future__ import annotations

import struct

FORMATS = {"image/png": "PNG", "image/jpeg": "JPEG", "image/gif": "GIF", "image/webp": "WebP"}
"""The media types models take as images, and each one's usual name."""

_JPEG_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}  # frame headers, which hold the size


def media_type(data: bytes) -> str | None:
    """The media type the magic bytes of ``data`` say (``image/png``...), or ``None``."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def pixel_size(data: bytes, kind: str) -> tuple[int, int] | None:
    """Width and height as the headers of an image of media type ``kind`` give them.

    ``None`` when they cannot be read (a truncated or unusual file).
    """
    try:
        if kind == "image/png":
            return struct.unpack(">II", data[16:24]) if data[12:16] == b"IHDR" else None
        if kind == "image/gif":
            return struct.unpack("<HH", data[6:10])
        if kind == "image/webp":
            return _webp_size(data)
        if kind == "image/jpeg":
            return _jpeg_size(data)
    except (struct.error, IndexError):
        return None
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8 " and data[23:26] == b"\x9d\x01\x2a":  # lossy: after the start code
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and data[20] == 0x2F:  # lossless: 14 bits each, less one
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":  # extended: the canvas, 24 bits each, less one
        return int.from_bytes(data[24:27], "little") + 1, int.from_bytes(data[27:30], "little") + 1
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    at = 2
    while at + 9 <= len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        if marker == 0xFF:  # padding before a marker
            at += 1
            continue
        if marker == 0x01 or 0xD0 <= marker <= 0xD8:  # markers without a length
            at += 2
            continue
        if marker in _JPEG_SOF:
            height, width = struct.unpack(">HH", data[at + 5 : at + 9])
            return width, height
        (length,) = struct.unpack(">H", data[at + 2 : at + 4])
        at += 2 + length
    return None
