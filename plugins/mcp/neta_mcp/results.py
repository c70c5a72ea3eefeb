"""An MCP ``CallToolResult`` as a Neta ``ToolResult``: text the model reads, data for hosts."""

from __future__ import annotations

import base64
import binascii
import json
import mimetypes
import uuid
from pathlib import Path
from typing import Any

from neta import ToolResult


def to_tool_result(result: Any, *, server: str, media_dir: Path) -> ToolResult:
    """Map ``result`` (an MCP ``CallToolResult``) onto a ``ToolResult``.

    Text blocks are the content; an image, audio clip or binary resource is saved under
    ``media_dir`` and the model reads a note with its path and type (no provider Neta ships
    sends images to models yet); structured content is the text when no block carries any,
    and always goes to ``data["structured"]``; ``isError`` makes an error result.
    """
    parts: list[str] = []
    saved: list[str] = []
    for block in result.content or []:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind in ("image", "audio"):
            path = _save(block.data, block.mime_type, media_dir, server)
            parts.append(_note(kind, block.mime_type, path))
            if path is not None:
                saved.append(str(path))
        elif kind == "resource":
            parts.append(_resource(block.resource, media_dir, server, saved))
        elif kind == "resource_link":
            parts.append(f"[resource link {block.name}: {block.uri}]")
        else:
            parts.append(f"[{kind or 'unknown'} content not shown]")
    structured = getattr(result, "structured_content", None)
    data: dict[str, Any] = {"server": server}
    if structured is not None:
        data["structured"] = structured
        if not any(p.strip() for p in parts):
            parts = [json.dumps(structured, indent=2, ensure_ascii=False)]
    if saved:
        data["files"] = saved
    content = "\n".join(parts) or "(the tool returned no content)"
    if result.is_error:
        return ToolResult(content=f"Error: {content}", is_error=True, data=data)
    return ToolResult(content=content, data=data)


def _resource(resource: Any, media_dir: Path, server: str, saved: list[str]) -> str:
    text = getattr(resource, "text", None)
    if text is not None:
        return f"[resource {resource.uri}]\n{text}"
    mime = getattr(resource, "mime_type", None) or "application/octet-stream"
    path = _save(getattr(resource, "blob", ""), mime, media_dir, server)
    if path is not None:
        saved.append(str(path))
    return _note(f"resource {resource.uri}", mime, path)


def _note(kind: str, mime: str, path: Path | None) -> str:
    if path is None:
        return f"[{kind} ({mime}) could not be decoded]"
    return f"[{kind} ({mime}, {path.stat().st_size} bytes) saved to {path}]"


def _save(encoded: str, mime: str, media_dir: Path, server: str) -> Path | None:
    try:
        raw = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        return None
    media_dir.mkdir(parents=True, exist_ok=True)
    vendor = (mime or "").replace("/", "/x-", 1)  # audio/wav is known as audio/x-wav
    suffix = mimetypes.guess_extension(mime or "") or mimetypes.guess_extension(vendor) or ".bin"
    path = media_dir / f"{server}-{uuid.uuid4().hex[:12]}{suffix}"
    path.write_bytes(raw)
    return path
