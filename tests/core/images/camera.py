"""A test plugin whose ``snap`` tool returns images, as a plugin author would write it."""

import base64

from pydantic import BaseModel

import neta
from tests.core.images.pictures import picture


class SnapArgs(BaseModel):
    count: int = 1
    width: int = 40
    height: int = 30
    weight: int = 0  # bytes of each image, when given: stand-ins of that size, not pictures
    text: str = ""


def snap(args: SnapArgs) -> neta.ToolResult:
    return neta.ToolResult(
        content=args.text, images=tuple(shot(args, n) for n in range(1, args.count + 1))
    )


def shot(args: SnapArgs, number: int) -> neta.ImagePart:
    name = f"snap{number}.png"
    if args.weight:
        return weighing(args.weight, name)
    return neta.ImagePart.from_bytes(picture(args.width, args.height), name=name)


def weighing(size: int, name: str) -> neta.ImagePart:
    """An image part of ``size`` bytes (its data is no real picture: for caps on bytes)."""
    return neta.ImagePart(
        media_type="image/png", data=base64.b64encode(bytes(size)).decode(), name=name
    )


@neta.hookimpl
def neta_toolsets():
    return [neta.ToolsetSpec(name="camera", description="Takes pictures.")]


@neta.hookimpl
def neta_tools():
    return [
        neta.ToolSchema(
            name="snap",
            toolset="camera",
            description="Take pictures.",
            args=SnapArgs,
            effect="reads",
        )
    ]


@neta.hookimpl
def neta_build_tools(session):
    return [neta.Tool(name="snap", execute=snap)]
