"""read_file of an image: the image itself for the model, its placeholder for text readers."""

import base64
import sys

import pytest

import neta
from neta.images import MAX_IMAGE_SIDE
from tests.core.images.pictures import picture


def test_read_file_of_a_png_returns_the_image_named_by_its_placeholder(call, session):
    data = picture(80, 60)
    (session.workspace / "chart.png").write_bytes(data)
    result = call("read_file", path="chart.png")
    assert result.content == "[image: chart.png 80x60]"
    [image] = result.images
    assert base64.b64decode(image.data) == data
    assert result.data["image"] == {
        "name": "chart.png",
        "media_type": "image/png",
        "bytes": len(data),
        "width": 80,
        "height": 60,
    }


@pytest.mark.parametrize("media_type", ["image/jpeg", "image/gif", "image/webp"])
def test_read_file_knows_an_image_by_its_bytes_not_its_name(call, session, media_type):
    (session.workspace / "capture.bin").write_bytes(picture(20, 10, media_type))
    [image] = call("read_file", path="capture.bin").images
    assert image.media_type == media_type


def test_read_file_of_text_named_like_an_image_reads_the_text(call, session):
    (session.workspace / "fake.png").write_text("not an image\n")
    result = call("read_file", path="fake.png")
    assert result.content == "     1\tnot an image"
    assert result.images == ()


def test_read_file_downscales_a_large_image(call, session):
    (session.workspace / "big.jpg").write_bytes(picture(5000, 2500, "image/jpeg"))
    result = call("read_file", path="big.jpg")
    assert result.content == f"[image: big.jpg {MAX_IMAGE_SIDE}x{MAX_IMAGE_SIDE // 2}]"


def test_read_file_without_pillow_says_how_to_enable_downscaling(call, session, monkeypatch):
    (session.workspace / "big.png").write_bytes(picture(3000, 100))
    (session.workspace / "small.png").write_bytes(picture(30, 10))
    monkeypatch.setitem(sys.modules, "PIL", None)
    assert call("read_file", path="small.png").content == "[image: small.png 30x10]"
    with pytest.raises(neta.ToolError, match=r"pip install 'neta\[images\]'"):
        call("read_file", path="big.png")


def test_read_file_of_an_image_outside_the_workspace_is_refused(call, session):
    outside = session.workspace.parent / "secret.png"
    outside.write_bytes(picture(4, 4))
    (session.workspace / "link.png").symlink_to(outside)
    with pytest.raises(neta.WorkspaceError):
        call("read_file", path="link.png")
    with pytest.raises(neta.WorkspaceError):
        call("read_file", path="../secret.png")
