"""Chat Completions request bodies built from pieces encoded once and then reused.

Every turn of a run sends the whole conversation and the same tool schemas again: a body of
tens of kilobytes (a system prompt of ~10 KB, ~15 KB of schemas) of which only the last message
or two are new. ``BodyEncoder`` keeps the JSON of each message and tool definition of the last
body it built, by the object's identity, and the next body reuses what it repeats: a turn
encodes only what it adds. Messages are frozen and a session's tool definitions are not changed
once offered, so an object seen again is the same JSON; the encoder holds the objects whose JSON
it keeps, so their identities cannot pass to other objects meanwhile.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from neta.messages import Message


def dumps(value: Any) -> bytes:
    """``value`` as compact UTF-8 JSON, as the ``openai`` SDK writes request bodies."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


class BodyEncoder:
    """Encodes request bodies, reusing the JSON of the messages and tools the last one sent.

    Meant for one conversation (a provider serves one session): bodies of several
    conversations built in turn are still right, only encoded whole more often.
    """

    def __init__(self) -> None:
        self.encoded = 0
        """How many pieces were encoded rather than reused (for tests and benchmarks)."""
        self._kept: dict[int, tuple[object, bytes]] = {}

    def body(
        self,
        model: str,
        messages: Iterable[Message],
        tools: Sequence[Mapping[str, Any]],
        extra: Mapping[str, Any] | None = None,
    ) -> bytes:
        """The JSON body: ``model``, ``messages``, ``tools`` (when any) and ``extra``'s keys."""
        used: dict[int, tuple[object, bytes]] = {}
        parts = [b'{"model":', dumps(model), b',"messages":[']
        parts.append(b",".join(self._piece(m, Message.to_openai, used) for m in messages))
        parts.append(b"]")
        if tools:
            parts.append(b',"tools":[')
            parts.append(b",".join(self._piece(t, _same, used) for t in tools))
            parts.append(b"]")
        for key, value in (extra or {}).items():
            parts += [b",", dumps(key), b":", dumps(value)]
        parts.append(b"}")
        self._kept = used
        return b"".join(parts)

    def _piece(
        self, item: Any, value: Callable[[Any], Any], used: dict[int, tuple[object, bytes]]
    ) -> bytes:
        key = id(item)
        kept = self._kept.get(key)
        if kept is None or kept[0] is not item:
            kept = (item, dumps(value(item)))
            self.encoded += 1
        used[key] = kept
        return kept[1]


def _same(value: Any) -> Any:
    return value
