"""Image files read safely: size and header checked before decoding, cut-off files refused."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest

from hardware.image_files import MAX_BYTES, ImageFileError, image_size, read_image


def _png_header(w: int, h: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(b"\0" * 64))
        + chunk(b"IEND", b"")
    )


@pytest.mark.parametrize("ext", ["png", "jpg", "bmp", "webp"])
def test_every_format_a_camera_writes_is_sized_from_its_header_and_read(tmp_path: Path, ext: str) -> None:
    image = np.full((300, 400, 3), 90, np.uint8)
    path = tmp_path / f"card.{ext}"
    cv2.imwrite(str(path), image)
    assert image_size(path.read_bytes())[1:] == (400, 300)
    assert read_image(path).shape == (300, 400, 3)


def test_a_gigapixel_header_is_refused_before_anything_is_decoded(tmp_path: Path) -> None:
    path = tmp_path / "bomb.png"
    path.write_bytes(_png_header(60_000, 60_000))
    with pytest.raises(ImageFileError, match="60000 x 60000 pixels is too big"):
        read_image(path)


@pytest.mark.parametrize(("ext", "words"), [("jpg", "JPEG cut off"), ("png", "PNG cut off")])
def test_a_cut_off_file_is_refused(tmp_path: Path, ext: str, words: str) -> None:
    _, data = cv2.imencode(f".{ext}", np.random.default_rng(1).integers(0, 255, (200, 300, 3), np.uint8))
    path = tmp_path / f"cut.{ext}"
    path.write_bytes(data.tobytes()[: len(data) // 2])
    with pytest.raises(ImageFileError, match=words):
        read_image(path)


def test_text_empty_missing_huge_and_a_folder_each_give_a_reason(tmp_path: Path) -> None:
    (tmp_path / "notes.jpg").write_text("a shopping list")
    (tmp_path / "empty.png").write_bytes(b"")
    huge = tmp_path / "huge.jpg"
    with huge.open("wb") as f:
        f.truncate(MAX_BYTES + 1)  # sparse: nothing written, nothing read
    reasons = {}
    for name in ("notes.jpg", "empty.png", "missing.png", "huge.jpg", "."):
        with pytest.raises(ImageFileError) as e:
            read_image(tmp_path / name)
        reasons[name] = str(e.value)
    assert reasons == {
        "notes.jpg": "not a JPEG, PNG, WebP or BMP image",
        "empty.png": "an empty file",
        "missing.png": "no such file",
        "huge.jpg": "too big to be a photo (64 MB; at most 64 MB)",
        ".": "not a file",
    }
