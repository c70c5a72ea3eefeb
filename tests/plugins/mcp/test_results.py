"""How each kind of MCP content reads as a Neta tool result."""

import base64

import mcp_types as t

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
