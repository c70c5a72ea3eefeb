"""``RedisBus``: the ``Bus`` in Redis, for workers on one or many machines.

Chosen with ``NETA_REDIS_URL=redis://…`` (needs the ``neta[scale]`` extra). Keys:

- ``neta:events:<session>``: a Redis Stream of the session's frames; the stream's entry ids are
  the frames' ids (they grow with time, so a client resumes after the last one it saw). Each
  stream keeps about ``keep_events`` entries and expires a day after its last frame.
- ``neta:ring``: a stream of session ids, one entry per session in each published batch: a
  worker following many sessions waits on this one key and then reads only the streams that
  changed, instead of sending every followed stream's key with every read.
- ``neta:inbox:<owner>``: a list of commands (and replies) for one worker.
- ``neta:running``: the sessions whose run started and did not end.

Every Redis failure is raised as ``StorageUnavailable``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

from neta.errors import ConfigError, StorageUnavailable
from neta.hosting.cluster.bus import KEEP_EVENTS, Command, Frame
from neta.safe_url import safe_url

try:
    import redis.asyncio as aioredis
    from redis.exceptions import RedisError
except ImportError:  # pragma: no cover - depends on the installed extras
    aioredis = None  # type: ignore[assignment]

T = TypeVar("T")

STREAM_TTL_SECONDS = 86_400
"""A session's event stream is forgotten this long after its last frame."""

_RUNNING = "neta:running"
_RING = "neta:ring"

RING_KEEP = 100_000
"""Entries the ring keeps (about); a reader further behind than that reads every stream."""

RESYNC_SECONDS = 5.0
"""How often a reader reads every stream it follows anyway (a safety net under the ring)."""


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


