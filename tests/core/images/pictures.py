"""Image files made for the image tests (with Pillow, which the tests have)."""

import io

from PIL import Image

FORMATS = {"image/png": "PNG", "image/jpeg": "JPEG", "image/gif": "GIF", "image/webp": "WEBP"}


def picture(width=40, height=30, media_type="image/png", *, noise=False, **save):
    """An image of ``width`` by ``height``: flat, or noise (which compresses badly)."""
    if noise:
        import os

        image = Image.frombytes("RGB", (width, height), os.urandom(width * height * 3))
    else:
        image = Image.new("RGB", (width, height), (200, 30, 30))
    out = io.BytesIO()
    image.save(out, FORMATS[media_type], **save)
    return out.getvalue()


def opened(data):
    """The image ``data`` holds, opened."""
    return Image.open(io.BytesIO(data))
