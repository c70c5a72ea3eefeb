"""A test plugin with tools that behave in every way the runtime must handle."""

import asyncio
import sys
import threading
import time

from pydantic import BaseModel, Field

import neta


class EchoArgs(BaseModel):
    text: str = Field(min_length=1)


class SleepArgs(BaseModel):
    seconds: float = 0.2
    label: str = ""
    linger: float = 0.0  # seconds its clean-up takes once cancelled


class NoArgs(BaseModel):
    pass


class Item(BaseModel):
    id: str
    note: str = "none"


class NestedArgs(BaseModel):
    items: list[Item]
    first: Item | None = None


LOG: list[str] = []


async def sleepy(args: SleepArgs) -> str:
    LOG.append(f"start {args.label}")
    try:
        await asyncio.sleep(args.seconds)
    except asyncio.CancelledError:
        LOG.append(f"cancelled {args.label}")
        if args.linger:
            await asyncio.sleep(args.linger)
            LOG.append(f"cleaned up {args.label}")
        raise
    LOG.append(f"end {args.label}")
    return f"slept {args.seconds}"


def boom(args: NoArgs) -> str:
    raise RuntimeError("kaboom")


def refuse(args: NoArgs) -> str:
    raise neta.ToolError("this is what the model reads")


def ask(args: NoArgs) -> neta.ToolResult:
    return neta.ToolResult(content="[question] which one?", end_turn=True)


def flood(args: NoArgs) -> str:
    return "A" * 5000 + "MIDDLE" + "Z" * 5000


def blocking(args: SleepArgs) -> str:
    LOG.append(f"start {args.label}")
    THREADS.append(threading.get_ident())
    time.sleep(args.seconds)
    LOG.append(f"end {args.label}")
    return "done"


THREADS: list[int] = []
RAN_IN: list[threading.Thread] = []  # the thread objects themselves: ids are never reused


def whoami(args: NoArgs) -> str:
    RAN_IN.append(threading.current_thread())
    return threading.current_thread().name


def quits(args: NoArgs) -> str:
    sys.exit(4)


def nested(args: NestedArgs) -> str:
    first = args.first.note if args.first else "-"
    return " ".join(f"{item.id}={item.note}" for item in args.items) + f" first={first}"


SCHEMAS = [
    ("echo", EchoArgs, "Echo text back.", "When asked to echo, use echo."),
    ("sleepy", SleepArgs, "Sleep a while.", ""),
    ("serial", SleepArgs, "Sleep, never alongside other calls.", ""),
    ("quick", SleepArgs, "Sleep, with a short timeout.", ""),
    ("boom", NoArgs, "Always raises.", ""),
    ("refuse", NoArgs, "Always refuses.", ""),
    ("ask", NoArgs, "Ends the turn.", ""),
    ("ask_alone", NoArgs, "Ends the turn, never alongside other calls.", ""),
    ("flood", NoArgs, "Floods output.", ""),
    ("blocking", SleepArgs, "Blocks its thread, with a short timeout.", ""),
    ("quits", NoArgs, "Calls sys.exit.", ""),
    ("nested", NestedArgs, "Takes nested objects.", ""),
    ("plans", NoArgs, "Emits a todo update from a plain function.", ""),
    ("malformed", NoArgs, "Returns a result whose content is not text.", ""),
    ("whoami", NoArgs, "Records the thread it runs in.", ""),
]


@neta.hookimpl
def neta_toolsets():
    return [neta.ToolsetSpec(name="kit", description="Runtime test tools.")]


@neta.hookimpl
def neta_tools():
    return [
        neta.ToolSchema(name=n, toolset="kit", description=d, args=a, when_to_use=w)
        for n, a, d, w in SCHEMAS
    ]


@neta.hookimpl
def neta_build_tools(session):
    return [
        neta.Tool(name="echo", execute=lambda a: f"echo: {a.text}"),
        neta.Tool(name="sleepy", execute=sleepy),
        neta.Tool(name="serial", execute=sleepy, sequential=True),
        neta.Tool(name="quick", execute=sleepy, timeout=0.2),
        neta.Tool(name="boom", execute=boom),
        neta.Tool(name="refuse", execute=refuse),
        neta.Tool(name="ask", execute=ask),
        neta.Tool(name="ask_alone", execute=ask, sequential=True),
        neta.Tool(name="flood", execute=flood),
        neta.Tool(name="blocking", execute=blocking, timeout=0.3),
        neta.Tool(name="quits", execute=quits),
        neta.Tool(name="nested", execute=nested),
        neta.Tool(name="plans", execute=lambda a: plans(session)),
        neta.Tool(name="malformed", execute=lambda a: neta.ToolResult(content=None)),
        neta.Tool(name="whoami", execute=whoami),
    ]


def plans(session):
    from neta.events import TodoUpdate

    THREADS.append(threading.get_ident())
    session.emit(TodoUpdate(todos=[], counts={}, revision=1))
    return "planned"
