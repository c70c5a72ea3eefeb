"""The paths module: every file tool reaches files through it, pinned by descriptors.

A path is resolved and used in one step. The walk starts from a descriptor of the root and
opens one component at a time relative to the previous one, never following a symlink in the
kernel (``O_NOFOLLOW``): a symlink is read and its target walked the same way, so one that
leads out of the root is refused however the tree changes meanwhile. The final file is opened
non-blocking and checked with ``fstat`` (regular files only), reads stop at their limit plus
one byte, and writes go to a temporary file renamed within the pinned directory.

A ``PinnedRoot`` may itself lie inside another root (a skill folder inside a skills
directory inside a workspace): it is then reached by the same walk. Without a root a path is
taken as given (``neta patch`` on the user's own files) and walked from ``/``, so the file
checks and bounded reads still apply.
"""

from neta.paths._files import (
    HEAD_BYTES,
    Written,
    path_stat,
    read_bytes,
    remove,
    remove_empty_folder,
    replace_file,
    resolve_in_workspace,
)
from neta.paths._listing import Directory, Entry, open_directory
from neta.paths._printable import printable
from neta.paths._walk import MAX_SYMLINKS, PinnedRoot, RootLike

__all__ = [
    "HEAD_BYTES",
    "MAX_SYMLINKS",
    "Directory",
    "Entry",
    "PinnedRoot",
    "RootLike",
    "Written",
    "open_directory",
    "path_stat",
    "printable",
    "read_bytes",
    "remove",
    "remove_empty_folder",
    "replace_file",
    "resolve_in_workspace",
]
