"""Reading and writing UTF-8 text files faithfully: BOM, line endings and mode kept, writes atomic.

Text is never newline-translated: CRLF stays CRLF from disk to string and back.
Binary and non-UTF-8 files are refused with a ``ToolError`` that says which, so a tool never
feeds a model garbage or writes mangled bytes back.
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from neta.errors import ToolError

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
        data = text.encode(self.encoding)
        return _UTF8_BOM + data if self.bom else data


def read_text(path: str | os.PathLike[str], *, max_bytes: int | None = None) -> TextFile:
    """Read a UTF-8 text file without translating newlines.

    Args:
        path: the file to read.
        max_bytes: refuse files larger than this many bytes (``None``: no limit).

    Raises:
        ToolError: the file is missing, a directory, unreadable, too large, binary (a NUL byte
            in its first 8 KiB) or not valid UTF-8 (the message gives the byte offset).
    """
    target = Path(path)
    try:
        if max_bytes is not None:
            size = target.stat().st_size
            if size > max_bytes:
                raise ToolError(
                    f"{target} is too large to read ({size:,} bytes; the limit is "
                    f"{max_bytes:,} bytes)"
                )
        data = target.read_bytes()
    except OSError as exc:
        raise _os_error("read", target, exc) from exc
    return _decode(target, data)


def _decode(path: Path, data: bytes) -> TextFile:
    """Decode the bytes of file ``path`` as ``read_text`` does (same refusals)."""
    for bom, name in _FOREIGN_BOMS:
        if data.startswith(bom):
            raise ToolError(f"{path} is {name} encoded, not UTF-8; only UTF-8 text is supported")
    nul = data.find(b"\x00", 0, _BINARY_SNIFF_BYTES)
    if nul != -1:
        raise ToolError(
            f"{path} is a binary file (NUL byte at offset {nul}); only text files are supported"
        )
    has_bom = data.startswith(_UTF8_BOM)
    body = data[len(_UTF8_BOM) :] if has_bom else data
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = exc.start + (len(_UTF8_BOM) if has_bom else 0)
        raise ToolError(
            f"{path} is not UTF-8 text (invalid byte 0x{body[exc.start]:02x} at offset "
            f"{offset}); only UTF-8 files are supported"
        ) from exc
    return TextFile(path=path, text=text, bom=has_bom)


def atomic_write(
    path: str | os.PathLike[str],
    data: str | bytes,
    *,
    keep_mode: bool = True,
    make_parents: bool = False,
) -> int:
    """Replace the contents of ``path`` atomically: a reader sees the old file or the new one.

    The bytes go to a temporary file in the same directory, are flushed to disk, and the
    temporary file is renamed over ``path``. Writing through a symlink replaces the file it
    points to and keeps the link.

    Args:
        path: the file to write.
        data: bytes are written as given. Text is encoded as UTF-8 without newline
            translation, and gets a UTF-8 BOM when the file it replaces had one.
        keep_mode: give the new file the permission bits of the file it replaces (a new file
            gets the usual ``0o666`` minus the umask either way).
        make_parents: create missing parent directories.

    Returns:
        The number of bytes written.

    Raises:
        ToolError: the file cannot be written (the message says why); the old contents are
            then untouched.
    """
    target = Path(os.path.realpath(path))
    try:
        if target.is_dir():
            raise ToolError(f"{target} is a directory, not a file")
        if make_parents:
            target.parent.mkdir(parents=True, exist_ok=True)
        existing = _existing_stat(target)
        payload = _payload(target, data, existing is not None)
        mode = stat.S_IMODE(existing.st_mode) if keep_mode and existing is not None else None
        _replace(target, payload, mode)
    except OSError as exc:
        raise _os_error("write", target, exc) from exc
    return len(payload)


def _existing_stat(path: Path) -> os.stat_result | None:
    try:
        return path.stat()
    except FileNotFoundError:
        return None


def _payload(target: Path, data: str | bytes, exists: bool) -> bytes:
    if isinstance(data, bytes):
        return data
    encoded = data.encode("utf-8")
    if exists and not encoded.startswith(_UTF8_BOM):
        with target.open("rb") as existing:
            if existing.read(len(_UTF8_BOM)) == _UTF8_BOM:
                return _UTF8_BOM + encoded
    return encoded


def _replace(target: Path, payload: bytes, mode: int | None) -> None:
    fd, temporary = _create_temporary(target)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _fsync_directory(target.parent)


def _create_temporary(target: Path) -> tuple[int, Path]:
    """Create an empty temporary file beside ``target``, honouring the umask like ``open``."""
    for _attempt in range(100):
        candidate = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        return fd, candidate
    raise FileExistsError(errno.EEXIST, "no free temporary file name", str(target.parent))


def _fsync_directory(directory: Path) -> None:
    """Make the rename durable; some file systems cannot fsync a directory, which is fine."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _os_error(action: str, path: Path, exc: OSError) -> ToolError:
    reasons = {
        errno.ENOENT: "no such file or directory",
        errno.EISDIR: "it is a directory, not a file",
        errno.EACCES: "permission denied",
        errno.ENOTDIR: "a parent is not a directory",
    }
    reason = reasons.get(exc.errno or 0, exc.strerror or str(exc))
    return ToolError(f"cannot {action} {path}: {reason}")
