"""``neta logs``: the conversations ``neta run`` and ``neta chat`` kept, and one in full."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from neta.cli.context import echo_json
from neta.cli.conversations import Conversation, Conversations
from neta.cli.sanitize import sanitize_markup
from neta.cli.tables import folding_table
from neta.terminal_text import sanitize


def logs(
    action: str = typer.Argument("list", help="list, or show (with an id)."),
    session_id: str | None = typer.Argument(None, help="The conversation to show (or a prefix)."),
    limit: int = typer.Option(20, "--limit", "-n", min=1, help="How many to list."),
    here: bool = typer.Option(False, "--here", help="Only conversations in this workspace."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List recent conversations (kept in NETA_HOME), or show one: `neta logs show ID`."""
    if action not in ("list", "show"):
        raise typer.BadParameter(f"{action!r} is not list or show", param_hint="ACTION")
    if action == "show" and not session_id:
        raise typer.BadParameter("`neta logs show` needs an id (see `neta logs`)")
    if action == "list" and session_id:
        raise typer.BadParameter(
            f"`neta logs list` takes no id; to see one conversation: neta logs show {session_id}"
        )
    conversations = Conversations()
    try:
        if action == "show":
            assert session_id is not None
            _show(conversations, session_id, as_json)
        else:
            found = conversations.recent(limit, Path.cwd().resolve() if here else None)
            _list(found, as_json)
    finally:
        conversations.close()


def _when(seconds: float) -> str:
    return dt.datetime.fromtimestamp(seconds).strftime("%Y-%m-%d %H:%M")


def _list(found: list[Conversation], as_json: bool) -> None:
    if as_json:
        echo_json([c.as_json() for c in found])
        return
    if not found:
        typer.echo("No conversations yet.", err=True)
        return
    table = folding_table("id", "when", "workspace", "model", "prompt", "outcome", "tokens")
    for c in found:
        prompt = " ".join(c.first_prompt.split())
        table.add_row(
            c.session_id[:12],
            _when(c.updated),
            sanitize_markup(c.workspace),
            sanitize_markup(_model(c)),
            sanitize_markup(prompt[:50] + ("…" if len(prompt) > 50 else "")),
            c.outcome,
            str(c.input_tokens + c.output_tokens),
        )
    Console(highlight=False).print(table)


def _model(conversation: Conversation) -> str:
    """``openai:gpt-4o``, or ``?`` for a conversation stored before models were kept."""
    if not conversation.provider:
        return "?"
    return (
        f"{conversation.provider}:{conversation.model}"
        if conversation.model
        else conversation.provider
    )


def _show(conversations: Conversations, session_id: str, as_json: bool) -> None:
    found = conversations.get(session_id)
    history = conversations.history(found.session_id)
    if as_json:
        data = found.as_json()
        data["messages"] = [m.model_dump(mode="json", exclude_none=True) for m in history]
        echo_json(data)
        return
    via = f" at {found.base_url}" if found.base_url else ""
    typer.echo(
        f"session {found.session_id} · {found.command} in {sanitize(found.workspace)} · "
        f"{sanitize(_model(found) + via)} · {_when(found.created)} · {found.outcome} · "
        f"{found.turns} turns · {found.input_tokens + found.output_tokens} tokens"
    )
    if found.reason:
        typer.echo(f"why: {sanitize(found.reason)}")
    decided = {m.tool_call_id: m.permission for m in history if m.role == "tool" and m.permission}
    for message in history:
        if message.role == "system":
            continue
        if message.content:
            typer.echo(f"\n{message.role}: {sanitize(message.content)}")
        elif message.tool_calls:  # a turn of calls alone is the assistant's all the same
            typer.echo(f"\n{message.role}:")
        for call in message.tool_calls or []:
            typer.echo(f"  → {sanitize(call.name)} {sanitize(call.arguments)}")
            permission = decided.get(call.id)
            if permission:
                typer.echo(f"    {permission_line(permission)}")
    if found.outcome == "awaiting_input":
        typer.echo(f'\n(waiting for your answer: neta run --session {found.session_id} "…")')


_UNANSWERED = {"no one to ask": "nobody could be asked", "timeout": "no answer in time"}


def permission_line(permission: Mapping[str, Any]) -> str:
    """``allowed by user (allow once) · 2025-01-02 10:00:03``: how a call was let run or not.

    ``permission`` is ``Message.permission``: ``action``, ``decided_by``, ``rule``,
    ``reason`` and ``at``.
    """
    verb = "allowed" if permission.get("action") == "allow" else "denied"
    by = str(permission.get("decided_by", "?"))
    parts = [f"{verb}, {_UNANSWERED[by]}" if by in _UNANSWERED else f"{verb} by {by}"]
    if permission.get("rule"):
        parts.append(f"rule {permission['rule']}")
    reason = str(permission.get("reason") or "")
    if reason and permission.get("decided_by") != "rule":  # a rule's reason only names it
        parts.append(reason)
    at = permission.get("at")
    if isinstance(at, int | float) and at > 0:
        parts.append(dt.datetime.fromtimestamp(at).strftime("%Y-%m-%d %H:%M:%S"))
    return sanitize(" · ".join(str(part) for part in parts))
