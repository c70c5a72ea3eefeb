"""An example Neta plugin: the ``hello`` toolset with one tool, ``hello``.

Install it (``pip install ./examples/neta-tools-hello``) and the tool shows up in
``neta tools list``; ``NETA_DISABLE_PLUGINS=hello`` turns it off again.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

import neta


class HelloArgs(BaseModel):
    """Arguments of the ``hello`` tool."""

    name: str = Field(min_length=1, max_length=100, description="Who to greet.")
    shout: bool = Field(default=False, description="Greet in capitals.")


def hello(args: HelloArgs) -> str:
    """Greet ``args.name``."""
    greeting = f"Hello, {args.name}!"
    return greeting.upper() if args.shout else greeting


@neta.hookimpl
def neta_toolsets() -> list[neta.ToolsetSpec]:
    """Announce the ``hello`` toolset (on only when requested)."""
    return [neta.ToolsetSpec(name="hello", description="Friendly greetings.", default=False)]


@neta.hookimpl
def neta_tools() -> list[neta.ToolSchema]:
    """Register the schema of ``hello``."""
    return [
        neta.ToolSchema(
            name="hello",
            toolset="hello",
            description="Greet someone by name.",
            args=HelloArgs,
            when_to_use="When the user asks you to greet someone, use hello.",
        )
    ]


@neta.hookimpl
def neta_build_tools(session: neta.SessionContext) -> list[neta.Tool]:
    """Build ``hello`` for a session (it needs nothing from the session)."""
    del session
    return [neta.Tool(name="hello", execute=hello)]
