"""Images in a conversation: ``ImagePart``, the caps, and what a message may carry.

Plugins and hosts use ``neta.ImagePart``; this package is internal otherwise.
"""

from neta.images.limits import INSTALL_IMAGES, MAX_IMAGE_BYTES, MAX_IMAGE_SIDE, MAX_SOURCE_BYTES
from neta.images.message_cap import MAX_MESSAGE_IMAGE_BYTES, fit_images
from neta.images.part import ImagePart

__all__ = [
    "INSTALL_IMAGES",
    "MAX_IMAGE_BYTES",
    "MAX_IMAGE_SIDE",
    "MAX_MESSAGE_IMAGE_BYTES",
    "MAX_SOURCE_BYTES",
    "ImagePart",
    "fit_images",
]
