"""How each kind of MCP content reads as a Neta tool result."""

import base64
import json
import os
import stat
from pathlib import Path

import mcp_types as t

from neta_mcp import results
from neta_mcp.results import to_tool_result


def result(*blocks, **fields):
    return t.CallToolResult(content=list(blocks), **fields)


def test_text_resources_and_links_are_text_the_model_reads(tmp_path):
    mapped = to_tool_result(
        result(
            t.TextContent(type="text", text="intro"),
            t.EmbeddedResource(
                type="resource",
                resource=t.TextResourceContents(uri="file:///notes.md", text="# Notes"),
            ),
            t.ResourceLink(type="resource_link", name="spec", uri="https://example.test/spec"),
        ),
        server="docs",
        media_dir=tmp_path / "media",
    )
    assert mapped.content == (
        "intro\n[resource file:///notes.md]\n# Notes\n"
        "[resource link spec: https://example.test/spec]"
    )
    assert not mapped.is_error
    assert not (tmp_path / "media").exists()


def test_audio_and_binary_resources_are_saved_with_a_note(tmp_path):
    wav = b"RIFF....WAVE"
    blob = base64.b64encode(b"\x00\x01binary").decode()
    mapped = to_tool_result(
        result(
            t.AudioContent(
                type="audio", data=base64.b64encode(wav).decode(), mime_type="audio/wav"
            ),
            t.EmbeddedResource(
                type="resource",
                resource=t.BlobResourceContents(
                    uri="mem://b", blob=blob, mime_type="application/pdf"
                ),
            ),
        ),
        server="media",
        media_dir=tmp_path / "media",
    )
    audio, pdf = (tmp_path / "media" / p for p in mapped.data["files"])
    assert audio.read_bytes() == wav
    assert audio.suffix == ".wav"
    assert pdf.read_bytes() == b"\x00\x01binary"
    assert f"[audio (audio/wav, {len(wav)} bytes) saved to {audio}]" in mapped.content
    assert f"[resource mem://b (application/pdf, 8 bytes) saved to {pdf}]" in mapped.content


def test_undecodable_media_is_a_note_and_nothing_is_written(tmp_path):
    mapped = to_tool_result(
        result(t.ImageContent(type="image", data="not base64!", mime_type="image/png")),
        server="cam",
        media_dir=tmp_path / "media",
    )
    assert mapped.content == "[image (image/png) could not be decoded]"
    assert "files" not in mapped.data
    assert not (tmp_path / "media").exists()


def test_an_error_with_no_content_still_reads_as_an_error(tmp_path):
    mapped = to_tool_result(result(is_error=True), server="x", media_dir=tmp_path / "media")
    assert mapped.is_error
    assert mapped.content == "Error: (the tool returned no content)"


def image(raw, mime="image/png"):
    return t.ImageContent(type="image", data=base64.b64encode(raw).decode(), mime_type=mime)


def test_an_image_over_the_limit_per_item_is_not_saved_and_the_model_is_told(tmp_path):
    too_big = b"\x89PNG" + bytes(results.MAX_ITEM_BYTES)
    mapped = to_tool_result(
        result(t.TextContent(type="text", text="a huge picture:"), image(too_big)),
        server="cam",
        media_dir=tmp_path / "media",
    )
    assert mapped.content == (
        "a huge picture:\n[image (image/png, about 10485764 bytes) not saved: larger than "
        "the 10 MiB allowed per item]"
    )
    assert "files" not in mapped.data
    assert not (tmp_path / "media").exists()


def test_media_past_the_limit_per_result_is_not_saved_and_the_model_is_told(tmp_path, monkeypatch):
    monkeypatch.setattr(results, "MAX_RESULT_BYTES", 10)
    mapped = to_tool_result(
        result(image(b"12345"), image(b"67890"), image(b"X")),
        server="cam",
        media_dir=tmp_path / "media",
    )
    assert len(mapped.data["files"]) == 2
    assert mapped.content.splitlines()[2] == (
        "[image (image/png, 1 bytes) not saved: the result's media passed the 10 bytes "
        "allowed per result]"
    )
    assert len(list((tmp_path / "media").iterdir())) == 2


