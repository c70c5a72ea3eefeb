"""The server-sent events reader, by the rules of the WHATWG ``text/event-stream`` format."""

import asyncio

import pytest

from neta.providers.sse import EventReader, ServerSentEvent, read_events


def events_of(*chunks: bytes) -> list[ServerSentEvent]:
    reader = EventReader()
    found = [event for chunk in chunks for event in reader.feed(chunk)]
    return found + reader.close()


def test_data_lines_of_one_event_are_joined_by_newlines():
    assert events_of(b"data: one\ndata: two\ndata\ndata:three\n\n") == [
        ServerSentEvent("one\ntwo\n\nthree")
    ]


def test_only_the_first_space_after_the_colon_is_dropped():
    assert events_of(b"data:  two spaces\n\n") == [ServerSentEvent(" two spaces")]


@pytest.mark.parametrize("end", ["\n", "\r\n", "\r"], ids=["LF", "CRLF", "CR"])
def test_every_line_end_of_the_format_ends_lines(end):
    stream = f"data: a{end}data: b{end}{end}data: c{end}{end}".encode()
    assert [e.data for e in events_of(stream)] == ["a\nb", "c"]


def test_a_crlf_split_between_chunks_is_one_line_end():
    assert [e.data for e in events_of(b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n")] == ["a\nb"]


def test_a_cr_ending_a_chunk_ends_its_line_whatever_comes_next():
    assert [e.data for e in events_of(b"data: a\r", b"\r", b"data: b\r", b"x", b"\n\n")] == [
        "a",
        "b",
    ]


def test_every_split_of_a_stream_gives_the_same_events():
    stream = "\ufeffid: 1\r\ndata: héllo\r\n\r\n: note\rdata: ü\n\n".encode()
    whole = events_of(stream)
    assert whole == [ServerSentEvent("héllo", id="1"), ServerSentEvent("ü", id="1")]
    assert events_of(*(stream[i : i + 1] for i in range(len(stream)))) == whole
    for cut in range(len(stream)):
        assert events_of(stream[:cut], stream[cut:]) == whole


def test_one_leading_byte_order_mark_is_dropped():
    assert events_of(b"\xef\xbb\xbfdata: x\n\n") == [ServerSentEvent("x")]
    # a second one is part of the first line, whose field is then unknown
    assert events_of(b"\xef\xbb\xbf\xef\xbb\xbfdata: x\n\ndata: y\n\n") == [ServerSentEvent("y")]


def test_bytes_that_are_not_utf8_become_replacement_characters():
    assert events_of(b"data: a\xffb\n\n") == [ServerSentEvent("a\ufffdb")]


def test_comments_and_events_without_data_dispatch_nothing():
    reader = EventReader()
    assert reader.feed(b": keep-alive\n\nretry: 3000\n\nid: 42\n\nevent: ping\n\n\n\n") == []
    assert (reader.retry, reader.last_event_id) == (3000, "42")
    assert reader.feed(b"data: x\n\n") == [ServerSentEvent("x", id="42")]


def test_an_id_stays_until_another_replaces_it_and_one_with_nul_is_ignored():
    assert events_of(b"id: 1\ndata: a\n\ndata: b\n\nid: 2\0\ndata: c\n\nid\ndata: d\n\n") == [
        ServerSentEvent("a", id="1"),
        ServerSentEvent("b", id="1"),
        ServerSentEvent("c", id="1"),
        ServerSentEvent("d", id=""),
    ]


@pytest.mark.parametrize("value", ["soon", "3.5", "-1", "", "٣"])
def test_a_retry_that_is_not_ascii_digits_is_ignored(value):
    reader = EventReader()
    reader.feed(f"retry: 10\n\nretry: {value}\n\n".encode())
    assert reader.retry == 10


def test_the_event_type_is_message_unless_named_and_does_not_carry_over():
    assert events_of(b"event: error\ndata: a\n\ndata: b\n\n") == [
        ServerSentEvent("a", event="error"),
        ServerSentEvent("b"),
    ]


def test_unknown_fields_are_ignored():
    assert events_of(b"colour: blue\ndata: x\nDATA: y\n\n") == [ServerSentEvent("x")]


def test_an_event_the_stream_ends_in_the_middle_of_is_dropped():
    assert events_of(b"data: whole\n\ndata: half") == [ServerSentEvent("whole")]
    assert events_of(b"data: whole\n\ndata: no blank line\n") == [ServerSentEvent("whole")]


def test_read_events_yields_each_event_as_its_blank_line_arrives():
    seen: list[str] = []

    async def chunks():
        yield b"data: first\n"
        assert seen == []
        yield b"\ndata: sec"
        assert seen == ["first"]
        yield b"ond\n\n"

    async def read():
        async for event in read_events(chunks()):
            seen.append(event.data)

    asyncio.run(read())
    assert seen == ["first", "second"]
