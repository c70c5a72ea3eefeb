"""``tool_progress`` events (an MCP server's progress notifications) on the progress stream."""

import io

from rich.console import Console

from neta.cli.render import EventRenderer
from neta.events import TextDelta, ToolCallStart, ToolProgress


def test_tool_progress_shows_on_stderr_with_its_fraction_and_message():
    err, out = io.StringIO(), io.StringIO()
    render = EventRenderer(
        Console(file=err, width=120, highlight=False),
        text_console=Console(file=out, width=120, highlight=False),
    )
    render(TextDelta(text="Indexing."))
    render(ToolCallStart(call_id="c1", name="index", arguments="{}"))
    render(ToolProgress(name="index", progress=3, total=10, message="scanning [src]"))
    render(ToolProgress(name="index", progress=7, message=""))
    lines = err.getvalue().splitlines()
    assert "index 3/10 (30%) scanning [src]" in lines[-2]
    assert lines[-1].endswith("index 7")
    assert out.getvalue() == "Indexing.\n"
