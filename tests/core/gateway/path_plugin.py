"""A test plugin whose tool returns data that is not plain JSON (a ``Path``)."""

from pathlib import Path

from pydantic import BaseModel

import neta


class WhereArgs(BaseModel):
    """No arguments."""


SCHEMA = neta.ToolSchema(
    name="where", toolset="paths", description="Say where the workspace is.", args=WhereArgs
)


@neta.hookimpl
def neta_toolsets():
    return [neta.ToolsetSpec(name="paths", description="Paths.")]


@neta.hookimpl
def neta_tools():
    return [SCHEMA]


@neta.hookimpl
def neta_build_tools(session):
    async def where(args: WhereArgs) -> neta.ToolResult:
        return neta.ToolResult(content="here", data={"root": Path(session.workspace)})

    return [neta.Tool(name="where", execute=where)]
