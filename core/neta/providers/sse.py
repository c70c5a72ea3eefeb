"""Server-sent events read from a byte stream, as the WHATWG ``text/event-stream`` format says.

The stream is UTF-8 (bytes that are not become U+FFFD; one leading byte order mark is
dropped) split into lines at CRLF, LF or CR, even when a chunk ends between the CR and the LF.
A line starting with ``:`` is a comment; any other line is a field, ``name: value`` (one space
after the colon is not part of the value) or a bare ``name`` with an empty value. ``data``
lines add to the event's data, joined by line feeds; ``event`` names its type (``message`` when
it names none); ``id`` sets the last event id, which later events keep until another ``id``
changes it; ``retry`` gives the reconnection time in milliseconds (digits only); other fields
are ignored. A blank line dispatches the event, unless it has no data: a block of comments,
``id`` or ``retry`` alone is no event. An event the stream ends in the middle of, before its
blank line, is dropped.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import AsyncGenerator, AsyncIterable
from dataclasses import dataclass

_LINE_END = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class ServerSentEvent:
    """One dispatched event.

    Attributes:
        data: the ``data`` lines, joined by line feeds.
        event: the type the ``event`` field named, or ``message``.
        id: the last event id when it was dispatched (empty when none was sent).
    """

    data: str
    event: str = "message"
    id: str = ""


class EventReader:
    """Reads events from bytes as they arrive: ``feed`` each chunk, ``close`` at the end.

    Attributes:
        last_event_id: the last ``id`` the stream sent.
        retry: the reconnection time in milliseconds the stream asked for, if it did.
    """

    def __init__(self) -> None:
        self.last_event_id = ""
        self.retry: int | None = None
        self._decoder = codecs.getincrementaldecoder("utf-8-sig")(errors="replace")
        self._partial: list[str] = []  # the line that has not ended yet
        self._after_cr = False  # the last line ended with CR: a LF starting the next chunk ends it
        self._data: list[str] = []
        self._event = ""

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        """The events that ``chunk`` completes."""
        return self._read(self._decoder.decode(chunk))

    def close(self) -> list[ServerSentEvent]:
        """The events the end of the stream completes (it drops an unfinished one)."""
        events = self._read(self._decoder.decode(b"", final=True))
        self._partial, self._data, self._event = [], [], ""
        return events

    def _read(self, text: str) -> list[ServerSentEvent]:
        if self._after_cr and text.startswith("\n"):  # the rest of a CRLF
            text = text[1:]
            self._after_cr = False
        if not text:
            return []
        self._after_cr = text.endswith("\r")
        *lines, rest = _LINE_END.split(text)
        if lines:
            lines[0] = "".join(self._partial) + lines[0]
            self._partial = []
        if rest:
            self._partial.append(rest)
        events = []
        for line in lines:
            event = self._line(line)
            if event is not None:
                events.append(event)
        return events

    def _line(self, line: str) -> ServerSentEvent | None:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self.last_event_id = value
        elif name == "retry" and value.isascii() and value.isdigit():
            self.retry = int(value)
        return None

    def _dispatch(self) -> ServerSentEvent | None:
        data, event = self._data, self._event
        self._data, self._event = [], ""
        if not data:
            return None
        return ServerSentEvent("\n".join(data), event or "message", self.last_event_id)


async def read_events(chunks: AsyncIterable[bytes]) -> AsyncGenerator[ServerSentEvent, None]:
    """The events of a byte stream, each as soon as its blank line arrives."""
    reader = EventReader()
    async for chunk in chunks:
        for event in reader.feed(chunk):
            yield event
    for event in reader.close():
        yield event
