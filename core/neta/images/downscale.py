"""Fitting an image past the caps into them with Pillow (the optional ``neta[images]`` extra)."""

from __future__ import annotations

import io
import warnings
from typing import TYPE_CHECKING

from neta.errors import ToolError
from neta.images.limits import INSTALL_IMAGES, MAX_IMAGE_BYTES, MAX_IMAGE_SIDE, amount

if TYPE_CHECKING:
    from PIL.Image import Image

_SMALLEST_SIDE = 64  # shrinking stops here: an image this small that still does not fit is refused
_JPEG_QUALITY = 85
_SAVED_AS = {"image/png": "PNG", "image/gif": "PNG", "image/jpeg": "JPEG", "image/webp": "WEBP"}
_MEDIA = {"PNG": "image/png", "JPEG": "image/jpeg", "WEBP": "image/webp"}


def downscale(
    data: bytes, kind: str, label: str, size: tuple[int, int] | None
) -> tuple[bytes, str, tuple[int, int]]:
    """``data`` fitted into the caps: the bytes, their media type and the size in pixels.

    The image is scaled to ``MAX_IMAGE_SIDE`` on its longer side (turned upright first, as
    its EXIF orientation says; an animation keeps its first frame) and saved in its own format
    (a GIF as PNG); when that is still over ``MAX_IMAGE_BYTES``, as JPEG, then smaller by
    quarters until it fits. Within the caps already (when the headers alone could not tell),
    the bytes come back unchanged.

    Raises:
        ToolError: Pillow is not installed, the image cannot be read, or it has more pixels
            than Pillow opens (a decompression bomb).
    """
    try:
        from PIL import Image, ImageOps
    except ImportError:
        raise ToolError(_needs_pillow(len(data), label, size)) from None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as opened:
                original = opened.size
                if len(data) <= MAX_IMAGE_BYTES and max(original) <= MAX_IMAGE_SIDE:
                    return data, kind, original
                opened.draft("RGB", (MAX_IMAGE_SIDE, MAX_IMAGE_SIDE))  # JPEG: decode smaller
                image = ImageOps.exif_transpose(opened)
                image.thumbnail((MAX_IMAGE_SIDE, MAX_IMAGE_SIDE), Image.Resampling.LANCZOS)
                return _fitted(image, _SAVED_AS[kind], label, original)
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise ToolError(f"{label} has too many pixels to open safely ({exc})") from None
    except (OSError, SyntaxError, ValueError) as exc:
        raise ToolError(f"{label} cannot be read as an image: {exc}") from None


def _fitted(
    image: Image, form: str, label: str, original: tuple[int, int]
) -> tuple[bytes, str, tuple[int, int]]:
    from PIL import Image

    while True:
        encoded = _encode(image, form)
        if len(encoded) <= MAX_IMAGE_BYTES:
            return encoded, _MEDIA[form], image.size
        if form != "JPEG":
            form = "JPEG"  # most photos and screenshots fit as JPEG at this size
            continue
        width, height = image.size
        if max(width, height) * 3 // 4 < _SMALLEST_SIDE:
            raise ToolError(
                f"{label} ({original[0]}x{original[1]}) cannot be made to fit "
                f"{amount(MAX_IMAGE_BYTES)}"
            )
        image = image.resize(
            (max(1, width * 3 // 4), max(1, height * 3 // 4)), Image.Resampling.LANCZOS
        )


def _encode(image: Image, form: str) -> bytes:
    out = io.BytesIO()
    if form == "JPEG":
        _opaque(image).save(out, "JPEG", quality=_JPEG_QUALITY, optimize=True)
    elif form == "WEBP":
        mode = "RGBA" if _has_alpha(image) else "RGB"
        image.convert(mode).save(out, "WEBP", quality=_JPEG_QUALITY)
    else:
        image.save(out, form)
    return out.getvalue()


def _has_alpha(image: Image) -> bool:
    return image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info


def _opaque(image: Image) -> Image:
    """``image`` as RGB, what is transparent painted white (JPEG has no transparency)."""
    from PIL import Image

    if not _has_alpha(image):
        return image.convert("RGB")
    rgba = image.convert("RGBA")
    background = Image.new("RGB", rgba.size, (255, 255, 255))
    background.paste(rgba, mask=rgba.getchannel("A"))
    return background


def _needs_pillow(size: int, label: str, pixels: tuple[int, int] | None) -> str:
    shape = f"{pixels[0]}x{pixels[1]} px, " if pixels else ""
    return (
        f"{label} ({shape}{amount(size)}) is past what an image sent to the model may be "
        f"({MAX_IMAGE_SIDE} px on its longer side and {amount(MAX_IMAGE_BYTES)}); Neta "
        f"downscales such images with Pillow, which is not installed: {INSTALL_IMAGES}"
    )
