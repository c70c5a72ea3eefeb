"""An MCP ``CallToolResult`` as a Neta ``ToolResult``: text the model reads, data for hosts.

A result is bounded: each image, audio clip or binary resource is saved only up to
``MAX_ITEM_BYTES``, a result's saved media up to ``MAX_RESULT_BYTES`` and ``MAX_MEDIA_ITEMS``
in all (an empty item never); its text, notes included, is cut at ``MAX_TEXT_CHARS``, each
note at ``MAX_NOTE_CHARS`` and the notes after ``MAX_NOTES``; its structured content is kept
only within ``MAX_TEXT_CHARS`` characters of JSON. What is left out is said in the text the
model reads. Saved files are readable by their owner only (0600, in folders of 0700). A saved
image the model can take (PNG, JPEG, GIF, WebP) is also shown to it, as ``read_file`` shows one:
held to the image caps (downscaled with Pillow past them), and named in the text by its
placeholder; one that cannot be shown is saved all the same, and the text says why.
"""

from __future__ import annotations

import base64
import binascii
import json
import mimetypes
import os
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from neta import ImagePart, ToolError, ToolResult
from neta_mcp.naming import tool_name

MAX_ITEM_BYTES = 10 * 2**20
"""Bytes of one image, audio clip or binary resource saved at most (10 MiB)."""

MAX_RESULT_BYTES = 25 * 2**20
"""Bytes of media one result saves at most, in all (25 MiB)."""

MAX_MEDIA_ITEMS = 100
"""Images, audio clips and binary resources one result saves at most (empty ones never)."""

MAX_TEXT_CHARS = 2**20
"""Characters of text (and of structured content's JSON) one result keeps at most."""

MAX_NOTES = 10
"""Notes (requests nobody could answer) one result keeps at most; the rest are counted."""

MAX_NOTE_CHARS = 1000
"""Characters of one note kept at most."""


def to_tool_result(
    result: Any, *, server: str, media_dir: Path, notes: Sequence[str] = ()
) -> ToolResult:
    """Map ``result`` (an MCP ``CallToolResult``) onto a ``ToolResult``.

    Text blocks are the content; an image, audio clip or binary resource is saved under
    ``media_dir`` (made with its parent folder, both private) and the model reads a note with
    its path and type; an image also goes to the model as an image part (``images``), its
    note starting with its placeholder (``[image: NAME.png 800x600]``); structured content
    is the text when no block carries any, and goes to ``data["structured"]``; ``isError``
    makes an error result. ``notes`` (what the server asked that nobody could answer) follow
    the content. The limits of the module's docstring apply.
    """
    media = _Media(media_dir, server)
    parts: list[str | None] = []
    for block in result.content or []:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind in ("image", "audio"):
            parts.append(media.save(kind, block.data, block.mime_type))
        elif kind == "resource":
            parts.append(_resource(block.resource, media))
        elif kind == "resource_link":
            parts.append(f"[resource link {block.name}: {block.uri}]")
        else:
            parts.append(f"[{kind or 'unknown'} content not shown]")
    kept = [part for part in [*parts, *media.untold()] if part is not None]
    data: dict[str, Any] = {"server": server}
    structured = getattr(result, "structured_content", None)
    if structured is not None:
        text = json.dumps(structured, indent=2, ensure_ascii=False)
        if len(text) > MAX_TEXT_CHARS:
            kept.append(
                f"[structured content not kept: its {len(text)} characters of JSON pass the "
                f"{MAX_TEXT_CHARS} allowed per result]"
            )
        else:
            data["structured"] = structured
            if not any(p.strip() for p in kept):
                kept = [text]
    if media.saved:
        data["files"] = media.saved
    told = _bounded_notes(notes)
    room = MAX_TEXT_CHARS - sum(len(note) + 1 for note in told)  # notes kept within the limit
    content = _bounded("\n".join(kept), room) or "(the tool returned no content)"
    content = "\n".join([content, *told])
    images = tuple(media.images)
    if result.is_error:
        return ToolResult(content=f"Error: {content}", is_error=True, data=data, images=images)
    return ToolResult(content=content, data=data, images=images)


