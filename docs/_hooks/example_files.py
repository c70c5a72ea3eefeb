"""MkDocs hook: the example plugin's files join the site under their repository paths.

``docs/plugins.md`` links each file it shows to ``../examples/neta-tools-hello/...``, a path
that works on GitHub; this hook gives those links a target on the site too, so that
``mkdocs build --strict`` finds no broken link.
"""

from __future__ import annotations

import os
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files, InclusionLevel

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "neta-tools-hello"
SKIPPED = ("__pycache__", ".egg-info", "build", "dist")


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add the example's source files, served at ``examples/neta-tools-hello/...``."""
    docs = Path(config.docs_dir)
    for path in sorted(EXAMPLE.rglob("*")):
        parts = path.relative_to(EXAMPLE).parts
        if not path.is_file() or any(p.startswith(".") or p.endswith(SKIPPED) for p in parts):
            continue
        src_uri = Path(os.path.relpath(path, docs)).as_posix()  # ../examples/neta-tools-hello/...
        # Included explicitly: a path starting with ".." would match the default ".*" exclusion.
        file = File.generated(
            config, src_uri, abs_src_path=str(path), inclusion=InclusionLevel.INCLUDED
        )
        file.dest_uri = path.relative_to(REPO).as_posix()
        files.append(file)
    return files
