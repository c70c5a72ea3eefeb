"""An example Neta plugin: the ``hello`` toolset.

``hello`` greets someone by name; ``hello_file`` greets everyone listed in a file of the
session's workspace. Install it (``pip install ./examples/neta-tools-hello``) and the tools show
up in ``neta tools list -t hello``; ``NETA_DISABLE_PLUGINS=hello`` turns them off again.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

import neta

MAX_FILE_BYTES = 64_000
"""The largest list of names ``hello_file`` reads."""


class HelloArgs(BaseModel):
    """Arguments of ``hello``."""

    name: str = Field(min_length=1, max_length=100, description="Who to greet.")
    shout: bool = Field(default=False, description="Greet in capitals.")


def hello(args: HelloArgs) -> str:
    """Greet ``args.name``."""
    greeting = f"Hello, {args.name}!"
    return greeting.upper() if args.shout else greeting


class HelloFileArgs(BaseModel):
    """Arguments of ``hello_file``."""

    path: str = Field(description="A text file in the workspace with one name per line.")


def build_hello_file(session: neta.SessionContext) -> neta.Tool:
    """``hello_file`` for one session: a closure over that session's workspace."""

    def hello_file(args: HelloFileArgs) -> str:
        # Never `session.workspace / args.path`: that follows "../" and absolute paths out of
        # the workspace. resolve_in_workspace refuses them (and symlinks leading out) with a
        # WorkspaceError; read_text refuses binary, oversized and undecodable files.
        path = neta.resolve_in_workspace(session.workspace, args.path)
        text = neta.read_text(path, max_bytes=MAX_FILE_BYTES).text
        names = [line.strip() for line in text.splitlines() if line.strip()]
        if not names:
            raise neta.ToolError(f"{args.path} lists nobody to greet: write one name per line")
        return "\n".join(f"Hello, {name}!" for name in names)

    return neta.Tool(name="hello_file", execute=hello_file)


@neta.hookimpl
def neta_toolsets() -> list[neta.ToolsetSpec]:
    """Announce the ``hello`` toolset (on only when requested)."""
    return [neta.ToolsetSpec(name="hello", description="Friendly greetings.", default=False)]


@neta.hookimpl
def neta_tools() -> list[neta.ToolSchema]:
    """Register the schemas of ``hello`` and ``hello_file``."""
    return [
        neta.ToolSchema(
            name="hello",
            toolset="hello",
            description="Greet someone by name.",
            args=HelloArgs,
            effect="reads",  # it changes nothing: no approval is asked in any mode
            when_to_use="When the user asks you to greet someone, use hello.",
        ),
        neta.ToolSchema(
            name="hello_file",
            toolset="hello",
            description="Greet everyone listed in a workspace file (one name per line).",
            args=HelloFileArgs,
            effect="reads",
            when_to_use="When the people to greet are listed in a file, use hello_file.",
        ),
    ]


@neta.hookimpl
def neta_build_tools(session: neta.SessionContext) -> list[neta.Tool]:
    """Build the toolset's tools for one session."""
    return [neta.Tool(name="hello", execute=hello), build_hello_file(session)]