def _bounded(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    more = len(text) - limit
    note = f"[{more} more characters not shown: a result is cut at {MAX_TEXT_CHARS} characters]"
    return f"{text[:limit]}\n{note}"


def _bounded_notes(notes: Sequence[str]) -> list[str]:
    told = [_cut_note(note) for note in notes[:MAX_NOTES]]
    if len(notes) > MAX_NOTES:
        told.append(f"[{len(notes) - MAX_NOTES} more notes not shown: a result keeps {MAX_NOTES}]")
    return told


def _cut_note(note: str) -> str:
    if len(note) <= MAX_NOTE_CHARS:
        return note
    return (
        f"{note[:MAX_NOTE_CHARS]}… [{len(note) - MAX_NOTE_CHARS} more characters of this note "
        "not shown]"
    )


def _resource(resource: Any, media: _Media) -> str | None:
    text = getattr(resource, "text", None)
    if text is not None:
        return f"[resource {resource.uri}]\n{text}"
    mime = getattr(resource, "mime_type", None) or "application/octet-stream"
    return media.save(f"resource {resource.uri}", getattr(resource, "blob", ""), mime)


class _Media:
    """Saves one result's media under ``folder``, within the limits; ``saved`` lists the files."""

    def __init__(self, folder: Path, server: str) -> None:
        self.folder = folder
        self.prefix = tool_name(server)  # a server's name may hold "/" or ".."
        self.saved: list[str] = []
        self.images: list[ImagePart] = []
        self.total = 0
        self.empty = 0
        self.past_count = 0

    def save(self, kind: str, encoded: str, mime: str) -> str | None:
        """Save one item; the note the model reads about it (``None``: told in ``untold``)."""
        if not encoded:
            self.empty += 1
            return None
        if len(self.saved) >= MAX_MEDIA_ITEMS:
            self.past_count += 1
            return None
        about = len(encoded) * 3 // 4 - encoded[-2:].count("=")  # what it decodes to
        if about > MAX_ITEM_BYTES:
            return (
                f"[{kind} ({mime}, about {about} bytes) not saved: larger than the "
                f"{MAX_ITEM_BYTES // 2**20} MiB allowed per item]"
            )
        try:
            raw = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            return f"[{kind} ({mime}) could not be decoded]"
        if not raw:
            self.empty += 1
            return None
        if self.total + len(raw) > MAX_RESULT_BYTES:
            return (
                f"[{kind} ({mime}, {len(raw)} bytes) not saved: the result's media passed the "
                f"{_amount(MAX_RESULT_BYTES)} allowed per result]"
            )
        self.total += len(raw)
        path = self._write(raw, mime)
        self.saved.append(str(path))
        saved = f"({mime}, {len(raw)} bytes) saved to {path}"
        if kind != "image":
            return f"[{kind} {saved}]"
        try:
            image = ImagePart.from_bytes(raw, name=path.name)
        except ToolError as exc:
            return f"[image {saved}; not shown to the model: {exc}]"
        self.images.append(image)
        return f"{image.placeholder} {saved}"

    def untold(self) -> list[str]:
        """The notes of the items ``save`` left out without one, each kind counted once."""
        notes = []
        if self.empty:
            notes.append(f"[{self.empty} empty media items not saved]")
        if self.past_count:
            notes.append(
                f"[{self.past_count} more media items not saved: a result saves at most "
                f"{MAX_MEDIA_ITEMS}]"
            )
        return notes

    def _write(self, raw: bytes, mime: str) -> Path:
        for folder in (self.folder.parent, self.folder):  # NETA_HOME/mcp-media/SESSION
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.chmod(folder, 0o700)  # made before by an older Neta, with the umask's mode
        vendor = (mime or "").replace("/", "/x-", 1)  # audio/wav is known as audio/x-wav
        suffix = (
            mimetypes.guess_extension(mime or "") or mimetypes.guess_extension(vendor) or ".bin"
        )
        path = self.folder / f"{self.prefix}-{uuid.uuid4().hex[:12]}{suffix}"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        with os.fdopen(os.open(path, flags, 0o600), "wb") as file:
            file.write(raw)
        return path


def _amount(size: int) -> str:
    return f"{size // 2**20} MiB" if size >= 2**20 and size % 2**20 == 0 else f"{size} bytes"
