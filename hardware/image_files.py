"""Image files read safely: a photo, a frame of a folder, a card of a deck.

Anything can be handed to the referee as an image. Before anything is decoded, the file's
size and its header's width and height are checked, so a small file that claims to be a
gigapixel picture (a decompression bomb) costs nothing; a cut-off JPEG or PNG is refused
(libjpeg would decode it grey-filled, with only a warning on stderr). Every refusal is one
reason, for the caller's one line.
"""

from __future__ import annotations

import struct
from pathlib import Path

import cv2
import numpy as np

MAX_BYTES = 64 * 1024 * 1024  # a 48-megapixel phone photo is 10-25 MB as a JPEG
MAX_PIXELS = 50_000_000  # 8000 x 6000: every phone camera; the referee reads cards, not posters
_SOF = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}


class ImageFileError(ValueError):
    """An image file that cannot be read; str() is the reason."""


def image_size(data: bytes) -> tuple[str, int, int]:
    """(format, width, height) from the header of a JPEG, PNG, WebP or BMP file, without decoding."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR" and len(data) >= 24:
        w, h = struct.unpack(">II", data[16:24])
        return "png", w, h
    if data[:2] == b"\xff\xd8":
        i = 2
        while i + 9 < len(data):
            if data[i] != 0xFF:
                i += 1  # padding or a stray byte between segments
                continue
            marker = data[i + 1]
            if marker in _SOF:
                h, w = struct.unpack(">HH", data[i + 5 : i + 9])
                return "jpeg", w, h
            if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7 or marker == 0xFF:
                i += 2 if marker != 0xFF else 1
                continue
            (length,) = struct.unpack(">H", data[i + 2 : i + 4])
            i += 2 + length
        raise ImageFileError("a JPEG with no image in it (cut off, or damaged)")
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP" and len(data) >= 30:
        chunk = data[12:16]
        if chunk == b"VP8X":
            w = 1 + int.from_bytes(data[24:27], "little")
            h = 1 + int.from_bytes(data[27:30], "little")
            return "webp", w, h
        if chunk == b"VP8 ":
            w, h = struct.unpack("<HH", data[26:30])
            return "webp", w & 0x3FFF, h & 0x3FFF
        if chunk == b"VP8L":
            bits = int.from_bytes(data[21:25], "little")
            return "webp", 1 + (bits & 0x3FFF), 1 + ((bits >> 14) & 0x3FFF)
        raise ImageFileError("a damaged WebP image")
    if data[:2] == b"BM" and len(data) >= 26:
        w, h = struct.unpack("<ii", data[18:26])
        return "bmp", abs(w), abs(h)
    raise ImageFileError("not a JPEG, PNG, WebP or BMP image")


def read_image(path: str | Path) -> np.ndarray:
    """The file as a BGR image. Raises ImageFileError (missing, empty, too big, not an image,
    cut off, undecodable)."""
    path = Path(path)
    try:
        if not path.exists():
            raise ImageFileError("no such file")
        if not path.is_file():
            raise ImageFileError("not a file")
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise ImageFileError(
                f"too big to be a photo ({size / 2**20:.0f} MB; at most {MAX_BYTES // 2**20} MB)"
            )
        data = path.read_bytes()
    except OSError as e:
        raise ImageFileError(e.strerror or "cannot be read") from None
    if not data:
        raise ImageFileError("an empty file")
    kind, w, h = image_size(data)
    if w <= 0 or h <= 0:
        raise ImageFileError(f"a {kind.upper()} of {w} x {h} pixels")
    if w * h > MAX_PIXELS:
        raise ImageFileError(f"{w} x {h} pixels is too big (at most {MAX_PIXELS // 1_000_000} megapixels)")
    if kind == "jpeg" and b"\xff\xd9" not in data[-1024:]:
        raise ImageFileError("a JPEG cut off before its end (a partial copy or download?)")
    if kind == "png" and b"IEND" not in data[-64:]:
        raise ImageFileError("a PNG cut off before its end (a partial copy or download?)")
    try:
        image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    except cv2.error:
        image = None
    if image is None or image.size == 0:
        raise ImageFileError(f"a damaged {kind.upper()} (it does not decode)")
    return image
