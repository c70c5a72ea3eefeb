"""``sanitize_markup``: text shown on a terminal inside rich markup, never obeyed by either."""

import io

from rich.console import Console

from neta.cli.sanitize import sanitize_markup


def test_sanitize_markup_is_shown_literally_by_rich():
    out = io.StringIO()
    shown = sanitize_markup("[red]x[/] \x1b[2J")
    Console(file=out, force_terminal=True, highlight=False).print(f"[cyan]→[/] {shown}", end="")
    assert out.getvalue() == "\x1b[36m→\x1b[0m [red]x[/] \\x1b[2J"
