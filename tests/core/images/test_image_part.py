"""ImagePart: what the bytes are, the caps, downscaling with Pillow, and without it."""

import base64
import sys

import pytest

import neta
from neta.images import MAX_IMAGE_BYTES, MAX_IMAGE_SIDE, MAX_SOURCE_BYTES
from tests.core.images.pictures import opened, picture


def hide_pillow(monkeypatch):
    """From now on Pillow cannot be imported, as when ``neta[images]`` is not installed."""
    monkeypatch.setitem(sys.modules, "PIL", None)


@pytest.mark.parametrize(
    ("media_type", "save"),
    [
        ("image/png", {}),
        ("image/jpeg", {}),
        ("image/jpeg", {"progressive": True}),
        ("image/gif", {}),
        ("image/webp", {}),
        ("image/webp", {"lossless": True}),
    ],
)
def test_an_image_within_the_caps_is_kept_byte_for_byte_with_its_type_and_size(media_type, save):
    data = picture(321, 123, media_type, **save)
    image = neta.ImagePart.from_bytes(data, name="shot")
    assert image.media_type == media_type
    assert (image.width, image.height) == (321, 123)
    assert base64.b64decode(image.data) == data
    assert image.size == len(data)


@pytest.mark.parametrize("media_type", ["image/png", "image/jpeg", "image/gif", "image/webp"])
def test_without_pillow_an_image_within_the_caps_still_comes_whole(monkeypatch, media_type):
    data = picture(64, 48, media_type)
    hide_pillow(monkeypatch)
    image = neta.ImagePart.from_bytes(data, name="small")
    assert base64.b64decode(image.data) == data
    assert (image.width, image.height) == (64, 48)


def test_the_placeholder_names_the_image_and_its_size():
    image = neta.ImagePart.from_bytes(picture(800, 600), name="chart.png")
    assert image.placeholder == "[image: chart.png 800x600]"
    unnamed = neta.ImagePart.from_bytes(picture(10, 20, "image/jpeg"))
    assert unnamed.placeholder == "[image: JPEG 10x20]"
    assert unnamed.data_url().startswith("data:image/jpeg;base64,/9j/")


def test_bytes_that_are_no_image_are_refused_by_name():
    with pytest.raises(neta.ToolError, match=r"notes.txt is not a PNG, JPEG, GIF or WebP image"):
        neta.ImagePart.from_bytes(b"just text", name="notes.txt")
    svg = b'<svg xmlns="http://www.w3.org/2000/svg"/>'
    with pytest.raises(neta.ToolError, match="not a PNG"):
        neta.ImagePart.from_bytes(svg, name="logo.svg")


def test_a_large_image_is_downscaled_to_the_side_cap_keeping_its_shape():
    image = neta.ImagePart.from_bytes(picture(4000, 1000), name="wide.png")
    assert (image.width, image.height) == (MAX_IMAGE_SIDE, MAX_IMAGE_SIDE // 4)
    assert image.media_type == "image/png"
    assert opened(base64.b64decode(image.data)).size == (image.width, image.height)


def test_an_image_too_heavy_for_its_own_format_becomes_a_jpeg_within_the_byte_cap():
    data = picture(1500, 1500, noise=True)  # noise: a PNG of it weighs ~6.7 MB
    assert len(data) > MAX_IMAGE_BYTES
    image = neta.ImagePart.from_bytes(data, name="noise.png")
    assert image.media_type == "image/jpeg"
    assert image.size <= MAX_IMAGE_BYTES
    assert opened(base64.b64decode(image.data)).format == "JPEG"
    assert image.placeholder.startswith("[image: noise.png ")


def test_a_transparent_png_made_jpeg_is_flattened_on_white():
    from PIL import Image

    from neta.images.downscale import _opaque

    clear = Image.new("RGBA", (4, 4), (0, 0, 0, 0))
    assert _opaque(clear).getpixel((0, 0)) == (255, 255, 255)


def test_a_phone_photo_is_turned_upright_as_its_exif_says_when_downscaled():
    from PIL import Image

    photo = Image.new("RGB", (3000, 1000), (10, 200, 10))
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90° clockwise to show
    import io

    out = io.BytesIO()
    photo.save(out, "JPEG", exif=exif)
    image = neta.ImagePart.from_bytes(out.getvalue(), name="photo.jpg")
    assert image.height > image.width  # upright: taller than wide
    assert max(image.width, image.height) == MAX_IMAGE_SIDE


def test_without_pillow_an_image_past_the_caps_is_refused_saying_how_to_enable_downscaling(
    monkeypatch,
):
    data = picture(3000, 200)
    hide_pillow(monkeypatch)
    with pytest.raises(neta.ToolError) as caught:
        neta.ImagePart.from_bytes(data, name="wide.png")
    message = str(caught.value)
    assert "wide.png (3000x200 px" in message
    assert f"{MAX_IMAGE_SIDE} px on its longer side" in message
    assert "pip install 'neta[images]'" in message


def test_an_image_that_cannot_be_decoded_is_refused_with_why():
    broken = picture(3000, 3000)[:200]  # the header says 3000x3000; the pixels are gone
    with pytest.raises(neta.ToolError, match="cannot be read as an image"):
        neta.ImagePart.from_bytes(broken, name="broken.png")


def test_a_decompression_bomb_is_refused(monkeypatch):
    from PIL import Image

    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1000)
    with pytest.raises(neta.ToolError, match="too many pixels"):
        neta.ImagePart.from_bytes(picture(3000, 100), name="bomb.png")


def test_from_file_reads_inside_the_root_only(tmp_path):
    (tmp_path / "pics").mkdir()
    (tmp_path / "pics" / "a.gif").write_bytes(picture(5, 5, "image/gif"))
    image = neta.ImagePart.from_file("pics/a.gif", root=tmp_path / "pics" / "..")
    assert image.name == "a.gif"
    assert image.media_type == "image/gif"
    with pytest.raises(neta.WorkspaceError):
        neta.ImagePart.from_file("../outside.png", root=tmp_path / "pics")


def test_from_file_refuses_a_file_past_the_source_limit(tmp_path):
    huge = tmp_path / "huge.png"
    with huge.open("wb") as file:
        file.write(picture(10, 10))
        file.truncate(MAX_SOURCE_BYTES + 1)
    with pytest.raises(neta.ToolError, match="too large to read"):
        neta.ImagePart.from_file(huge)


def test_an_image_part_is_json_and_comes_back_equal():
    image = neta.ImagePart.from_bytes(picture(3, 2), name="dot.png")
    again = neta.ImagePart.model_validate_json(image.model_dump_json())
    assert again == image
    assert "data=" not in repr(image)  # a repr never prints the bytes


def test_the_media_type_is_known_from_a_files_first_bytes():
    assert neta.ImagePart.media_type_of(picture(5, 5, "image/webp")[:16]) == "image/webp"
    assert neta.ImagePart.media_type_of(picture(5, 5, "image/gif")[:16]) == "image/gif"
    assert neta.ImagePart.media_type_of(b"%PDF-1.7") is None