class RedisBus:
    """The ``Bus`` in a Redis server.

    Args:
        url: a ``redis://`` URL.
        keep_events: frames each session's stream keeps (approximately; at least this many).
        max_connections: the most connections to Redis this process opens.

    Raises:
        ConfigError: the ``neta[scale]`` extra (redis) is not installed.
    """

    def __init__(self, url: str, keep_events: int = KEEP_EVENTS, max_connections: int = 32) -> None:
        if aioredis is None:
            raise ConfigError("NETA_REDIS_URL needs redis: pip install 'neta[scale]'")
        self.url = url
        self.name = f"Redis {safe_url(url)}"
        self._keep = keep_events
        # Requests beyond ``max_connections`` wait for a free connection instead of failing.
        pool = aioredis.BlockingConnectionPool.from_url(
            url, max_connections=max_connections, timeout=10, health_check_interval=10
        )
        self._redis = aioredis.Redis.from_pool(pool)
        self._ring_last: str | None = None
        self._synced: set[str] = set()
        self._resync_at = 0.0

    async def _call(self, doing: str, call: Callable[[], Awaitable[T]]) -> T:
        try:
            return await call()
        except RedisError as exc:
            raise StorageUnavailable(f"the bus cannot {doing}: {exc}") from exc

    async def mark_running(self, session_id: str, running: bool) -> bool:
        """Note that the session's run started (``True``) or ended; whether that changed it."""
        change = self._redis.sadd if running else self._redis.srem
        changed = await self._call("mark a run", lambda: change(_RUNNING, session_id))
        return bool(changed)

    async def running_sessions(self) -> list[str]:
        """The sessions whose run started and did not end."""
        members: Any = await self._call("read runs", lambda: self._redis.smembers(_RUNNING))
        return sorted(_text(m) for m in members)

    async def publish(self, session_id: str, frame: Frame) -> str:
        """Append ``frame`` to the session's stream; returns its id."""
        key = f"neta:events:{session_id}"
        body = json.dumps(frame)

        async def add() -> Any:
            async with self._redis.pipeline(transaction=True) as pipe:
                pipe.xadd(key, {"f": body}, maxlen=self._keep, approximate=True)
                pipe.expire(key, STREAM_TTL_SECONDS)
                pipe.xadd(_RING, {"s": session_id}, maxlen=RING_KEEP, approximate=True)
                return (await pipe.execute())[0]

        return _text(await self._call("publish an event", add))

    async def publish_many(self, items: list[tuple[str, Frame]]) -> None:
        """``publish`` each ``(session_id, frame)`` in order, in one round trip."""

        async def add() -> Any:
            async with self._redis.pipeline(transaction=False) as pipe:
                for session_id, item in items:
                    key = f"neta:events:{session_id}"
                    pipe.xadd(key, {"f": json.dumps(item)}, maxlen=self._keep, approximate=True)
                    pipe.expire(key, STREAM_TTL_SECONDS)
                for session_id in dict.fromkeys(sid for sid, _ in items):  # after its frames
                    pipe.xadd(_RING, {"s": session_id}, maxlen=RING_KEEP, approximate=True)
                return await pipe.execute()

        await self._call("publish events", add)

    async def read(
        self, session_id: str, after: str | None, timeout: float
    ) -> list[tuple[str, Frame]]:
        """The session's frames after id ``after``, oldest first, waiting up to ``timeout``."""
        key = f"neta:events:{session_id}"
        block = None if timeout <= 0 else max(1, int(timeout * 1000))
        reply: Any = await self._call(
            "read events", lambda: self._redis.xread({key: after or "0-0"}, block=block)
        )
        frames: list[tuple[str, Frame]] = []
        for _, entries in reply or []:
            for event_id, fields in entries:
                frames.append((_text(event_id), json.loads(fields[b"f"])))
        return frames

    async def read_many(
        self, after: dict[str, str | None], timeout: float
    ) -> list[tuple[str, str, Frame]]:
        """``read`` for several sessions at once: ``(session_id, id, frame)``, each in order.

        A session followed for the first time (or every ``RESYNC_SECONDS``) has its stream read
        from ``after``; after that, the read waits on the ring and reads only the streams of
        the followed sessions it names. May return ``[]`` before ``timeout`` (frames of other
        sessions came).
        """
        if not after:
            return []
        if self._ring_last is None:  # from here on, the ring names every session that changes
            newest: Any = await self._call(
                "read events", lambda: self._redis.xrevrange(_RING, count=1)
            )
            self._ring_last = _text(newest[0][0]) if newest else "0-0"
        self._synced &= after.keys()
        now = time.monotonic()
        if now >= self._resync_at:
            self._synced.clear()
            self._resync_at = now + RESYNC_SECONDS
        unsynced = [sid for sid in after if sid not in self._synced]
        if unsynced:
            self._synced.update(unsynced)
            frames = await self._read_streams({sid: after[sid] for sid in unsynced}, None)
            if frames or (timeout <= 0 and len(unsynced) == len(after)):
                return frames
        block = None if timeout <= 0 else max(1, int(timeout * 1000))
        ring_last = self._ring_last
        reply: Any = await self._call(
            "read events",
            lambda: self._redis.xread({_RING: ring_last}, count=10_000, block=block),
        )
        changed: dict[str, str | None] = {}
        for _, entries in reply or []:
            for ring_id, fields in entries:
                self._ring_last = _text(ring_id)
                session_id = _text(fields[b"s"])
                if session_id in after:
                    changed[session_id] = after[session_id]
        return await self._read_streams(changed, None) if changed else []

    async def _read_streams(
        self, after: dict[str, str | None], block: int | None
    ) -> list[tuple[str, str, Frame]]:
        streams = {f"neta:events:{sid}": last or "0-0" for sid, last in after.items()}
        reply: Any = await self._call(
            "read events",
            lambda: self._redis.xread(streams, block=block),  # type: ignore[arg-type]
        )
        frames: list[tuple[str, str, Frame]] = []
        for key, entries in reply or []:
            session_id = _text(key).removeprefix("neta:events:")
            for event_id, fields in entries:
                frames.append((session_id, _text(event_id), json.loads(fields[b"f"])))
        return frames

    async def last_id(self, session_id: str) -> str | None:
        """The id of the session's newest frame, or ``None`` if it has none."""
        key = f"neta:events:{session_id}"
        newest: Any = await self._call("read events", lambda: self._redis.xrevrange(key, count=1))
        return _text(newest[0][0]) if newest else None

    async def send(self, owner: str, command: Command) -> None:
        """Queue ``command`` for the worker ``owner``."""
        body = json.dumps(command)
        await self._call("send a command", lambda: self._redis.rpush(f"neta:inbox:{owner}", body))

    async def receive(self, owner: str, timeout: float) -> Command | None:
        """The next command queued for ``owner``, waiting up to ``timeout`` seconds."""
        key = f"neta:inbox:{owner}"
        popped = await self._call(
            "receive a command", lambda: self._redis.blpop([key], timeout=max(timeout, 0.01))
        )
        return None if popped is None else cast(Command, json.loads(popped[1]))

    async def close(self) -> None:
        """Close the connections."""
        await self._redis.aclose()
