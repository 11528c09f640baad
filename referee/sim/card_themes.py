"""Real card artwork for tests and benchmarks: Debian's gnome-cards-data themes, rasterised.

The package (`apt install gnome-cards-data librsvg2-bin`) ships about 30 SVG card
themes, each one sheet of 13 columns (A..K) by 5 rows: clubs, diamonds, hearts,
spades, then the jokers and backs. We render a sheet with `rsvg-convert`, cut it
into cards and trim each to its own outline. Nothing of the artwork is committed;
a rendered sheet is cached under ~/.cache/referee/themes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import cv2
import numpy as np

from referee.cards import JOKER_CODE, RANKS

THEMES_DIR = Path("/usr/share/aisleriot/cards")
ROW_SUITS = ("C", "D", "H", "S")  # the sheet's first four rows, top down
COLUMNS, ROWS = 13, 5


class ThemeError(RuntimeError):
    """A theme that cannot be had here: the package or the rasteriser is missing."""


def available_themes(directory: Path = THEMES_DIR) -> list[str]:
    """The installed themes' names, sorted (empty if gnome-cards-data is not installed)."""
    if not directory.is_dir():
        return []
    return sorted(p.name.removesuffix(".svgz").removesuffix(".svg") for p in directory.glob("*.svg*"))


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "referee" / "themes"


def _sheet(name: str, card_width: int, directory: Path, cache: Path) -> np.ndarray:
    sources = [directory / f"{name}.svgz", directory / f"{name}.svg"]
    source = next((p for p in sources if p.is_file()), None)
    if source is None:
        raise ThemeError(f"card theme {name!r} not found in {directory} (apt install gnome-cards-data)")
    target = cache / f"{name}-{card_width}.png"
    if not target.is_file():
        rsvg = shutil.which("rsvg-convert")
        if rsvg is None:
            raise ThemeError("rsvg-convert not found (apt install librsvg2-bin)")
        cache.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(f".{os.getpid()}.part.png")  # two test workers may render it at once
        subprocess.run(
            [rsvg, "-w", str(card_width * COLUMNS), "-b", "none", str(source), "-o", str(partial)],
            check=True,
            capture_output=True,
        )
        partial.replace(target)  # a cache entry is whole or absent
    sheet = cv2.imread(str(target), cv2.IMREAD_UNCHANGED)
    if sheet is None or sheet.ndim != 3 or sheet.shape[2] != 4:
        raise ThemeError(f"card theme {name!r}: {target} is not an RGBA image")
    return sheet


def _trim(cell: np.ndarray) -> np.ndarray:
    """The card inside one sheet cell, on white (cells carry transparent margins)."""
    alpha = cell[:, :, 3]
    ys, xs = np.nonzero(alpha > 16)
    card = cell[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
    a = card[:, :, 3:4].astype(np.float32) / 255.0
    white = np.full(card.shape[:2] + (3,), 255, np.float32)
    return (card[:, :, :3].astype(np.float32) * a + white * (1.0 - a)).round().astype(np.uint8)


def theme_cards(name: str, card_width: int = 250, directory: Path = THEMES_DIR) -> dict[str, np.ndarray]:
    """Every card of a theme as a BGR image, by code (`QS`, `10H`, ..., `JOKER`)."""
    sheet = _sheet(name, card_width, directory, _cache_dir())
    cell_h, cell_w = sheet.shape[0] / ROWS, sheet.shape[1] / COLUMNS
    cards: dict[str, np.ndarray] = {}
    for row in range(ROWS):
        for col in range(COLUMNS):
            if row == len(ROW_SUITS) and col > 0:
                break  # the first of the last row is a joker; the rest are a second joker and backs
            y0, x0 = round(row * cell_h), round(col * cell_w)
            cell = sheet[y0 : round((row + 1) * cell_h), x0 : round((col + 1) * cell_w)]
            code = JOKER_CODE if row == len(ROW_SUITS) else RANKS[col] + ROW_SUITS[row]
            cards[code] = _trim(cell)
    return cards


def export_theme(name: str, folder: Path, card_width: int = 250) -> list[Path]:
    """Write a theme's cards as `QS.png` etc. (the layout `calibrate deck` and the renderer read)."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for code, image in theme_cards(name, card_width).items():
        path = folder / f"{code}.png"
        cv2.imwrite(str(path), image)
        written.append(path)
    return written
