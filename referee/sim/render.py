"""The simulator's camera: cards, tables, light, a hand and a lens, drawn with OpenCV.

Everything here is a pure function over numpy arrays and a seeded
`numpy.random.Generator`: the same seed gives the same pixels. The artwork is the
project's own (vector pips, indices in OpenCV 5's face drawn by referee/sim/glyphs.py the same
on every OpenCV, simple court panels), so no
third-party images are committed; `load_card_images` reads any folder of card
images instead, for those who have some.

Conventions: images are BGR uint8, sizes are ``(width, height)``, angles are in
degrees counterclockwise as seen on screen (OpenCV's and ``np.rot90``'s sense),
and a card is returned as ``(image, mask)``: the mask (uint8, 255 = card) carries
the rounded corners, so a card composites onto any table without an alpha channel.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

import cv2
import numpy as np

from referee.cards import ASPECT, RANKS, Card, CardError, parse_card

from . import glyphs

BGR = tuple[int, int, int]
Sprite = tuple[np.ndarray, np.ndarray]  # (BGR image, uint8 mask)
SIDES = ("bottom", "top", "left", "right")
TABLE_KINDS = ("green_cloth", "wood", "dark", "light", "patterned")
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".webp", ".tif", ".tiff")


# Card styles -------------------------------------------------------------------------------


@dataclass(frozen=True)
class CardStyle:
    """A card theme. Frozen, so that it can key the sprite cache."""

    font: int = cv2.FONT_HERSHEY_SIMPLEX
    thickness: int = 2  # index stroke at 250 px card width; scaled with the card
    index_scale: float = 0.085  # index height / card height
    court: str = "panel"  # "panel": framed two-way picture; "letter": big letter between pips
    face: BGR = (250, 250, 250)
    red: BGR = (35, 30, 200)
    black: BGR = (25, 25, 25)
    accent: BGR = (40, 150, 215)  # court band colour
    edge: BGR = (200, 200, 200)  # the thin line round the face
    back_colour: BGR = (140, 40, 30)
    corner_radius: float = 0.06  # of the card width
    # "stacked": the pip under the rank, in two corners; "beside": the pip at the top right, level
    # with the rank, in the top-left corner only (some modern decks: a giant pip below)
    index_layout: str = "stacked"


STYLES: dict[str, CardStyle] = {
    "classic": CardStyle(),
    "bold": CardStyle(
        font=cv2.FONT_HERSHEY_DUPLEX,
        thickness=4,
        index_scale=0.1,
        court="letter",
        red=(20, 20, 215),
        black=(0, 0, 0),
        back_colour=(40, 40, 160),
    ),
    "serif": CardStyle(
        font=cv2.FONT_HERSHEY_TRIPLEX,
        thickness=2,
        index_scale=0.09,
        court="panel",
        face=(232, 242, 247),  # cream
        accent=(150, 90, 30),
        back_colour=(60, 100, 30),
        corner_radius=0.08,
    ),
    "thin": CardStyle(
        font=cv2.FONT_HERSHEY_COMPLEX_SMALL,
        thickness=1,
        index_scale=0.075,
        court="letter",
        red=(60, 40, 190),
        black=(50, 40, 35),
        edge=(215, 215, 215),
        back_colour=(90, 90, 90),
        corner_radius=0.045,
    ),
    "modern": CardStyle(  # the index laid across the top, once
        font=cv2.FONT_HERSHEY_DUPLEX,
        thickness=3,
        index_scale=0.1,
        court="letter",
        red=(40, 35, 225),
        black=(45, 45, 50),
        face=(238, 240, 242),
        edge=(90, 90, 90),
        index_layout="beside",
    ),
}


# Suit pips: unit polygons, y down, centred on (0, 0) in a 1 x 1 box ------------------------


def _heart_outline(n: int = 48) -> np.ndarray:
    t = np.linspace(0, 2 * np.pi, n, endpoint=False)
    x = 16 * np.sin(t) ** 3
    y = -(13 * np.cos(t) - 5 * np.cos(2 * t) - 2 * np.cos(3 * t) - np.cos(4 * t))
    pts = np.stack([x, y - 2.5], axis=1) / 32  # the curve spans x -16..16, y -12..17
    return pts


def _circle(cx: float, cy: float, r: float, n: int = 24) -> np.ndarray:
    t = np.linspace(0, 2 * np.pi, n, endpoint=False)
    return np.stack([cx + r * np.cos(t), cy + r * np.sin(t)], axis=1)


def _pip_shapes() -> dict[str, list[np.ndarray]]:
    heart = _heart_outline()
    spade_body = heart * [1.0, -0.85] + [0, -0.08]
    stem = np.array([[0, 0.1], [-0.2, 0.5], [0.2, 0.5]])
    club = [
        _circle(0, -0.24, 0.22),
        _circle(-0.24, 0.08, 0.22),
        _circle(0.24, 0.08, 0.22),
        np.array([[0, -0.2], [-0.2, 0.1], [0.2, 0.1]]),
        stem,
    ]
    diamond = np.array([[0, -0.5], [0.36, 0], [0, 0.5], [-0.36, 0]])
    return {"H": [heart], "D": [diamond], "S": [spade_body, stem], "C": club}


_PIPS = _pip_shapes()
_SHIFT = 4  # fixed-point bits for sub-pixel polygon vertices


def draw_pip(
    img: np.ndarray,
    suit: str,
    centre: tuple[float, float],
    size: float,
    colour: BGR,
    upside_down: bool = False,
) -> None:
    """Draw a suit symbol `size` px tall in place (upside down for the lower half of a card)."""
    sign = -1.0 if upside_down else 1.0
    for poly in _PIPS[suit]:
        pts = (poly * [size, size * sign] + centre) * (1 << _SHIFT)
        cv2.fillPoly(img, [np.round(pts).astype(np.int32)], colour, cv2.LINE_AA, _SHIFT)


# Card faces --------------------------------------------------------------------------------

# Standard pip positions: x in {0, .5, 1} across the pip area, y 0..1 down it.
_L, _M, _R = 0.0, 0.5, 1.0
_COLUMNS = [(_L, 0), (_R, 0), (_L, 1), (_R, 1)]
_LAYOUTS: dict[int, list[tuple[float, float]]] = {
    2: [(_M, 0), (_M, 1)],
    3: [(_M, 0), (_M, 0.5), (_M, 1)],
    4: _COLUMNS,
    5: [*_COLUMNS, (_M, 0.5)],
    6: [*_COLUMNS, (_L, 0.5), (_R, 0.5)],
    7: [*_COLUMNS, (_L, 0.5), (_R, 0.5), (_M, 0.25)],
    8: [*_COLUMNS, (_L, 0.5), (_R, 0.5), (_M, 0.25), (_M, 0.75)],
    9: [*_COLUMNS, (_L, 1 / 3), (_R, 1 / 3), (_L, 2 / 3), (_R, 2 / 3), (_M, 0.5)],
    10: [*_COLUMNS, (_L, 1 / 3), (_R, 1 / 3), (_L, 2 / 3), (_R, 2 / 3), (_M, 1 / 6), (_M, 5 / 6)],
}


def _ink(card: Card, style: CardStyle) -> BGR:
    return style.red if card.suit in ("H", "D") else style.black


def _stroke(style: CardStyle, width: int) -> int:
    return max(1, round(style.thickness * width / 250))


def _put_text(
    img: np.ndarray,
    text: str,
    centre: tuple[float, float],
    height: float,
    max_width: float,
    font: int,
    thickness: int,
    colour: BGR,
) -> None:
    """Write `text` centred on `centre`, scaled to `height` px (or narrower to fit `max_width`).

    `font` is a cv2.FONT_HERSHEY_* code, drawn as OpenCV 5 draws it but by referee/sim/glyphs.py, so
    the picture is the same on the Pi's OpenCV 4 (whose putText draws Hershey's strokes)."""
    (w, h), _ = glyphs.text_size(text, font, 1.0, thickness)
    scale = min(height / max(h, 1), max_width / max(w, 1))
    (w, h), _ = glyphs.text_size(text, font, scale, thickness)
    org = (round(centre[0] - w / 2), round(centre[1] + h / 2))
    glyphs.put_text(img, text, org, font, scale, colour, thickness)


def _rounded_mask(width: int, height: int, radius: int) -> np.ndarray:
    mask = np.zeros((height, width), np.uint8)
    r = max(1, radius)
    cv2.rectangle(mask, (r, 0), (width - 1 - r, height - 1), 255, -1)
    cv2.rectangle(mask, (0, r), (width - 1, height - 1 - r), 255, -1)
    for cx in (r, width - 1 - r):
        for cy in (r, height - 1 - r):
            cv2.circle(mask, (cx, cy), r, 255, -1, cv2.LINE_AA)
    return mask


def _corner(card: Card, style: CardStyle, width: int, height: int) -> np.ndarray:
    """The top-left index on a blank face; the caller adds it again turned 180 degrees."""
    img = np.full((height, width, 3), 255, np.uint8)
    ink = _ink(card, style) if not card.is_joker else style.black
    t = _stroke(style, width)
    cx = 0.1 * width
    top = 0.045 * height
    h = style.index_scale * height
    if card.is_joker:  # JOKER stacked down the corner, as printed on real jokers
        letter_h = h * 0.55
        for i, ch in enumerate("JOKER"):
            y = top + letter_h / 2 + i * letter_h * 1.45
            _put_text(img, ch, (cx, y), letter_h, 0.12 * width, style.font, max(1, t - 1), ink)
        return img
    across = style.index_layout == "beside"  # room for a 10 as tall as the other ranks
    rank = RANKS[card.rank - 1]
    at = (cx + 0.07 * width, top + h / 2) if across and rank == "10" else (cx, top + h / 2)
    _put_text(img, rank, at, h, (0.3 if across else 0.15) * width, style.font, t, ink)
    pip = 0.07 * height
    if across:  # a bigger pip, as such decks print it
        draw_pip(img, card.suit, (width - 0.9 * cx, top + h / 2), 1.1 * pip, ink)  # clear of a frame
    else:
        draw_pip(img, card.suit, (cx, top + h + 0.025 * height + pip / 2), pip, ink)
    return img


def _number_face(img: np.ndarray, card: Card, style: CardStyle, width: int, height: int) -> None:
    ink = _ink(card, style)
    if card.rank == 1:
        draw_pip(img, card.suit, (width / 2, height / 2), 0.42 * width, ink)
        return
    x0, x1, y0, y1 = 0.29 * width, 0.71 * width, 0.2 * height, 0.8 * height
    size = (0.16 if card.rank < 9 else 0.145) * width
    for fx, fy in _LAYOUTS[card.rank]:
        centre = (x0 + fx * (x1 - x0), y0 + fy * (y1 - y0))
        draw_pip(img, card.suit, centre, size, ink, upside_down=fy > 0.5)


def _court_half(card: Card, style: CardStyle, width: int, height: int) -> np.ndarray:
    """The upper half of a two-way court picture, on white; the lower half is it turned round."""
    half = np.full((height, width, 3), 255, np.uint8)
    ink = _ink(card, style)
    letter = RANKS[card.rank - 1]
    t = _stroke(style, width)
    if style.court == "panel":
        x0, x1, y0 = round(0.2 * width), round(0.8 * width), round(0.13 * height)
        tint = tuple(int(255 - (255 - c) * 0.18) for c in ink)
        cv2.rectangle(half, (x0, y0), (x1, height), tint, -1)
        band_y = round(height * 0.72)
        cv2.rectangle(half, (x0, band_y), (x1, band_y + max(2, round(0.05 * height))), style.accent, -1)
        cv2.rectangle(half, (x0, y0), (x1, height + t), ink, t, cv2.LINE_AA)
        _put_text(
            half, letter, (width / 2, y0 + 0.3 * height), 0.24 * height, 0.4 * width, style.font, t + 1, ink
        )
        draw_pip(half, card.suit, (x0 + 0.1 * width, y0 + 0.08 * height), 0.09 * width, ink)
    else:  # "letter": a big letter and a big pip, with a double frame
        m = round(0.18 * width)
        cv2.rectangle(half, (m, round(0.12 * height)), (width - m, height + t), ink, t, cv2.LINE_AA)
        gap = round(0.02 * width)
        cv2.rectangle(
            half,
            (m + gap, round(0.12 * height) + gap),
            (width - m - gap, height + t),
            style.accent,
            max(1, t - 1),
            cv2.LINE_AA,
        )
        draw_pip(half, card.suit, (width / 2, 0.3 * height), 0.2 * width, ink)
        _put_text(
            half, letter, (width / 2, 0.72 * height), 0.32 * height, 0.45 * width, style.font, t + 1, ink
        )
    return half


def _joker_face(img: np.ndarray, style: CardStyle, width: int, height: int) -> None:
    t = _stroke(style, width)
    r_out, r_in = 0.22 * width, 0.09 * width
    angles = np.pi / 2 + np.arange(10) * np.pi / 5
    radii = np.where(np.arange(10) % 2 == 0, r_out, r_in)
    star = np.stack([width / 2 - radii * np.cos(angles), 0.42 * height - radii * np.sin(angles)], axis=1)
    cv2.fillPoly(img, [np.round(star * 16).astype(np.int32)], style.accent, cv2.LINE_AA, 4)
    cv2.polylines(img, [np.round(star * 16).astype(np.int32)], True, style.black, t, cv2.LINE_AA, 4)
    _put_text(img, "JOKER", (width / 2, 0.7 * height), 0.09 * height, 0.6 * width, style.font, t, style.red)


@lru_cache(maxsize=512)
def _draw_card_cached(code: str, width: int, style: CardStyle) -> Sprite:
    card = parse_card(code)
    height = round(width * ASPECT)
    img = np.full((height, width, 3), 255, np.uint8)
    if card.is_joker:
        _joker_face(img, style, width, height)
    elif card.rank <= 10:
        _number_face(img, card, style, width, height)
    else:
        upper = _court_half(card, style, width, height // 2)
        img[: height // 2] = upper
        img[height - height // 2 :] = np.minimum(img[height - height // 2 :], upper[::-1, ::-1])
    corner = _corner(card, style, width, height)
    if style.index_layout != "beside":
        corner = np.minimum(corner, corner[::-1, ::-1])  # and again at the bottom right
    img = np.minimum(img, corner)  # ink on white: min overlays
    # White becomes the face colour; ink keeps its colour.
    face = np.array(style.face, np.float32) / 255
    img = (img.astype(np.float32) * face).astype(np.uint8)
    mask = _rounded_mask(width, height, round(style.corner_radius * width))
    edge = cv2.morphologyEx(mask, cv2.MORPH_GRADIENT, np.ones((3, 3), np.uint8))
    img[edge > 128] = style.edge
    img[mask == 0] = 0
    img.flags.writeable = False
    mask.flags.writeable = False
    return img, mask


def draw_card(card: Card, width: int = 250, style: CardStyle | None = None) -> Sprite:
    """A card face up, `width` px wide and 88/63 as tall: ``(BGR image, mask)``.

    The mask is 255 on the card and 0 outside its rounded corners (anti-aliased in
    between); the image is black outside the card.
    """
    img, mask = _draw_card_cached(card.code, int(width), style or STYLES["classic"])
    return img.copy(), mask.copy()


def draw_back(width: int = 250, style: CardStyle | None = None) -> Sprite:
    """A card face down: a white margin round a coloured lattice."""
    style = style or STYLES["classic"]
    height = round(width * ASPECT)
    img = np.full((height, width, 3), style.face, np.uint8)
    m = round(0.06 * width)
    cv2.rectangle(img, (m, m), (width - 1 - m, height - 1 - m), style.back_colour, -1)
    light = tuple(min(255, c + 60) for c in style.back_colour)
    step = max(4, width // 12)
    for k in range(-height, width + height, step):
        cv2.line(img, (k, m), (k + height, m + height), light, 1, cv2.LINE_AA)
        cv2.line(img, (k, m), (k - height, m + height), light, 1, cv2.LINE_AA)
    img[:m] = style.face
    img[height - m :] = style.face
    img[:, :m] = style.face
    img[:, width - m :] = style.face
    mask = _rounded_mask(width, height, round(style.corner_radius * width))
    img[mask == 0] = 0
    return img, mask


def load_card_images(folder: str | Path) -> dict[str, np.ndarray]:
    """Card images named by code (``QS.png``, ``10h.jpg``, ``TD.png``), keyed by canonical code.

    Files whose names are not card codes, or that OpenCV can't read, are skipped.
    Images keep an alpha channel if they have one (BGRA); grey images become BGR.
    """
    out: dict[str, np.ndarray] = {}
    for path in sorted(Path(folder).iterdir()):
        if path.suffix.lower() not in IMAGE_SUFFIXES or not path.is_file():
            continue
        try:
            code = parse_card(path.stem).code
        except CardError:
            continue
        img = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
        if img is None:
            continue
        if img.ndim == 2:
            img = cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)
        out[code] = img
    return out


def image_sprite(img: np.ndarray, width: int, corner_radius: float = 0.05) -> Sprite:
    """A loaded card image as a sprite `width` px wide (its own aspect); alpha, else rounded corners."""
    height = max(1, round(img.shape[0] * width / img.shape[1]))
    resized = cv2.resize(img, (width, height), interpolation=cv2.INTER_AREA)
    if resized.shape[2] == 4:
        return np.ascontiguousarray(resized[:, :, :3]), np.ascontiguousarray(resized[:, :, 3])
    return resized, _rounded_mask(width, height, round(corner_radius * width))


def card_sprite(
    card: Card, width: int, style: CardStyle | None = None, faces: Mapping[str, np.ndarray] | None = None
) -> Sprite:
    """The card from `faces` (see `load_card_images`) when it is there, else the built-in face."""
    if faces is not None and card.code in faces:
        return image_sprite(faces[card.code], width)
    return draw_card(card, width, style)


# Index letters that are no rank of an English deck (Dutch B, V, H; a German D; others' O, R, C),
# each with a suit, and Hershey fonts whose letters the index model never saw as "not a rank"
# (tools/train_index_model.py trains on the others'), the italic ones included: what
# `lettered_face` draws for the recogniser's refusals.
FOREIGN_INDICES = (("B", "S"), ("V", "H"), ("H", "C"), ("D", "D"), ("O", "S"), ("R", "H"), ("C", "C"))
UNSEEN_FONTS = (
    cv2.FONT_HERSHEY_PLAIN,
    cv2.FONT_HERSHEY_COMPLEX,
    cv2.FONT_HERSHEY_SIMPLEX | cv2.FONT_ITALIC,
    cv2.FONT_HERSHEY_DUPLEX | cv2.FONT_ITALIC,
)


def lettered_face(letter: str, suit: str, font: int, width: int = 250) -> np.ndarray:
    """A card face with `letter` as its index (a Dutch B, V or H, a German D: no rank of an
    English deck), the suit's pip under it, both corners, and a court picture's frame; no
    artwork. For the recogniser's refusals (tests, tools/tuning_scenes.py --refusals)."""
    height = round(width * 1.4)
    face = np.full((height, width, 3), 250, np.uint8)
    ink = (40, 30, 200) if suit in "HD" else (25, 25, 25)
    corner = np.full_like(face, 250)
    cx, top, h = 0.1 * width, 0.045 * height, 0.1 * height
    _put_text(corner, letter, (cx, top + h / 2), h, 0.15 * width, font, max(2, width // 60), ink)
    draw_pip(corner, suit, (cx, top + h + 0.025 * height + 0.035 * height), 0.07 * height, ink)
    face = np.minimum(corner, corner[::-1, ::-1])
    cv2.rectangle(
        face, (round(0.2 * width), round(0.12 * height)), (round(0.8 * width), round(0.88 * height)), ink, 2
    )
    return face


# Tables ------------------------------------------------------------------------------------


def _smooth_noise(rng: np.random.Generator, size: tuple[int, int], cell: int) -> np.ndarray:
    """Value noise in [0, 1]: random values on a coarse grid, resized smoothly."""
    w, h = size
    small = rng.random((max(2, h // cell + 2), max(2, w // cell + 2))).astype(np.float32)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC).clip(0, 1)


def _jitter(rng: np.random.Generator, colour: Sequence[float], spread: float) -> np.ndarray:
    return np.clip(np.asarray(colour, np.float32) + rng.uniform(-spread, spread, 3), 0, 255)


def table_surface(kind: str, size: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    """A table top `size` = (w, h): green_cloth, wood, dark, light (near white) or patterned."""
    w, h = size
    if kind == "green_cloth":
        base = _jitter(rng, (45, 110, 35), 15)
        fibre = cv2.GaussianBlur(rng.normal(0, 1, (h, w)).astype(np.float32), (0, 0), 0.8)
        shade = _smooth_noise(rng, size, 60) - 0.5
        lum = 1 + 0.06 * fibre + 0.15 * shade
    elif kind == "wood":
        base = _jitter(rng, (55, 100, 150), 20)
        ys = np.arange(h, dtype=np.float32)[:, None]
        xs = np.arange(w, dtype=np.float32)[None, :]
        warp = 25 * _smooth_noise(rng, size, 120) + 4 * _smooth_noise(rng, size, 15)
        period = rng.uniform(9, 20)
        along_x = rng.random() < 0.5  # grain runs along x or along y
        phase = ((ys if along_x else xs) + warp) / period
        grain = np.sin(2 * np.pi * phase) + 0.4 * np.sin(2 * np.pi * 3.1 * phase)
        streak = cv2.GaussianBlur(rng.normal(0, 1, (h, w)).astype(np.float32), (0, 0), 1.5)
        lum = 1 + 0.12 * grain + 0.05 * streak
    elif kind == "dark":
        base = _jitter(rng, (35, 32, 30), 10)
        lum = (
            1 + 0.1 * rng.normal(0, 1, (h, w)).astype(np.float32) + 0.2 * (_smooth_noise(rng, size, 80) - 0.5)
        )
    elif kind == "light":
        base = _jitter(rng, (232, 236, 238), 8)
        lum = (
            1
            + 0.01 * rng.normal(0, 1, (h, w)).astype(np.float32)
            + 0.04 * (_smooth_noise(rng, size, 90) - 0.5)
        )
    elif kind == "patterned":
        a, b = _jitter(rng, (60, 60, 170), 60), _jitter(rng, (215, 215, 215), 30)
        period = int(rng.integers(18, 48))
        ys, xs = np.mgrid[0:h, 0:w]
        band = ((xs // period) % 2 + (ys // period) % 2).astype(np.float32) / 2  # gingham: 0, .5, 1
        img = a[None, None, :] * band[..., None] + b[None, None, :] * (1 - band[..., None])
        img = img * (1 + 0.04 * rng.normal(0, 1, (h, w, 1)).astype(np.float32))
        return cv2.GaussianBlur(img.clip(0, 255).astype(np.uint8), (0, 0), 0.7)
    else:
        raise ValueError(f"unknown table kind {kind!r}: expected one of {', '.join(TABLE_KINDS)}")
    return (lum[..., None] * base[None, None, :]).clip(0, 255).astype(np.uint8)


# Compositing -------------------------------------------------------------------------------


class Placement(NamedTuple):
    """One card on the table: centre (x, y) in px, angle in degrees, width in px."""

    card: Card
    x: float
    y: float
    angle: float = 0.0
    width: int = 150
    face_up: bool = True


def rotate_sprite(img: np.ndarray, mask: np.ndarray, angle: float) -> Sprite:
    """Rotate a sprite counterclockwise about its centre onto a canvas that holds all of it.

    Multiples of 90 degrees are exact (``np.rot90``), so a card at 180 degrees is
    pixel for pixel the upright card turned round.
    """
    quarter = angle / 90
    if abs(quarter - round(quarter)) < 1e-9:
        k = round(quarter) % 4
        return np.ascontiguousarray(np.rot90(img, k)), np.ascontiguousarray(np.rot90(mask, k))
    h, w = mask.shape
    m = cv2.getRotationMatrix2D(((w - 1) / 2, (h - 1) / 2), angle, 1.0)
    c, s = abs(m[0, 0]), abs(m[0, 1])
    nw, nh = math.ceil(w * c + h * s), math.ceil(w * s + h * c)
    m[0, 2] += (nw - w) / 2
    m[1, 2] += (nh - h) / 2
    out = cv2.warpAffine(img, m, (nw, nh), flags=cv2.INTER_LINEAR, borderValue=(0, 0, 0))
    out_mask = cv2.warpAffine(mask, m, (nw, nh), flags=cv2.INTER_LINEAR, borderValue=0)
    return out, out_mask


def _region(frame: np.ndarray, shape: tuple[int, ...], cx: float, cy: float):
    """Frame and sprite slices where a sprite centred on (cx, cy) overlaps the frame, or None."""
    fh, fw = frame.shape[:2]
    sh, sw = shape[:2]
    x0, y0 = round(cx - (sw - 1) / 2), round(cy - (sh - 1) / 2)
    fx0, fy0, fx1, fy1 = max(0, x0), max(0, y0), min(fw, x0 + sw), min(fh, y0 + sh)
    if fx0 >= fx1 or fy0 >= fy1:
        return None
    return (slice(fy0, fy1), slice(fx0, fx1)), (slice(fy0 - y0, fy1 - y0), slice(fx0 - x0, fx1 - x0))


def paste_sprite(frame: np.ndarray, sprite: Sprite, cx: float, cy: float, shadow: float = 0.45) -> None:
    """Composite an (already rotated) sprite onto `frame` in place, centred on (cx, cy).

    A soft drop shadow, offset down and right as from a light up and to the left,
    darkens the table by up to `shadow` before the card goes on.
    """
    img, mask = sprite
    size = max(mask.shape)
    if shadow > 0:
        blur = max(1.0, size * 0.025)
        pad = round(3 * blur)
        padded = cv2.copyMakeBorder(mask, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=0)
        soft = cv2.GaussianBlur(padded, (0, 0), blur).astype(np.float32) * (shadow / 255)
        off = size * 0.02
        where = _region(frame, soft.shape, cx + off, cy + 1.5 * off)
        if where is not None:
            f, s = where
            frame[f] = (frame[f] * (1 - soft[s][..., None])).astype(np.uint8)
    where = _region(frame, mask.shape, cx, cy)
    if where is None:
        return
    f, s = where
    alpha = mask[s].astype(np.float32)[..., None] * (1 / 255)
    frame[f] = (frame[f] * (1 - alpha) + img[s] * alpha + 0.5).astype(np.uint8)


def placement_sprite(
    p: Placement, style: CardStyle | None = None, faces: Mapping[str, np.ndarray] | None = None
) -> Sprite:
    """The card of a placement, drawn and rotated."""
    sprite = card_sprite(p.card, p.width, style, faces) if p.face_up else draw_back(p.width, style)
    return rotate_sprite(*sprite, p.angle)


def compose(
    placed: Sequence[Placement],
    table: np.ndarray,
    style: CardStyle | None = None,
    faces: Mapping[str, np.ndarray] | None = None,
    shadow: float = 0.45,
) -> np.ndarray:
    """The cards on the table in order (the last on top), before light and lens."""
    frame = table.copy()
    for p in placed:
        paste_sprite(frame, placement_sprite(p, style, faces), p.x, p.y, shadow)
    return frame


# Light and lens ----------------------------------------------------------------------------


class Camera:
    """Uneven light, glare, blur, sensor noise and JPEG, fixed for a clip and applied per frame.

    `lighting` is how much darker the far side of the brightness gradient is (0..1),
    `glare` the strength of one specular ellipse (0 = none, 1 = burnt out), `blur`
    a gaussian sigma in px, `noise` the noise sigma in grey levels, and
    `jpeg_quality` None for no compression. The light and glare are drawn once from
    `rng`; each `shoot` draws fresh noise from a bank of `noise_frames`, which keeps
    a clip's frames cheap.
    """

    def __init__(
        self,
        size: tuple[int, int],
        rng: np.random.Generator,
        lighting: float = 0.0,
        glare: float = 0.0,
        blur: float = 0.0,
        noise: float = 0.0,
        jpeg_quality: int | None = None,
        noise_frames: int = 1,
    ) -> None:
        w, h = size
        self.size = size
        self.blur = blur
        self.jpeg_quality = jpeg_quality
        self.gain: np.ndarray | None = None
        self.glare: np.ndarray | None = None
        self.noise: list[tuple[np.ndarray, np.ndarray]] = []
        sw, sh = max(2, w // 8), max(2, h // 8)  # light varies slowly: work at 1/8 size
        ys, xs = np.mgrid[0:sh, 0:sw].astype(np.float32)
        xs, ys = xs / sw, ys / sh
        if lighting > 0:
            theta = rng.uniform(0, 2 * np.pi)
            ramp = xs * math.cos(theta) + ys * math.sin(theta)
            ramp = (ramp - ramp.min()) / max(1e-6, float(np.ptp(ramp)))
            lx, ly = rng.uniform(0, 1, 2)
            spot = np.exp(-((xs - lx) ** 2 + (ys - ly) ** 2) / 0.35)
            gain = 1 - lighting * (0.7 * ramp + 0.3 * (1 - spot))
            gain = cv2.resize(gain, (w, h), interpolation=cv2.INTER_LINEAR)
            # uint8 with 128 = 1.0: cv2.multiply then scales in one saturating pass
            self.gain = cv2.merge([np.clip(gain * 128, 0, 255).astype(np.uint8)] * 3)
        if glare > 0:
            gx, gy = rng.uniform(0.15, 0.85, 2)
            ax, ay = rng.uniform(0.06, 0.2, 2)
            rot = rng.uniform(0, np.pi)
            dx, dy = xs - gx, (ys - gy) * h / w
            u = dx * math.cos(rot) + dy * math.sin(rot)
            v = -dx * math.sin(rot) + dy * math.cos(rot)
            blob = np.exp(-((u / ax) ** 2 + (v / ay) ** 2) * 2)
            blob = cv2.resize(blob.astype(np.float32), (w, h), interpolation=cv2.INTER_CUBIC).clip(0, 1)
            tint = np.array([235, 245, 255], np.float32)  # a warm lamp
            self.glare = (blob[..., None] * tint * glare).clip(0, 255).astype(np.uint8)
        if noise > 0:
            for _ in range(max(1, noise_frames)):
                n = rng.normal(0, noise, (h, w, 3)).astype(np.float32)
                self.noise.append((n.clip(0, 255).astype(np.uint8), (-n).clip(0, 255).astype(np.uint8)))

    def shoot(self, frame: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The frame as the camera sees it (a new array; `frame` is untouched)."""
        out = frame
        if self.gain is not None:
            out = cv2.multiply(out, self.gain, scale=1 / 128)
        if self.glare is not None:
            out = cv2.add(out, self.glare)
        if self.blur > 0:
            out = cv2.GaussianBlur(out, (0, 0), self.blur)
        if self.noise:
            up, down = (
                self.noise[int(rng.integers(len(self.noise)))] if len(self.noise) > 1 else self.noise[0]
            )
            out = cv2.subtract(cv2.add(out, up), down)
        if self.jpeg_quality is not None:
            ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(self.jpeg_quality)])
            if not ok:
                raise RuntimeError("JPEG encoding failed")
            out = cv2.imdecode(buf, cv2.IMREAD_COLOR)
        return out if out is not frame else frame.copy()


def render_pile(
    placed: Sequence[Placement],
    table: np.ndarray | str,
    rng: np.random.Generator,
    *,
    size: tuple[int, int] = (640, 480),
    lighting: float = 0.0,
    glare: float = 0.0,
    blur: float = 0.0,
    noise: float = 0.0,
    jpeg_quality: int | None = None,
    style: CardStyle | None = None,
    faces: Mapping[str, np.ndarray] | None = None,
    shadow: float = 0.45,
) -> np.ndarray:
    """One camera frame of cards on a table, the last placement on top.

    `table` is an image (its size is the frame's) or a kind for `table_surface`
    (then `size` is used). Light and lens effects are off unless asked for.
    """
    if isinstance(table, str):
        table = table_surface(table, size, rng)
    frame = compose(placed, table, style, faces, shadow)
    h, w = frame.shape[:2]
    camera = Camera((w, h), rng, lighting, glare, blur, noise, jpeg_quality)
    return camera.shoot(frame, rng)


# The hand ----------------------------------------------------------------------------------

SKIN_TONES: tuple[BGR, ...] = (
    (185, 205, 240),
    (160, 185, 225),
    (125, 160, 205),
    (95, 130, 185),
    (70, 100, 150),
    (50, 70, 105),
)
_DIRECTIONS = {"bottom": (0.0, -1.0), "top": (0.0, 1.0), "left": (1.0, 0.0), "right": (-1.0, 0.0)}


class HandLook(NamedTuple):
    skin: BGR
    sleeve: BGR
    size: float  # palm width in px
    splay: float  # finger spread, 0.8..1.2


def random_hand(rng: np.random.Generator, size: float) -> HandLook:
    tone = np.array(SKIN_TONES[int(rng.integers(len(SKIN_TONES)))], np.float32) + rng.uniform(-10, 10, 3)
    sleeve = tuple(int(c) for c in rng.integers(20, 230, 3))
    skin = tuple(int(c) for c in tone.clip(0, 255))
    return HandLook(skin, sleeve, float(size * rng.uniform(0.9, 1.1)), float(rng.uniform(0.85, 1.15)))


def hand_fingertip(
    side: str, progress: float, size: tuple[int, int], target: tuple[float, float]
) -> tuple[np.ndarray, np.ndarray]:
    """Where the fingertips are and which way the hand points, `progress` of the way in."""
    if side not in _DIRECTIONS:
        raise ValueError(f"unknown side {side!r}: expected one of {', '.join(SIDES)}")
    w, h = size
    d = np.array(_DIRECTIONS[side])
    t = np.array(target, np.float64)
    # Start with the fingertips just outside the frame edge, in line with the target.
    if side == "bottom":
        start = np.array([t[0], h + 4.0])
    elif side == "top":
        start = np.array([t[0], -5.0])
    elif side == "left":
        start = np.array([-5.0, t[1]])
    else:
        start = np.array([w + 4.0, t[1]])
    p = min(1.0, max(0.0, progress))
    return start + p * (t - start), d


def draw_hand(
    frame: np.ndarray,
    side: str,
    progress: float,
    rng: np.random.Generator | None = None,
    *,
    target: tuple[float, float] | None = None,
    look: HandLook | None = None,
    size: float | None = None,
) -> np.ndarray:
    """A new frame with a hand reaching in from `side`, fingertips `progress` (0..1) of the way to `target`.

    At 0 the hand is wholly outside the frame; at 1 the fingertips touch `target`
    (default the centre). Palm, fingers, thumb and sleeve are opaque. Pass `look`
    to keep the same hand across frames; otherwise one is drawn from `rng`.
    """
    h, w = frame.shape[:2]
    if look is None:
        if rng is None:
            raise ValueError("draw_hand needs an rng or a look")
        look = random_hand(rng, size if size is not None else 0.28 * min(w, h))
    tip, d = hand_fingertip(side, progress, (w, h), target or ((w - 1) / 2, (h - 1) / 2))
    out = frame.copy()
    hand = _HandShape(tip, d, look)
    hand.draw_arm(out, float(w + h))
    hand.draw_palm(out)
    hand.draw_fingers(out, thumb_turn=1 if side in ("bottom", "left") else -1)
    return out


class _HandShape:
    """A hand at its place in the frame, drawn part by part (sleeve and arm, palm, fingers)."""

    def __init__(self, tip: np.ndarray, d: np.ndarray, look: HandLook) -> None:
        self.tip, self.d, self.look = tip, d, look
        self.n = np.array([-d[1], d[0]])  # across the hand
        self.palm = look.size
        self.finger_len = 0.55 * self.palm
        self.angle = math.degrees(math.atan2(d[1], d[0]))

    def pt(self, along: float, across: float) -> tuple[int, int]:
        """The pixel `along` behind the fingertips and `across` the hand."""
        q = self.tip - self.d * along + self.n * across
        return round(q[0]), round(q[1])

    def draw_arm(self, out: np.ndarray, reach: float) -> None:
        """Sleeve and forearm, from behind the palm to well beyond the frame edge (`reach`)."""
        palm, finger_len, pt = self.palm, self.finger_len, self.pt
        for behind, half, colour in ((0.6, 0.42, self.look.skin), (1.4, 0.5, self.look.sleeve)):
            outline = np.array(
                [pt(finger_len + behind * palm, s * half * palm) for s in (-1, 1)]
                + [pt(finger_len + reach, s * half * palm) for s in (1, -1)],
                np.int32,
            )
            cv2.fillConvexPoly(out, outline, colour, cv2.LINE_AA)

    def draw_palm(self, out: np.ndarray) -> None:
        palm = self.palm
        centre = self.pt(self.finger_len + 0.35 * palm, 0)
        axes = (round(0.5 * palm), round(0.5 * palm))
        cv2.ellipse(out, centre, axes, self.angle, 0, 360, self.look.skin, -1, cv2.LINE_AA)

    def draw_fingers(self, out: np.ndarray, thumb_turn: int) -> None:
        """Four fingers (the middle ones longer) and a thumb, turned `thumb_turn` (+1 or -1) of 40 degrees."""
        palm, finger_len, pt, skin = self.palm, self.finger_len, self.pt, self.look.skin
        dark = tuple(int(c * 0.7) for c in skin)
        spread = 0.24 * palm * self.look.splay
        for i, length in enumerate((0.8, 0.97, 1.0, 0.9)):
            across = (i - 1.5) * spread
            half = (finger_len * length + 0.2 * palm) / 2
            centre = pt((1 - length) * finger_len + half, across)  # the longest finger's tip is the tip
            axes = (round(half), round(0.13 * palm))
            cv2.ellipse(out, centre, axes, self.angle, 0, 360, skin, -1, cv2.LINE_AA)
            if i:
                a, b = (
                    pt(finger_len * 0.75, across - spread / 2),
                    pt(finger_len + 0.1 * palm, across - spread / 2),
                )
                cv2.line(out, a, b, dark, max(1, round(palm / 60)), cv2.LINE_AA)
        thumb_angle = self.angle + 40 * thumb_turn
        centre = pt(finger_len + 0.2 * palm, 0.55 * palm)
        axes = (round(0.38 * palm), round(0.12 * palm))
        cv2.ellipse(out, centre, axes, thumb_angle, 0, 360, skin, -1, cv2.LINE_AA)


# A clip of cards being laid ----------------------------------------------------------------


def _ease(p: float) -> float:
    return 1 - (1 - p) ** 2  # decelerate as the hand arrives


def render_lay_sequence(
    cards: Sequence[Card],
    seats: Sequence[int],
    side_of_seat: Mapping[int, str],
    rng: np.random.Generator,
    fps: float = 30,
    *,
    size: tuple[int, int] = (640, 480),
    table: str | np.ndarray = "green_cloth",
    card_width: int = 140,
    style: CardStyle | None = None,
    faces: Mapping[str, np.ndarray] | None = None,
    lead_s: float = 0.2,
    carry_s: float = 0.35,
    leave_s: float = 0.3,
    rest_s: tuple[float, float] = (0.4, 0.8),
    scatter: float = 0.12,
    lighting: float = 0.3,
    glare: float = 0.0,
    blur: float = 0.6,
    noise: float = 3.0,
    jpeg_quality: int | None = 85,
) -> tuple[list[tuple[int, np.ndarray]], list[tuple[int, Card, int]]]:
    """A clip of `cards` laid one by one on a pile, each by a hand from its seat's side.

    ``seats[i]`` lays ``cards[i]``; ``side_of_seat`` says from which frame edge that
    seat's hand comes. Each card is carried in under the fingers, dropped near the
    pile centre (offset up to `scatter` card widths, at any angle), left there as
    the hand withdraws, and rests for `rest_s` seconds. Returns ``(frames, truth)``:
    frames are ``(t_us, image)`` with ``t_us = round(k * 1e6 / fps)``, and truth is
    ``(t_rest_us, card, seat)`` per card, where ``t_rest_us`` is the first frame with
    the card in place and the hand gone.
    """
    if len(cards) != len(seats):
        raise ValueError("one seat per card")
    base = table_surface(table, size, rng) if isinstance(table, str) else table.copy()
    h, w = base.shape[:2]
    camera = Camera((w, h), rng, lighting, glare, blur, noise, jpeg_quality, noise_frames=4)
    centre = np.array([(w - 1) / 2, (h - 1) / 2]) + rng.normal(0, 0.03 * min(w, h), 2)
    clip = _LayClip(base, camera, rng, fps, centre, card_width, scatter, style, faces)
    for _ in range(round(lead_s * fps)):
        clip.emit(base)
    n_in, n_out = max(2, round(carry_s * fps)), max(2, round(leave_s * fps))
    truth: list[tuple[int, Card, int]] = []
    for card, seat in zip(cards, seats, strict=True):
        t_rest = clip.lay(card, side_of_seat[seat], n_in, n_out)
        truth.append((t_rest, card, seat))
        for _ in range(max(0, round(float(rng.uniform(*rest_s)) * fps) - 1)):
            clip.emit(base)
    return clip.frames, truth


@dataclass
class _LayClip:
    """A clip being shot: the table with the pile so far (`base`, drawn on), and its frames."""

    base: np.ndarray
    camera: Camera
    rng: np.random.Generator
    fps: float
    centre: np.ndarray  # the pile's
    card_width: int
    scatter: float
    style: CardStyle | None
    faces: Mapping[str, np.ndarray] | None
    frames: list[tuple[int, np.ndarray]] = field(default_factory=list)

    def emit(self, img: np.ndarray) -> int:
        t = round(len(self.frames) * 1e6 / self.fps)
        self.frames.append((t, self.camera.shoot(img, self.rng)))
        return t

    def lay(self, card: Card, side: str, n_in: int, n_out: int) -> int:
        """`card` carried in from `side` in `n_in` frames, dropped, the hand gone in `n_out`: the
        rest frame's time."""
        rng, base = self.rng, self.base
        h, w = base.shape[:2]
        drop = self.centre + rng.normal(0, self.scatter * self.card_width, 2)
        final = float(rng.uniform(-180, 180))
        swing = float(rng.uniform(-25, 25))
        look = random_hand(rng, 1.3 * self.card_width)
        d = np.array(_DIRECTIONS[side])
        card_h = self.card_width * ASPECT
        hold = 0.3 * card_h  # fingertips this far short of the card's centre
        target = (float(drop[0] - d[0] * hold), float(drop[1] - d[1] * hold))
        sprite = card_sprite(card, self.card_width, self.style, self.faces)
        for k in range(1, n_in + 1):  # carry in: the card moves with the fingertips
            p = _ease(k / n_in)
            tip, _ = hand_fingertip(side, p, (w, h), target)
            frame = base.copy()
            at = tip + d * hold
            paste_sprite(frame, rotate_sprite(*sprite, final + (1 - p) * swing), at[0], at[1], shadow=0.3)
            self.emit(draw_hand(frame, side, p, target=target, look=look))
        paste_sprite(base, rotate_sprite(*sprite, final), drop[0], drop[1])
        for k in range(n_out - 1, 0, -1):  # the hand withdraws; p stays above 0 so it still shows
            self.emit(draw_hand(base, side, _ease(k / n_out), target=target, look=look))
        return self.emit(base)
