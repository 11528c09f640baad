"""tools/kiosk_pictures.py: every picture of the kiosk the docs show comes from one of its
seeded scenes (none converted by hand from a test's screenshot), and the replay's scene, the
one that plays a demo game through the rendered camera, is taken in Chromium as the docs show it."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import cv2

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import kiosk_pictures  # noqa: E402

IMAGES = ROOT / "docs" / "images"


def test_every_kiosk_picture_the_docs_show_is_one_the_script_takes():
    shown = set()
    for doc in (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))):
        shown |= set(re.findall(r"images/(kiosk-[\w-]+\.\w+)\)", doc.read_text()))
    taken = {f"kiosk-{name}.jpg" for name in kiosk_pictures.PICTURES}
    assert shown and shown <= taken, f"not taken by tools/kiosk_pictures.py: {sorted(shown - taken)}"
    kept = {path.name for path in IMAGES.glob("kiosk-*")}
    assert kept == taken, f"docs/images and the script differ: {sorted(kept ^ taken)}"


def test_the_replay_picture_is_a_race_opened_from_the_log_at_800x480(browser, tmp_path):
    path = tmp_path / "kiosk-replay.jpg"
    kiosk_pictures.take(browser, kiosk_pictures.PICTURES["replay"](tmp_path), path)
    image = cv2.imread(str(path))
    assert image is not None and image.shape[:2] == (480, 800)
    assert 20_000 <= path.stat().st_size <= 60_000  # small enough to commit, not a blank page
