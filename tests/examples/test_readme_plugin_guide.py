"""The docs' plugin guide shows the real example plugin, file for file, and the whole context."""

import dataclasses
import re
from pathlib import Path

import neta

REPO = Path(__file__).resolve().parents[2]
GUIDE = REPO / "docs" / "plugins.md"
EXAMPLE = REPO / "examples" / "neta-tools-hello"

# A shown file's link is relative to docs/, so it works on GitHub and (through the docs' hook)
# on the site: ../examples/neta-tools-hello/...
SHOWN_FILE = re.compile(
    r"^\*\*\[`[^`]+`\]\(\.\./(examples/neta-tools-hello/[^)]+)\)\*\*\n\n```\w+\n(.*?)^```$",
    re.MULTILINE | re.DOTALL,
)


def guide() -> str:
    page = GUIDE.read_text()
    start = page.index("## Writing a plugin\n")
    end = page.find("\n## ", start + 1)
    return page[start:] if end == -1 else page[start:end]


def example_files() -> set[str]:
    """The example's source files (not caches or build output)."""
    skipped = ("__pycache__", ".egg-info", "build", "dist")
    return {
        path.relative_to(REPO).as_posix()
        for path in EXAMPLE.rglob("*")
        if path.is_file()
        and not any(
            part.startswith(".") or part.endswith(skipped)
            for part in path.relative_to(EXAMPLE).parts
        )
    }


def test_the_guide_shows_every_file_of_the_example_exactly():
    shown = dict(SHOWN_FILE.findall(guide()))
    assert set(shown) == example_files()
    for path, block in shown.items():
        assert block == (REPO / path).read_text(), f"the guide's {path} differs from the file"


def test_the_guides_code_never_joins_a_model_given_path_onto_the_workspace():
    code = "".join(re.findall(r"```\w*\n(.*?)```", guide(), re.DOTALL))
    statements = [line.split("#")[0] for line in code.splitlines()]
    assert not [line for line in statements if "workspace /" in line]
    assert "neta.resolve_in_workspace(session.workspace" in code


def test_the_guide_tables_every_field_of_the_session_context():
    text = guide()
    table = [line for line in text.splitlines() if line.startswith("| `")]
    fields = {line.split("`")[1] for line in table}
    assert {f.name for f in dataclasses.fields(neta.SessionContext)} <= fields


def test_the_guide_says_how_to_report_errors_and_test_a_plugin():
    text = guide()
    for name in ("ToolError", "WorkspaceError", "ScriptedProvider", "build_session_tools"):
        assert f"neta.{name}" in text or f"`{name}`" in text, name
    assert "bound.tool.invoke(" in text
