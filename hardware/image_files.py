"""Image files read safely: a photo, a frame of a folder, a card of a deck.

Anything can be handed to the referee as an image. Before anything is decoded, the file's
size and its header's width and height are checked, so a small file that claims to be a
gigapixel picture (a decompression bomb) costs nothing; a cut-off JPEG or PNG is refused
(libjpeg would decode it grey-filled, with only a warning on stderr). Every refusal is one
reason, for the caller's one line.

libjpeg and libpng print their own warnings straight to file descriptor 2 ("Corrupt JPEG
data: ...", "libpng warning: ..."), past OpenCV's log level. So the decode runs with fd 2
on a pipe: the codec's words never reach the user's terminal, and when they say the data
is damaged the file is refused as damaged (libjpeg fills the rest of a damaged JPEG with
grey and returns it as if whole: a half picture was once read as a card).
"""

from __future__ import annotations

import contextlib
import os
import struct
import sys
import threading
from pathlib import Path

import cv2
import numpy as np

MAX_BYTES = 64 * 1024 * 1024  # a 48-megapixel phone photo is 10-25 MB as a JPEG
MAX_PIXELS = 50_000_000  # 8000 x 6000: every phone camera; the referee reads cards, not posters
# fd 2 is the process's: one decode at a time swaps it, and the pipe holds at most this much of
# the codec's words (a write past it fails at once, so the decode never blocks on it).
_CHATTER_CAP = 64 * 1024
_FD2_LOCK = threading.Lock()
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
    image, chatter = _decode_quietly(data)
    damage = damage_reported(kind, chatter)
    if image is None or image.size == 0:
        said = f": {damage}" if damage else ""
        raise ImageFileError(f"a damaged {kind.upper()} (it does not decode{said})")
    if damage:
        raise ImageFileError(f"a damaged {kind.upper()} ({damage})")
    return image


def damage_reported(kind: str, chatter: list[str]) -> str | None:
    """The codec's first word of damage, from what it printed while decoding, or None.

    libjpeg's "Corrupt JPEG data" and "Premature end" warnings mean data it could not use:
    it makes up the rest of the picture and returns it as whole. libpng also warns about
    harmless things (an sRGB profile it knows to be off), so only its errors and a failed
    checksum count; a bad checksum in a chunk it may skip still says the file was damaged."""
    for line in chatter:
        if kind == "jpeg" and line.startswith(_JPEG_DAMAGE):
            return line
        if kind == "png" and line.startswith("libpng") and ("error" in line.split(":")[0] or "CRC" in line):
            return line
    return None


def _decode_quietly(data: bytes) -> tuple[np.ndarray | None, list[str]]:
    """cv2.imdecode with fd 2 on a pipe: the image (None if it does not decode) and the lines
    the C libraries printed meanwhile. Lines another thread wrote meanwhile (they share fd 2)
    are passed on to the real stderr, so nothing else is lost."""
    with _FD2_LOCK:
        with contextlib.suppress(AttributeError, OSError, ValueError):
            sys.stderr.flush()  # Python's own pending text goes out before fd 2 moves
        try:
            saved = os.dup(2)
        except OSError:  # no stderr at all: nothing to keep clean, nothing to learn
            return _decode(data), []
        read_end, write_end = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            os.dup2(write_end, 2)
            os.close(write_end)
            try:
                image = _decode(data)
            finally:
                os.dup2(saved, 2)
            text = _drain(read_end)
        finally:
            os.close(read_end)
            os.close(saved)
    chatter = []
    for line in text.splitlines():
        if _is_codec(line):
            chatter.append(line.strip())
        elif line.strip():
            with contextlib.suppress(OSError):
                os.write(2, (line + "\n").encode("utf-8", "replace"))
    return image, chatter


def _decode(data: bytes) -> np.ndarray | None:
    try:
        return cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    except cv2.error:
        return None


def _drain(fd: int) -> str:
    chunks = []
    size = 0
    while size < _CHATTER_CAP:
        try:
            chunk = os.read(fd, _CHATTER_CAP - size)
        except BlockingIOError:
            break
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks).decode("utf-8", "replace")


# What the codecs print. libpng prefixes its own lines; libjpeg's warnings are its message
# table's (jerror.h, JWRN_*); OpenCV's own log lines start with their level.
_JPEG_DAMAGE = (
    "Corrupt JPEG data",
    "Premature end of JPEG file",
    "Invalid SOS parameters",
    "Inconsistent progression sequence",
)
_CODEC_WORDS = (
    "libpng",
    *_JPEG_DAMAGE,
    "Warning: unknown JFIF revision",
    "Unknown Adobe color transform code",
    "Application transferred too many scanlines",
    "[ WARN",
    "[ERROR",
    "[ INFO",
)


def _is_codec(line: str) -> bool:
    line = line.strip()
    return line.startswith(_CODEC_WORDS)
