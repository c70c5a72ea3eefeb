"""An MCP image result is shown to the model as an image, and saved as before."""

import base64

import mcp_types as t

from neta.images import MAX_IMAGE_SIDE
from neta_mcp.results import to_tool_result
from tests.core.images.pictures import picture


def image_block(data, mime="image/png"):
    return t.ImageContent(type="image", data=base64.b64encode(data).decode(), mime_type=mime)


def mapped(tmp_path, *blocks):
    return to_tool_result(
        t.CallToolResult(content=list(blocks)), server="cam", media_dir=tmp_path / "media"
    )


def test_an_image_is_an_image_part_named_by_its_placeholder_and_saved(tmp_path):
    data = picture(30, 20)
    result = mapped(tmp_path, t.TextContent(type="text", text="the view:"), image_block(data))
    [saved] = result.data["files"]
    [image] = result.images
    assert base64.b64decode(image.data) == data
    assert image.name == saved.rsplit("/", 1)[1]
    assert result.content == (
        f"the view:\n[image: {image.name} 30x20] (image/png, {len(data)} bytes) saved to {saved}"
    )


def test_a_large_image_is_downscaled_for_the_model_and_saved_whole(tmp_path):
    data = picture(4096, 1024, "image/jpeg")
    result = mapped(tmp_path, image_block(data, "image/jpeg"))
    [image] = result.images
    assert (image.width, image.height) == (MAX_IMAGE_SIDE, MAX_IMAGE_SIDE // 4)
    [saved] = result.data["files"]
    with open(saved, "rb") as file:
        assert file.read() == data


def test_an_image_no_model_takes_is_saved_and_the_text_says_why_it_is_not_shown(tmp_path):
    svg = b'<svg xmlns="http://www.w3.org/2000/svg"/>'
    result = mapped(tmp_path, image_block(svg, "image/svg+xml"), image_block(b"junk"))
    assert result.images == ()
    svg_saved, junk_saved = result.data["files"]
    assert result.content.splitlines() == [
        f"[image (image/svg+xml, 41 bytes) saved to {svg_saved}; not shown to the model: "
        f"{svg_saved.rsplit('/', 1)[1]} is not a PNG, JPEG, GIF or WebP image]",
        f"[image (image/png, 4 bytes) saved to {junk_saved}; not shown to the model: "
        f"{junk_saved.rsplit('/', 1)[1]} is not a PNG, JPEG, GIF or WebP image]",
    ]


def test_an_error_result_keeps_its_images(tmp_path):
    result = to_tool_result(
        t.CallToolResult(content=[image_block(picture(4, 4))], is_error=True),
        server="cam",
        media_dir=tmp_path / "media",
    )
    assert result.is_error
    assert len(result.images) == 1
