"""Reading and writing UTF-8 text files faithfully: BOM, line endings and mode kept, writes atomic.

Text is never newline-translated: CRLF stays CRLF from disk to string and back.
Binary and non-UTF-8 files are refused with a ``ToolError`` that says which, so a tool never
feeds a model garbage or writes mangled bytes back. Every access goes through ``neta.paths``:
with ``root=`` a path is confined to that root (symlinks included, under concurrent change),
only regular files are read or replaced, reads are bounded, read-only files are refused.
"""

from __future__ import annotations

import codecs
import os
from dataclasses import dataclass
from pathlib import Path

from neta.errors import ToolError
from neta.paths import RootLike, printable, read_bytes, replace_file

__all__ = [
    "MAX_TEXT_BYTES",
    "TextFile",
    "WrittenText",
    "atomic_write",
    "encode_utf8",
    "read_text",
    "sniff_text",
    "write_text",
]

MAX_TEXT_BYTES = 10 * 1024 * 1024
"""The largest file ``read_text`` reads when no ``max_bytes`` is given."""

_BINARY_SNIFF_BYTES = 8192
"""How much of a file's start is searched for NUL bytes to call it binary."""

_UTF8_BOM = codecs.BOM_UTF8
_FOREIGN_BOMS = (
    (codecs.BOM_UTF32_LE, "UTF-32"),
    (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"),
    (codecs.BOM_UTF16_BE, "UTF-16"),
)


@dataclass(frozen=True)
class TextFile:
    """A UTF-8 text file as read from disk.

    Attributes:
        path: where it was read from.
        text: the decoded text, without the BOM, line endings untouched.
        encoding: the codec of the bytes (always ``"utf-8"`` today).
        bom: whether the file starts with a UTF-8 byte order mark.
    """

    path: Path
    text: str
    encoding: str = "utf-8"
    bom: bool = False

    @property
    def newline(self) -> str | None:
        r"""The file's line ending when it uses only one kind: ``"\n"`` or ``"\r\n"``.

        ``None`` for a file without line breaks or with a mix of both.
        """
        crlf = self.text.count("\r\n")
        bare = self.text.count("\n") - crlf
        if crlf and not bare:
            return "\r\n"
        if bare and not crlf:
            return "\n"
        return None

    def encode(self, text: str) -> bytes:
        """Encode ``text`` the way this file is encoded (its BOM included).

        ``text`` is the file's text without its BOM, as ``TextFile.text`` holds it: a BOM it
        starts with is content (a file can begin with two) and is kept as such.
        """
        data = encode_utf8(text)
        return _UTF8_BOM + data if self.bom else data


def read_text(
    path: str | os.PathLike[str], *, max_bytes: int | None = None, root: RootLike = None
) -> TextFile:
    """Read a UTF-8 text file without translating newlines.

    Args:
        path: the file to read (relative to ``root`` when one is given).
        max_bytes: refuse files larger than this many bytes (``None``: ``MAX_TEXT_BYTES``).
            The limit holds on the read itself, not only on the size the file claims.
        root: confine ``path`` to this directory (see ``neta.paths``); ``None``: as given.

    Raises:
        ToolError: the file is missing, a directory, not a regular file (a FIFO, a device),
            unreadable, too large, binary (a NUL byte in its first 8 KiB) or not valid UTF-8
            (the message gives the byte offset).
        WorkspaceError: ``path`` leads outside ``root``.
    """
    limit = MAX_TEXT_BYTES if max_bytes is None else max_bytes
    _, data = read_bytes(path, limit=limit, root=root)
    return _decode(Path(path), data)


def sniff_text(head: bytes) -> TextFile | None:
    """What the first bytes of a file say about it (BOM, line endings), or ``None`` if not text.

    ``head`` may end inside a character or between a CR and its LF; that end is ignored.
    """
    if any(head.startswith(bom) for bom, _ in _FOREIGN_BOMS) or b"\x00" in head:
        return None
    has_bom = head.startswith(_UTF8_BOM)
    body = head[len(_UTF8_BOM) :] if has_bom else head
    text = body.decode("utf-8", errors="ignore").removesuffix("\r")
    return TextFile(path=Path(), text=text, bom=has_bom)


def _decode(path: Path, data: bytes) -> TextFile:
    """Decode the bytes of file ``path`` as ``read_text`` does (same refusals)."""
    shown = printable(path)
    for bom, name in _FOREIGN_BOMS:
        if data.startswith(bom):
            raise ToolError(f"{shown} is {name} encoded, not UTF-8; only UTF-8 text is supported")
    nul = data.find(b"\x00", 0, _BINARY_SNIFF_BYTES)
    if nul != -1:
        raise ToolError(
            f"{shown} is a binary file (NUL byte at offset {nul}); only text files are supported"
        )
    has_bom = data.startswith(_UTF8_BOM)
    body = data[len(_UTF8_BOM) :] if has_bom else data
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = exc.start + (len(_UTF8_BOM) if has_bom else 0)
        raise ToolError(
            f"{shown} is not UTF-8 text (invalid byte 0x{body[exc.start]:02x} at offset "
            f"{offset}); only UTF-8 files are supported"
        ) from exc
    return TextFile(path=path, text=text, bom=has_bom)


def encode_utf8(text: str) -> bytes:
    """``text`` as UTF-8; a lone surrogate (which UTF-8 cannot hold) is a clear ``ToolError``."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        code = ord(text[exc.start])
        raise ToolError(
            f"the text contains a lone surrogate U+{code:04X} at character {exc.start}, which "
            "cannot be written as UTF-8; nothing was written. Remove it or write the intended "
            "character instead"
        ) from exc


@dataclass(frozen=True)
class WrittenText:
    """What ``write_text`` did.

    Attributes:
        path: the file written (its real path).
        size: bytes written.
        created: whether the file did not exist before.
        crlf: whether bare LF line endings were turned into CRLF, as the file had.
    """

    path: Path
    size: int
    created: bool
    crlf: bool


def write_text(
    path: str | os.PathLike[str],
    text: str,
    *,
    root: RootLike = None,
    make_parents: bool = False,
    keep_crlf: bool = True,
) -> WrittenText:
    """Replace a text file atomically, keeping its mode, its BOM and (optionally) CRLF endings.

    Only the head of the existing file is read (``neta.paths.HEAD_BYTES``): when every line
    break there is CRLF and ``text`` has bare LFs, they become CRLF (with ``keep_crlf``).

    Raises:
        ToolError: as ``atomic_write``; the old contents are then untouched.
        WorkspaceError: ``path`` leads outside ``root``.
    """
    encoded = encode_utf8(text)
    converted = False

    def payload(head: bytes | None) -> bytes:
        nonlocal converted
        existing = None if head is None else sniff_text(head)
        data = encoded
        crlf_file = existing is not None and existing.newline == "\r\n"
        if keep_crlf and crlf_file and text.count("\n") > text.count("\r\n"):
            data = encode_utf8(text.replace("\r\n", "\n").replace("\n", "\r\n"))
            converted = True
        return _with_bom(data, head)

    written = replace_file(path, payload, root=root, make_parents=make_parents)
    return WrittenText(written.path, written.size, written.created, converted)


def atomic_write(
    path: str | os.PathLike[str],
    data: str | bytes,
    *,
    keep_mode: bool = True,
    make_parents: bool = False,
    root: RootLike = None,
) -> int:
    """Replace the contents of ``path`` atomically: a reader sees the old file or the new one.

    The bytes go to a temporary file in the same (descriptor-pinned) directory, are flushed
    to disk, and the temporary file is renamed over ``path``. Writing through a symlink
    (inside ``root``) replaces the file it points to and keeps the link.

    Args:
        path: the file to write (relative to ``root`` when one is given).
        data: bytes are written as given. Text is encoded as UTF-8 without newline
            translation, and gets a UTF-8 BOM when the file it replaces had one.
        keep_mode: give the new file the permission bits of the file it replaces (a new file
            gets the usual ``0o666`` minus the umask either way).
        make_parents: create missing parent directories.
        root: confine ``path`` to this directory (see ``neta.paths``); ``None``: as given.

    Returns:
        The number of bytes written.

    Raises:
        ToolError: the file cannot be written (a directory, not a regular file, read-only,
            text with a lone surrogate...; the message says why); the old contents are then
            untouched.
        WorkspaceError: ``path`` leads outside ``root``.
    """
    encoded = data if isinstance(data, bytes) else encode_utf8(data)

    def payload(head: bytes | None) -> bytes:
        return encoded if isinstance(data, bytes) else _with_bom(encoded, head)

    return replace_file(
        path, payload, root=root, keep_mode=keep_mode, make_parents=make_parents
    ).size


def _with_bom(encoded: bytes, head: bytes | None) -> bytes:
    if head is not None and head.startswith(_UTF8_BOM) and not encoded.startswith(_UTF8_BOM):
        return _UTF8_BOM + encoded
    return encoded