def test_text_past_the_limit_per_result_is_cut_and_the_model_is_told(tmp_path):
    text = "x" * (results.MAX_TEXT_CHARS + 5)
    mapped = to_tool_result(
        result(t.TextContent(type="text", text=text)), server="log", media_dir=tmp_path
    )
    head, note = mapped.content.rsplit("\n", 1)
    assert head == "x" * results.MAX_TEXT_CHARS
    assert note == "[5 more characters not shown: a result is cut at 1048576 characters]"


def test_structured_content_past_the_limit_is_left_out_and_the_model_is_told(tmp_path):
    big = {"rows": ["x" * results.MAX_TEXT_CHARS]}
    mapped = to_tool_result(
        result(t.TextContent(type="text", text="rows:"), structured_content=big),
        server="db",
        media_dir=tmp_path,
    )
    size = len(json.dumps(big, indent=2))
    assert "structured" not in mapped.data
    assert mapped.content == (
        f"rows:\n[structured content not kept: its {size} characters of JSON pass the "
        "1048576 allowed per result]"
    )


def test_saved_media_and_its_folders_are_for_the_owner_only(tmp_path):
    media = tmp_path / "mcp-media" / "session"
    mapped = to_tool_result(result(image(b"picture")), server="cam", media_dir=media)
    [saved] = mapped.data["files"]
    assert stat.S_IMODE(os.stat(saved).st_mode) == 0o600
    assert stat.S_IMODE(media.stat().st_mode) == 0o700
    assert stat.S_IMODE(media.parent.stat().st_mode) == 0o700


def test_a_server_name_cannot_lead_a_saved_file_out_of_the_media_folder(tmp_path):
    media = tmp_path / "mcp-media" / "session"
    mapped = to_tool_result(result(image(b"picture")), server="../../evil", media_dir=media)
    [saved] = mapped.data["files"]
    assert Path(saved).parent == media
    assert Path(saved).name.startswith("evil-")


def test_each_note_is_cut_and_notes_past_the_limit_are_counted(tmp_path):
    # what six requests of 2,000,000 characters nobody could answer would have added
    note = f"[MCP server 'evil' asks: {'X' * 2_000_000} (declined)]"
    notes = [note] * (results.MAX_NOTES + 6)
    mapped = to_tool_result(
        result(t.TextContent(type="text", text="done")),
        server="evil",
        media_dir=tmp_path,
        notes=notes,
    )
    lines = mapped.content.splitlines()
    assert lines[0] == "done"
    assert len(lines) == 1 + results.MAX_NOTES + 1
    for line in lines[1:-1]:
        assert line.startswith("[MCP server 'evil' asks: XXX")
        more = len(note) - results.MAX_NOTE_CHARS
        assert line.endswith(f"… [{more} more characters of this note not shown]")
        assert len(line) < results.MAX_NOTE_CHARS + 60
    assert lines[-1] == "[6 more notes not shown: a result keeps 10]"


def test_a_result_with_notes_stays_within_the_limit_and_keeps_its_notes(tmp_path):
    text = "x" * results.MAX_TEXT_CHARS
    mapped = to_tool_result(
        result(t.TextContent(type="text", text=text)),
        server="log",
        media_dir=tmp_path,
        notes=["[MCP server 'log' asks: more? (declined)]"],
    )
    assert len(mapped.content) <= results.MAX_TEXT_CHARS + 100
    assert mapped.content.endswith("\n[MCP server 'log' asks: more? (declined)]")
    assert "more characters not shown: a result is cut at 1048576 characters]" in mapped.content


def test_empty_media_saves_no_file_and_the_model_is_told_once(tmp_path):
    empty = t.ImageContent(type="image", data="", mime_type="image/png")
    media = tmp_path / "mcp-media" / "session"
    mapped = to_tool_result(result(*[empty] * 50_000), server="cam", media_dir=media)
    assert mapped.content == "[50000 empty media items not saved]"
    assert "files" not in mapped.data
    assert not media.exists()


def test_media_past_the_number_per_result_is_not_saved_and_the_model_is_told(tmp_path):
    media = tmp_path / "mcp-media" / "session"
    blocks = [image(b"picture %d" % n) for n in range(results.MAX_MEDIA_ITEMS + 5)]
    mapped = to_tool_result(result(*blocks), server="cam", media_dir=media)
    assert len(mapped.data["files"]) == results.MAX_MEDIA_ITEMS
    assert len(list(media.iterdir())) == results.MAX_MEDIA_ITEMS
    assert mapped.content.splitlines()[-1] == (
        "[5 more media items not saved: a result saves at most 100]"
    )
