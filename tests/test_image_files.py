"""Image files read safely: size and header checked before decoding, cut-off files refused."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest

from hardware import image_files
from hardware.image_files import MAX_BYTES, ImageFileError, image_size, read_image
from referee.cards import parse_card
from referee.sim.render import draw_card


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


# Damaged files: the codec's own words stay off the terminal -------------------------------

REFEREE = Path(sys.executable).with_name("referee")


def _chunk(kind: bytes, data: bytes, crc_flip: int = 0) -> bytes:
    crc = zlib.crc32(kind + data) ^ crc_flip
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)


def _damaged_files(folder: Path) -> dict[str, str]:
    """Damaged copies of a picture of the 7H, each with the words its one line must hold."""
    card, _ = draw_card(parse_card("7H"), 250)
    jpeg = cv2.imencode(".jpg", card)[1].tobytes()
    png = cv2.imencode(".png", card)[1].tobytes()
    garbled = bytearray(jpeg)
    middle = len(jpeg) // 2
    garbled[middle : middle + 40] = np.random.default_rng(3).integers(0, 255, 40, np.uint8).tobytes()
    idat = png.index(b"IDAT") - 4
    (length,) = struct.unpack(">I", png[idat : idat + 4])
    pixels = png[idat + 8 : idat + 8 + length]
    after_idat = png[idat + 12 + length :]
    files = {
        # cut in half, then given its end marker back: libjpeg greys out the missing half
        "half.jpg": (jpeg[: len(jpeg) // 2] + b"\xff\xd9", "a damaged JPEG (Corrupt JPEG data"),
        "garbled.jpg": (bytes(garbled), "a damaged JPEG (Corrupt JPEG data"),
        "cut.jpg": (jpeg[: len(jpeg) // 2], "a JPEG cut off before its end"),
        "crc.png": (png[:idat] + _chunk(b"IDAT", pixels, 1) + after_idat, "a damaged PNG"),
        "flipped.png": (png[: idat + 100] + bytes([png[idat + 100] ^ 0x55]) + png[idat + 101 :], "damaged"),
        "short-idat.png": (png[:idat] + _chunk(b"IDAT", pixels[: length // 2]) + after_idat, "damaged"),
        # a skippable chunk whose checksum fails: the pixels may be whole, the file is not
        "text-crc.png": (png[:33] + _chunk(b"tEXt", b"Comment\0hello", 1) + png[33:], "tEXt: CRC error"),
    }
    for name, (data, _) in files.items():
        (folder / name).write_bytes(data)
    return {name: words for name, (_, words) in files.items()}


def test_each_damaged_file_is_one_line_of_ours_and_none_of_the_codecs(tmp_path: Path) -> None:
    words = _damaged_files(tmp_path)
    good = tmp_path / "good.jpg"
    cv2.imwrite(str(good), draw_card(parse_card("7H"), 250)[0])
    paths = [str(tmp_path / name) for name in words]
    done = subprocess.run(
        [str(REFEREE), "recognize", *paths, str(good)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2
    assert [json.loads(line)["frame"] for line in done.stdout.splitlines()] == [str(good)]
    lines = done.stderr.splitlines()
    assert len(lines) == len(words), done.stderr  # no "Corrupt JPEG data", no "libpng warning"
    for line, (name, said) in zip(lines, words.items(), strict=True):
        assert line.startswith(f"{tmp_path / name}: ") and said in line, line


def test_a_half_jpeg_given_its_end_marker_back_is_named_damaged_not_read(tmp_path: Path, capfd) -> None:
    _damaged_files(tmp_path)
    with pytest.raises(ImageFileError, match=r"^a damaged JPEG \(Corrupt JPEG data: premature end"):
        read_image(tmp_path / "half.jpg")
    assert capfd.readouterr().err == ""  # at the file descriptor, where libjpeg writes


def test_what_another_thread_writes_during_a_decode_still_reaches_stderr(monkeypatch, capfd) -> None:
    def decode(data: bytes) -> np.ndarray:
        os.write(2, b"libpng warning: iCCP: known incorrect sRGB profile\n")
        os.write(2, b"buttons: seat 2 is stuck down\n")  # not the codec's: someone else's line
        return np.zeros((2, 2, 3), np.uint8)

    monkeypatch.setattr(image_files, "_decode", decode)
    image, chatter = image_files._decode_quietly(b"")
    assert image.shape == (2, 2, 3)
    assert chatter == ["libpng warning: iCCP: known incorrect sRGB profile"]
    assert capfd.readouterr().err == "buttons: seat 2 is stuck down\n"


def test_which_codec_words_are_damage() -> None:
    assert image_files.damage_reported("png", ["libpng warning: iCCP: known incorrect sRGB profile"]) is None
    assert image_files.damage_reported("png", ["libpng warning: tEXt: CRC error"]) is not None
    assert image_files.damage_reported("png", ["libpng error: IDAT: incorrect data check"]) is not None
    assert image_files.damage_reported("jpeg", ["Warning: unknown JFIF revision number 3.01"]) is None
    assert image_files.damage_reported("jpeg", ["Premature end of JPEG file"]) == "Premature end of JPEG file"
