"""``RedisBus``: the ``Bus`` in Redis, for workers on one or many machines.

Chosen with ``NETA_REDIS_URL=redis://…`` (needs the ``neta[scale]`` extra). Keys:

- ``neta:events:<session>``: a Redis Stream of the session's frames; the stream's entry ids are
  the frames' ids (they grow with time, so a client resumes after the last one it saw). Each
  stream keeps about ``keep_events`` entries and expires a day after its last frame.
- ``neta:ring``: a stream of session ids, one entry per published batch naming its sessions
  (space-separated) and the publishing bus: a worker following many sessions waits on this one
  key and then reads only the streams that changed, instead of sending every followed stream's
  key with every read; it need not read back what it published itself.
- ``neta:inbox:<owner>``: a list of commands (and replies) for one worker.

Every Redis failure is raised as ``StorageUnavailable``.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

from neta.errors import ConfigError, StorageUnavailable
from neta.hosting.cluster.bus import KEEP_EVENTS, Command, Frame, Published
from neta.safe_url import safe_reason, safe_url

try:
    import redis
    import redis.asyncio as aioredis
    from redis.exceptions import RedisError
except ImportError:  # pragma: no cover - depends on the installed extras
    aioredis = None  # type: ignore[assignment]

T = TypeVar("T")

STREAM_TTL_SECONDS = 86_400
"""A session's event stream is forgotten this long after its last frame."""

_RING = "neta:ring"

RING_KEEP = 100_000
"""Entries the ring keeps (about); a reader further behind than that reads every stream."""

RESYNC_SECONDS = 5.0
"""How often a reader reads every stream it follows anyway (a safety net under the ring)."""

_EVENTS = "neta:events:"

# One batch, one round trip, in one atomic step: each frame appended to its session's stream
# (with the id of the entry before it, so that its publisher can tell which clients have every
# frame before it), each stream's expiry renewed and the ring told, once, which sessions'.
# KEYS: the ring, then each session's stream; ARGV: keep, ring keep, expiry, publisher, then
# (index of the frame's stream in KEYS, frame) pairs.
_PUBLISH = """
local keep, ring_keep, ttl, publisher = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local last, out = {}, {}
for at = 5, #ARGV - 1, 2 do
  local index = tonumber(ARGV[at])
  local before = last[index]
  if before == nil then
    local top = redis.call('XREVRANGE', KEYS[index], '+', '-', 'COUNT', 1)
    before = top[1] and top[1][1] or ''
  end
  local id = redis.call('XADD', KEYS[index], 'MAXLEN', '~', keep, '*', 'f', ARGV[at + 1])
  last[index] = id
  out[#out + 1] = before
  out[#out + 1] = id
end
local sessions = {}
for index = 2, #KEYS do
  redis.call('EXPIRE', KEYS[index], ttl)
  sessions[#sessions + 1] = string.sub(KEYS[index], SESSION_START)
end
local named = table.concat(sessions, ' ')
redis.call('XADD', KEYS[1], 'MAXLEN', '~', ring_keep, '*', 's', named, 'p', publisher)
return out
""".replace("SESSION_START", str(len(_EVENTS) + 1))


CONNECT_SECONDS = 5.0
"""How long connecting to Redis may take before the bus says it cannot reach it."""


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def ping(url: str, timeout: float = CONNECT_SECONDS) -> None:
    """Check that the Redis server at ``url`` answers (a host starting on it: no loop yet).

    Raises:
        StorageUnavailable: it does not (the message names it, without its password).
    """
    client = redis.Redis.from_url(url, socket_connect_timeout=timeout, socket_timeout=timeout)
    try:
        client.ping()
    except RedisError as exc:
        raise StorageUnavailable(
            f"the bus cannot reach {safe_url(url)}: {safe_reason(exc, url)}"
        ) from exc
    finally:
        client.close()


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
            url,
            max_connections=max_connections,
            timeout=10,
            health_check_interval=10,
            socket_connect_timeout=CONNECT_SECONDS,
        )
        self._redis = aioredis.Redis.from_pool(pool)
        self._publish = self._redis.register_script(_PUBLISH)
        self._me = secrets.token_hex(8)  # what the ring says of the frames this bus published
        self._me_bytes = self._me.encode()
        self._ring_last: str | None = None
        self._synced: set[str] = set()
        self._resync_at = 0.0

    async def _call(self, doing: str, call: Callable[[], Awaitable[T]]) -> T:
        try:
            return await call()
        except RedisError as exc:
            raise StorageUnavailable(f"the bus cannot {doing}: {exc}") from exc

    async def publish(self, session_id: str, frame: Frame) -> str:
        """Append ``frame`` to the session's stream; returns its id."""
        return (await self.publish_many([(session_id, frame)]))[0][1]

    async def publish_many(self, items: list[tuple[str, Frame]]) -> Published:
        """``publish`` each ``(session_id, frame)`` in order, in one round trip.

        Returns each frame's ``(previous id, id)``: the id of the entry before it in its
        session's stream (``None``: none) and its own.
        """
        if not items:
            return []
        streams = {f"{_EVENTS}{sid}": None for sid, _ in items}
        index = {key: n for n, key in enumerate(streams, start=2)}  # KEYS[1] is the ring
        args: list[Any] = [self._keep, RING_KEEP, STREAM_TTL_SECONDS, self._me]
        for session_id, item in items:
            args += [index[f"{_EVENTS}{session_id}"], json.dumps(item)]
        keys = [_RING, *streams]
        reply: Any = await self._call("publish events", lambda: self._publish(keys=keys, args=args))
        ids = [_text(value) for value in reply]
        return [(ids[n] or None, ids[n + 1]) for n in range(0, len(ids), 2)]

    async def read(
        self, session_id: str, after: str | None, timeout: float
    ) -> list[tuple[str, Frame]]:
        """The session's frames after id ``after``, oldest first, waiting up to ``timeout``."""
        key = f"{_EVENTS}{session_id}"
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
        self, after: dict[str, str | None], timeout: float, *, skip_own: bool = False
    ) -> list[tuple[str, str, Frame]]:
        """``read`` for several sessions at once: ``(session_id, id, frame)``, each in order.

        A session followed for the first time (or every ``RESYNC_SECONDS``) has its stream read
        from ``after``; after that, the read waits on the ring and reads only the streams of
        the followed sessions it names (with ``skip_own``, not for frames this bus published).
        May return ``[]`` before ``timeout`` (frames of other sessions came).
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
                if skip_own and fields.get(b"p") == self._me_bytes:
                    continue
                for session_id in _text(fields[b"s"]).split():
                    if session_id in after:
                        changed[session_id] = after[session_id]
        return await self._read_streams(changed, None) if changed else []

    async def _read_streams(
        self, after: dict[str, str | None], block: int | None
    ) -> list[tuple[str, str, Frame]]:
        streams = {f"{_EVENTS}{sid}": last or "0-0" for sid, last in after.items()}
        reply: Any = await self._call(
            "read events",
            lambda: self._redis.xread(streams, block=block),  # type: ignore[arg-type]
        )
        frames: list[tuple[str, str, Frame]] = []
        for key, entries in reply or []:
            session_id = _text(key).removeprefix(_EVENTS)
            for event_id, fields in entries:
                frames.append((session_id, _text(event_id), json.loads(fields[b"f"])))
        return frames

    async def last_id(self, session_id: str) -> str | None:
        """The id of the session's newest frame, or ``None`` if it has none."""
        key = f"{_EVENTS}{session_id}"
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
