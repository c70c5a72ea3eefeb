"""What the crew tests share: one provider that routes each child to its own script, a slow
tool to cancel, a tool that ends the turn, a plugin that records session ends, and an agent with
the built-in toolsets."""

import asyncio

from pydantic import BaseModel

import neta
import neta_base.plugin
import neta_crew.plugin
import neta_interaction.plugin
import neta_planning.plugin
from neta.providers.scripted import ScriptedProvider
from neta.runtime.agent import Agent


class Router:
    """One provider for a parent and its children, as in production, with a script for each.

    A request whose first user message names a key (the key is written in the child's goal)
    is answered from that key's script; every other request from the parent's script.
    """

    def __init__(self, parent_turns, **children):
        self.parent = ScriptedProvider(parent_turns)
        self.children = {key: ScriptedProvider(turns) for key, turns in children.items()}

    async def complete(self, request, on_text):
        first = next((m.content or "" for m in request.messages if m.role == "user"), "")
        for key, provider in self.children.items():
            if f"[{key}]" in first:
                return await provider.complete(request, on_text)
        return await self.parent.complete(request, on_text)


def call(name, **arguments):
    return {"name": name, "arguments": arguments}


def turn(*calls, **fields):
    return {"tool_calls": list(calls), **fields}


# -- a slow tool and a session-end recorder -----------------------------------------------------

wait_log: list[str] = []
ended_sessions: list[str] = []


class WaitArgs(BaseModel):
    seconds: float
    label: str
    linger: float = 0.0  # seconds its clean-up takes once cancelled


async def wait(args: WaitArgs) -> str:
    wait_log.append(f"start {args.label}")
    try:
        await asyncio.sleep(args.seconds)
    except asyncio.CancelledError:
        wait_log.append(f"cancelled {args.label}")
        if args.linger:
            await asyncio.sleep(args.linger)
            wait_log.append(f"cleaned up {args.label}")
        raise
    wait_log.append(f"end {args.label}")
    return f"waited {args.seconds}"


class HoldArgs(BaseModel):
    reason: str


def hold(args: HoldArgs) -> neta.ToolResult:
    """Ends the turn without escalating (as a third-party approval tool would)."""
    return neta.ToolResult(content=f"[hold] {args.reason}", end_turn=True)


class Exploding:
    """A provider with a bug: after ``turns`` it raises something other than ``ProviderError``."""

    def __init__(self, turns=()):
        self.inner = ScriptedProvider(list(turns))

    async def complete(self, request, on_text):
        if self.inner.remaining:
            return await self.inner.complete(request, on_text)
        raise KeyError("choices")


class SlowPlugin:
    """Toolset ``slow`` (on request): ``wait`` and ``hold``. Records every session that ends."""

    @neta.hookimpl
    def neta_toolsets(self):
        return [neta.ToolsetSpec(name="slow", description="A tool that waits.", default=False)]

    @neta.hookimpl
    def neta_tools(self):
        return [
            neta.ToolSchema(name="wait", toolset="slow", description="Wait.", args=WaitArgs),
            neta.ToolSchema(name="hold", toolset="slow", description="Hold.", args=HoldArgs),
        ]

    @neta.hookimpl
    def neta_build_tools(self, session):
        return [neta.Tool(name="wait", execute=wait), neta.Tool(name="hold", execute=hold)]

    @neta.hookimpl
    def neta_session_end(self, session):
        ended_sessions.append(session.session_id)


def crew_pm():
    """Base, planning, interaction, crew and slow; clears what the slow plugin records."""
    wait_log.clear()
    ended_sessions.clear()
    return neta.create_plugin_manager(
        load_entrypoints=False,
        plugins=[
            ("base", neta_base.plugin),
            ("planning", neta_planning.plugin),
            ("interaction", neta_interaction.plugin),
            ("crew", neta_crew.plugin),
            ("slow", SlowPlugin()),
        ],
    )


def crew_agent(tmp_path, router, **options):
    """An agent with base, planning, interaction, crew and slow, answering through ``router``."""
    return Agent(provider=router, plugin_manager=crew_pm(), workspace=tmp_path, **options)


BASE_TOOLS = ["bash", "read_file", "write_file", "list_dir", "patch"]
