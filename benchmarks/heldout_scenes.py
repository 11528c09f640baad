"""An independent scene generator for grading the card recogniser (issue 18).

Written from first principles with numpy and OpenCV, without reading the project's own
renderer (referee/sim/render.py), its table camera, the calibration simulator or the index
model's training damage: the generator that tunes must not be the generator that grades.

A scene is a pile of cards on a table plane, seen by a camera tilted up to 25 degrees,
lit by a lamp (light falloff, a glare hotspot, shadows of the cards, of a hand and of the
lamp's arm), with the camera's white balance, defocus or motion blur, shot and read noise,
and JPEG. Its truth is the top card's code and its four corners in the image, in the
card's own order (the corner with the upright index first, then clockwise).

Decks: Debian's gnome-cards-data themes (`referee.sim.card_themes`), and three decks drawn
here with a stroke font and pips of its own (every font on this machine, and OpenCV's
Hershey fonts, are in the index model's training set, so none of them is used):
`stroke_sans` (thin clean sans-serif indices), `stroke_bold` (very large bold indices,
cartoon courts) and `stroke_dutch` (B, V, H for J, Q, K, and a joker), for refusals.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np

from referee.cards import JOKER_CODE, RANKS, SUITS
from referee.sim.card_themes import theme_cards

ASPECT = 1.4  # a poker card's length for its width (63 x 88 mm)
FRAME = (1280, 720)
PHONE = (720, 1280)  # a phone photo held upright: where a card takes more than half the frame
NUMBERS = tuple(str(n) for n in range(2, 11))

# Gnome themes whose corners carry English indices, and which ranks do (looked at, rendered).
# guyenne-classic (no index on courts or numbers) and swiss-xvii (pictures) are left out.
ENGLISH_RANKS: dict[str, tuple[str, ...]] = {
    **{t: RANKS for t in ("anglo", "anglo_bitmap", "anglo_modern", "anglo_modern_4_color", "anglo_poker")},
    **{t: RANKS for t in ("gnomangelo", "gnomangelo_bitmap", "tango", "tango_nuevo", "simplistic")},
    **{t: RANKS for t in ("paris", "bellot", "neoclassical", "neoclassical_4_color")},
    **{t: RANKS for t in ("atlasnye", "dondorf", "orell", "ornamental", "plastic", "tigullio")},
    **{t: (*NUMBERS, "A", "K") for t in ("berlin", "lattmann", "rheinland", "atlasnye_skat")},
    "tarocco": (*NUMBERS, "A"),
    "slavic_costumes": (*NUMBERS, "K"),
    "Атласные": (*NUMBERS, "K"),
    "ancient_french": NUMBERS,
}
# Look-alikes: one artwork in several themes. A theme left out of training takes these with it.
LOOKALIKES: tuple[tuple[str, ...], ...] = (
    ("anglo", "anglo_bitmap", "anglo_modern", "anglo_modern_4_color", "anglo_poker"),
    ("gnomangelo", "gnomangelo_bitmap"),
    ("tango", "tango_nuevo"),
    ("neoclassical", "neoclassical_4_color"),
    ("atlasnye", "atlasnye_skat", "Атласные"),
)
OWN_DECKS = ("stroke_sans", "stroke_bold", "stroke_dutch")
DUTCH = {"J": "B", "Q": "V", "K": "H"}  # boer, vrouw, heer


def lookalikes(theme: str) -> tuple[str, ...]:
    return next((group for group in LOOKALIKES if theme in group), (theme,))


def english_codes(deck: str) -> list[str]:
    """The codes of a deck whose index an English reader knows (every suited card of our own
    English decks; none of the Dutch deck's courts)."""
    if deck in ENGLISH_RANKS:
        ranks = ENGLISH_RANKS[deck]
    elif deck == "stroke_dutch":
        ranks = ("A", *NUMBERS)
    else:
        ranks = RANKS
    return [r + s for s in SUITS for r in RANKS if r in ranks]


def foreign_codes(deck: str) -> list[str]:
    """The codes whose index is not English: non-English courts, and a deck's joker."""
    if deck == "stroke_dutch":
        return [r + s for s in SUITS for r in DUTCH] + [JOKER_CODE]
    ranks = ENGLISH_RANKS.get(deck, RANKS)
    return [r + s for s in SUITS for r in RANKS if r not in ranks] + [JOKER_CODE]


# The stroke font ------------------------------------------------------------------------------
# Each glyph is polylines in a box 0.6 wide and 1 tall (y down). Arcs: angles in degrees,
# 0 to the right, 90 down.


def _arc(cx: float, cy: float, rx: float, ry: float, a0: float, a1: float) -> list[tuple[float, float]]:
    n = max(8, int(abs(a1 - a0) / 8))
    t = np.radians(np.linspace(a0, a1, n))
    return [(cx + rx * float(np.cos(a)), cy + ry * float(np.sin(a))) for a in t]


def _six() -> list[list[tuple[float, float]]]:
    return [_arc(0.33, 0.56, 0.3, 0.56, 295, 170), _arc(0.3, 0.71, 0.29, 0.29, 0, 360)]


STROKES: dict[str, list[list[tuple[float, float]]]] = {
    "A": [[(0, 1), (0.3, 0), (0.6, 1)], [(0.1, 0.68), (0.5, 0.68)]],
    "2": [[*_arc(0.3, 0.27, 0.28, 0.26, 200, 390), (0.0, 1.0), (0.6, 1.0)]],
    "3": [_arc(0.3, 0.25, 0.27, 0.24, 200, 450), _arc(0.3, 0.74, 0.3, 0.26, 270, 520)],
    "4": [[(0.47, 1), (0.47, 0), (0, 0.7), (0.6, 0.7)]],
    "5": [[(0.56, 0), (0.08, 0), (0.05, 0.46)], _arc(0.3, 0.69, 0.29, 0.3, 240, 520)],
    "6": _six(),
    "7": [[(0, 0), (0.6, 0), (0.2, 1)]],
    "8": [_arc(0.3, 0.25, 0.24, 0.24, 0, 360), _arc(0.3, 0.73, 0.29, 0.27, 0, 360)],
    "9": [[(0.6 - x, 1 - y) for x, y in line] for line in _six()],
    "1": [[(0.05, 0.22), (0.3, 0), (0.3, 1)]],
    "0": [_arc(0.3, 0.5, 0.29, 0.5, 0, 360)],
    "J": [[(0.6, 0), *_arc(0.3, 0.71, 0.3, 0.29, 0, 180)]],
    "Q": [_arc(0.3, 0.48, 0.3, 0.48, 0, 360), [(0.36, 0.72), (0.64, 1.04)]],
    "K": [[(0, 0), (0, 1)], [(0.6, 0), (0, 0.62)], [(0.2, 0.45), (0.6, 1)]],
    "B": [
        [(0, 1), (0, 0), (0.33, 0), *_arc(0.33, 0.24, 0.22, 0.24, 270, 450), (0, 0.48)],
        [(0.36, 0.48), *_arc(0.36, 0.74, 0.24, 0.26, 270, 450), (0, 1)],
    ],
    "V": [[(0, 0), (0.3, 1), (0.6, 0)]],
    "H": [[(0, 0), (0, 1)], [(0.6, 0), (0.6, 1)], [(0, 0.5), (0.6, 0.5)]],
    "O": [_arc(0.3, 0.5, 0.3, 0.5, 0, 360)],
    "E": [[(0.58, 0), (0, 0), (0, 1), (0.58, 1)], [(0, 0.5), (0.48, 0.5)]],
    "R": [
        [(0, 1), (0, 0), (0.33, 0), *_arc(0.33, 0.25, 0.25, 0.25, 270, 450), (0, 0.5)],
        [(0.25, 0.5), (0.6, 1)],
    ],
}


def glyph_mask(text: str, height: int, stroke: float) -> np.ndarray:
    """Coverage (0..1) of `text` in the stroke font, `height` px tall, strokes `stroke` of the
    height thick. Drawn 4x larger and shrunk: smooth edges."""
    s = 4
    h = height * s
    t = max(1, round(stroke * h))
    pad = t // 2 + 2
    advance, gap = 0.6 * h, 0.12 * h
    w = int(len(text) * advance + (len(text) - 1) * gap) + 2 * pad
    canvas = np.zeros((h + 2 * pad, w), np.uint8)
    for i, ch in enumerate(text):
        x0 = pad + i * (advance + gap)
        for line in STROKES[ch]:
            pts = np.array([[x0 + x * h, pad + y * h] for x, y in line], np.float64)
            cv2.polylines(canvas, [np.round(pts * 8).astype(np.int32)], False, 255, t, cv2.LINE_AA, 3)
    small = cv2.resize(canvas, (max(1, w // s), max(1, canvas.shape[0] // s)), interpolation=cv2.INTER_AREA)
    return small.astype(np.float32) / 255.0


def pip_mask(suit: str, size: int) -> np.ndarray:
    """A suit pip of circles and polygons, `size` px tall (coverage 0..1)."""
    s = 4
    n = size * s
    img = np.zeros((n, n), np.uint8)

    def p(x: float, y: float) -> tuple[int, int]:  # from -0.5..0.5 box to pixels
        return round((x + 0.5) * (n - 1)), round((y + 0.5) * (n - 1))

    def poly(points: list[tuple[float, float]]) -> None:
        cv2.fillPoly(img, [np.array([p(x, y) for x, y in points], np.int32)], 255, cv2.LINE_AA)

    def circle(x: float, y: float, r: float) -> None:
        cv2.circle(img, p(x, y), round(r * (n - 1)), 255, -1, cv2.LINE_AA)

    if suit == "D":
        poly([(0, -0.5), (0.36, 0), (0, 0.5), (-0.36, 0)])
    elif suit == "H":
        circle(-0.22, -0.22, 0.24)
        circle(0.22, -0.22, 0.24)
        poly([(-0.45, -0.14), (0.45, -0.14), (0, 0.48)])
    elif suit == "S":
        circle(-0.22, 0.08, 0.22)
        circle(0.22, 0.08, 0.22)
        poly([(-0.42, 0.02), (0.42, 0.02), (0, -0.5)])
        poly([(0, 0.05), (-0.16, 0.5), (0.16, 0.5)])
    else:
        circle(0, -0.26, 0.21)
        circle(-0.24, 0.06, 0.21)
        circle(0.24, 0.06, 0.21)
        poly([(0, -0.05), (-0.16, 0.5), (0.16, 0.5)])
    return cv2.resize(img, (size, size), interpolation=cv2.INTER_AREA).astype(np.float32) / 255.0


# Our own decks ---------------------------------------------------------------------------------

# Pip positions (across, down, as parts of the card) of the number cards.
_COLS, _ROWS4 = (0.32, 0.68), (0.2, 0.4, 0.6, 0.8)
PIP_LAYOUT: dict[str, list[tuple[float, float]]] = {
    "A": [(0.5, 0.5)],
    "2": [(0.5, 0.2), (0.5, 0.8)],
    "3": [(0.5, 0.2), (0.5, 0.5), (0.5, 0.8)],
    "4": [(x, y) for x in _COLS for y in (0.2, 0.8)],
    "5": [(x, y) for x in _COLS for y in (0.2, 0.8)] + [(0.5, 0.5)],
    "6": [(x, y) for x in _COLS for y in (0.2, 0.5, 0.8)],
    "7": [(x, y) for x in _COLS for y in (0.2, 0.5, 0.8)] + [(0.5, 0.35)],
    "8": [(x, y) for x in _COLS for y in (0.2, 0.5, 0.8)] + [(0.5, 0.35), (0.5, 0.65)],
    "9": [(x, y) for x in _COLS for y in _ROWS4] + [(0.5, 0.5)],
    "10": [(x, y) for x in _COLS for y in _ROWS4] + [(0.5, 0.3), (0.5, 0.7)],
}
DECK_LOOK = {
    # rank height (part of the card's length), stroke (part of the glyph's height), paper, courts
    "stroke_sans": (0.1, 0.11, (250, 252, 252), "framed"),
    "stroke_bold": (0.165, 0.21, (240, 248, 252), "cartoon"),
    "stroke_dutch": (0.1, 0.11, (236, 244, 248), "framed"),
}
INK = {"red": (30, 25, 205), "black": (25, 20, 20)}


def _paint(card: np.ndarray, mask: np.ndarray, x: int, y: int, colour: tuple[int, int, int]) -> None:
    """Ink `mask` (0..1) onto `card` at (x, y), clipped to the card."""
    h, w = mask.shape
    ch, cw = card.shape[:2]
    x0, y0, x1, y1 = max(x, 0), max(y, 0), min(x + w, cw), min(y + h, ch)
    if x1 <= x0 or y1 <= y0:
        return
    m = mask[y0 - y : y1 - y, x0 - x : x1 - x, None]
    region = card[y0:y1, x0:x1]
    region[:] = region * (1 - m) + np.array(colour, np.float32) * m


def _court_picture(card: np.ndarray, rank: str, suit: str, look: str, ink: tuple[int, int, int]) -> None:
    """A court card's picture: a frame, and a simple figure mirrored top and bottom."""
    h, w = card.shape[:2]
    # The cartoon courts make room for the very large index.
    x0, y0, x1, y1 = (0.3, 0.2, 0.76, 0.8) if look == "cartoon" else (0.2, 0.14, 0.8, 0.86)
    x0, y0, x1, y1 = int(x0 * w), int(y0 * h), int(x1 * w), int(y1 * h)
    body = {"J": (200, 120, 40), "Q": (60, 60, 190), "K": (40, 150, 60), "JOKER": (160, 60, 160)}[rank]
    half = np.full((int((y1 - y0) / 2), x1 - x0, 3), 250, np.float32)
    hh, hw = half.shape[:2]
    if look == "cartoon":  # big round head, crown or cap, bold outlines
        cv2.rectangle(half, (int(0.15 * hw), int(0.62 * hh)), (int(0.85 * hw), hh), body, -1)
        cv2.circle(half, (hw // 2, int(0.45 * hh)), int(0.22 * hw), (170, 200, 240), -1)
        cv2.circle(half, (hw // 2, int(0.45 * hh)), int(0.22 * hw), (20, 20, 20), max(1, w // 80))
        for dx in (-0.08, 0.08):
            cv2.circle(half, (int(hw * (0.5 + dx)), int(0.42 * hh)), max(1, w // 60), (20, 20, 20), -1)
        crown = np.array([[0.3, 0.25], [0.35, 0.08], [0.43, 0.2], [0.5, 0.04], [0.57, 0.2], [0.65, 0.08]])
        pts = np.vstack([crown, [[0.7, 0.25]]]) * [hw, hh]
        cv2.fillPoly(half, [pts.astype(np.int32)], (40, 200, 240))
    else:  # a robe of bands and a head, thin lines
        for k in range(5):
            colour = body if k % 2 == 0 else (60, 170, 220)
            cv2.rectangle(half, (int(0.2 * hw), int((0.55 + 0.09 * k) * hh)), (int(0.8 * hw), hh), colour, -1)
        cv2.ellipse(
            half, (hw // 2, int(0.35 * hh)), (int(0.14 * hw), int(0.18 * hh)), 0, 0, 360, (150, 190, 235), -1
        )
        pip = pip_mask(suit, int(0.22 * hw))
        _paint(half, pip, int(0.06 * hw), int(0.06 * hh), ink)
    picture = np.vstack([half, half[::-1, ::-1]])
    card[y0 : y0 + picture.shape[0], x0 : x0 + hw] = picture
    cv2.rectangle(card, (x0, y0), (x0 + hw, y0 + picture.shape[0]), (40, 40, 40), max(1, w // 120))


@lru_cache(maxsize=64)
def own_card(deck: str, code: str, width: int) -> np.ndarray:
    """One card of our own decks, BGR, `width` px wide."""
    rank_h, stroke, paper, look = DECK_LOOK[deck]
    h = round(width * ASPECT)
    card = np.empty((h, width, 3), np.float32)
    card[:] = paper
    cv2.rectangle(card, (0, 0), (width - 1, h - 1), (150, 150, 150), max(1, width // 200))
    if code == JOKER_CODE:
        ink = INK["red"]
        letters = [glyph_mask(c, max(4, round(0.045 * h)), stroke) for c in "JOKER"]
        y = round(0.04 * h)
        for m in letters:
            _paint(card, m, round(0.05 * width), y, ink)
            y += m.shape[0] + max(1, round(0.005 * h))
        _court_picture(card, JOKER_CODE, "H", look, ink)
        return np.clip(np.minimum(card, card[::-1, ::-1]), 0, 255).astype(np.uint8)
    rank, suit = code[:-1], code[-1]
    ink = INK["red" if suit in "HD" else "black"]
    shown = DUTCH.get(rank, rank) if deck == "stroke_dutch" else rank
    glyph = glyph_mask(shown, max(4, round(rank_h * h)), stroke)
    if glyph.shape[1] > 0.24 * width:  # a "10" kept inside the corner: narrower, as printed
        glyph = cv2.resize(glyph, (int(0.24 * width), glyph.shape[0]), interpolation=cv2.INTER_AREA)
    x0, y0 = round(0.045 * width), round(0.035 * h)
    _paint(card, glyph, x0, y0, ink)
    pip = pip_mask(suit, max(4, round(0.6 * rank_h * h)))
    px = x0 + (glyph.shape[1] - pip.shape[1]) // 2
    _paint(card, pip, px, y0 + glyph.shape[0] + round(0.01 * h), ink)
    if rank in PIP_LAYOUT:
        narrow = 0.7 if look == "cartoon" else 1.0  # the pips kept clear of a very large index
        size = round((0.3 if rank == "A" else 0.17) * narrow * width)
        big = pip_mask(suit, size)
        for u, v in PIP_LAYOUT[rank]:
            m = big if v <= 0.5 else big[::-1, ::-1]
            u = 0.5 + (u - 0.5) * narrow
            _paint(card, m, round(u * width - size / 2), round(v * h - size / 2), ink)
    else:
        _court_picture(card, rank, suit, look, ink)
    # The bottom-right index: the top-left one turned round (the centre is symmetric already
    # for courts; the number cards' pips keep their own way up).
    corner = card[: y0 + glyph.shape[0] + pip.shape[0] + round(0.02 * h), : round(0.27 * width)].copy()
    ch, cw = corner.shape[:2]
    card[h - ch :, width - cw :] = np.minimum(card[h - ch :, width - cw :], corner[::-1, ::-1])
    return np.clip(card, 0, 255).astype(np.uint8)


def deck_faces(deck: str, width: int) -> dict[str, np.ndarray]:
    """Every card of a deck, BGR, about `width` px wide, by code."""
    if deck in OWN_DECKS:
        return {code: own_card(deck, code, width) for code in _all_codes()}
    return theme_cards(deck, width)


def _all_codes() -> list[str]:
    return [r + s for s in SUITS for r in RANKS] + [JOKER_CODE]


@lru_cache(maxsize=8)
def _faces_cached(deck: str, width: int) -> dict[str, np.ndarray]:
    return deck_faces(deck, width)


FACE_WIDTHS = (180, 320, 560)  # face resolutions kept; a card is shrunk from the next one up


def card_face(deck: str, code: str, width: float) -> np.ndarray:
    """A card's face at about `width` px wide (shrunk from a larger rendering: no aliasing)."""
    source = next((w for w in FACE_WIDTHS if w >= width), FACE_WIDTHS[-1])
    face = _faces_cached(deck, source)[code]
    target = max(8, round(width))
    if target == face.shape[1]:
        return face
    h = round(target * face.shape[0] / face.shape[1])
    return cv2.resize(face, (target, h), interpolation=cv2.INTER_AREA if target < source else cv2.INTER_CUBIC)


# Tables ------------------------------------------------------------------------------------------

TABLES = ("felt", "wood", "dark", "cream", "white", "check")


def _smooth_noise(rng: np.random.Generator, shape: tuple[int, int], scale: float) -> np.ndarray:
    """Noise of features about `scale` px, zero mean, unit spread."""
    h, w = shape
    small = rng.standard_normal((max(2, int(h / scale) + 2), max(2, int(w / scale) + 2))).astype(np.float32)
    big = cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)
    return (big - big.mean()) / (big.std() + 1e-6)


def table_texture(kind: str, shape: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    """A table top (BGR float 0..255) of the given kind, in the table plane."""
    h, w = shape
    fine = rng.standard_normal((h, w)).astype(np.float32)
    if kind == "felt":
        base = np.array(
            [(50, 110, 40), (110, 70, 30), (40, 40, 120), (70, 90, 60)][int(rng.integers(4))], np.float32
        ) * rng.uniform(0.8, 1.2)
        shade = 1 + 0.05 * _smooth_noise(rng, shape, 120) + 0.06 * cv2.GaussianBlur(fine, (0, 0), 0.7)
        return base * shade[..., None]
    if kind == "wood":
        warp = 25 * _smooth_noise(rng, shape, 160)
        ys = np.arange(h, dtype=np.float32)[:, None] + warp + 0.05 * np.arange(w, dtype=np.float32)[None, :]
        period = rng.uniform(9, 22)
        grain = 0.5 + 0.5 * np.sin(2 * np.pi * ys / period + 2 * _smooth_noise(rng, shape, 40))
        plank = int(rng.uniform(140, 320))
        seams = (np.abs((ys % plank) - plank / 2) > plank / 2 - 1.5).astype(np.float32)
        light, dark = np.array((90, 150, 200), np.float32), np.array((40, 80, 130), np.float32)
        tone = rng.uniform(0.55, 1.1)
        img = (dark + (light - dark) * (0.35 + 0.3 * grain[..., None])) * tone
        img *= (1 - 0.5 * seams)[..., None]
        return img * (1 + 0.04 * fine)[..., None]
    if kind == "dark":
        base = np.array((28, 26, 30), np.float32) * rng.uniform(0.6, 1.4)
        return base * (1 + 0.12 * fine + 0.1 * _smooth_noise(rng, shape, 80))[..., None]
    if kind == "cream":
        base = np.array((198, 228, 240), np.float32) * rng.uniform(0.92, 1.03)
        return base * (1 + 0.02 * fine + 0.02 * _smooth_noise(rng, shape, 90))[..., None]
    if kind == "white":
        base = np.full(3, 243, np.float32) * rng.uniform(0.94, 1.03)
        return base * (1 + 0.015 * fine + 0.015 * _smooth_noise(rng, shape, 90))[..., None]
    # check: a gingham or stripe cloth
    period = rng.uniform(18, 60)
    angle = rng.uniform(0, np.pi)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    u = (xx * np.cos(angle) + yy * np.sin(angle)) / period
    v = (-xx * np.sin(angle) + yy * np.cos(angle)) / period
    a, b = (np.floor(u) % 2).astype(np.float32), (np.floor(v) % 2).astype(np.float32)
    colour = np.array(
        [(40, 40, 190), (160, 90, 30), (40, 120, 40), (30, 30, 30)][int(rng.integers(4))], np.float32
    )
    paper = np.array((235, 240, 240), np.float32)
    amount = (a + b) / 2 if rng.random() < 0.7 else a
    return (paper + (colour - paper) * amount[..., None]) * (1 + 0.03 * fine)[..., None]


# The camera --------------------------------------------------------------------------------------


def tilt_homography(size: tuple[int, int], tilt_deg: float, azimuth_deg: float, focal: float) -> np.ndarray:
    """The plane as a camera turned `tilt_deg` away from straight down sees it (a rotation about an
    axis in the image plane at `azimuth_deg`), scaled and shifted back so that the frame's centre
    keeps its place and its size there."""
    w, h = size
    k = np.array([[focal, 0, w / 2], [0, focal, h / 2], [0, 0, 1]])
    a = np.radians(azimuth_deg)
    axis = np.array([np.cos(a), np.sin(a), 0.0])
    rot, _ = cv2.Rodrigues(axis * np.radians(tilt_deg))
    m = k @ rot @ np.linalg.inv(k)
    c = np.array([w / 2, h / 2, 1.0])
    moved = m @ c
    moved = moved[:2] / moved[2]
    # The local scale at the centre (the Jacobian's determinant), undone there.
    eps = 1.0
    px = m @ (c + [eps, 0, 0])
    py = m @ (c + [0, eps, 0])
    jx, jy = px[:2] / px[2] - moved, py[:2] / py[2] - moved
    scale = float(np.sqrt(abs(jx[0] * jy[1] - jx[1] * jy[0])))
    fix = np.array([[1 / scale, 0, 0], [0, 1 / scale, 0], [0, 0, 1]])
    shift = (
        np.array([[1, 0, w / 2], [0, 1, h / 2], [0, 0, 1]])
        @ fix
        @ np.array([[1, 0, -moved[0]], [0, 1, -moved[1]], [0, 0, 1]])
    )
    return shift @ m


def _apply(m: np.ndarray, points: np.ndarray) -> np.ndarray:
    p = np.hstack([points, np.ones((len(points), 1))]) @ m.T
    return p[:, :2] / p[:, 2:3]


def _card_to_plane(face_shape: tuple[int, ...], cx: float, cy: float, angle: float) -> np.ndarray:
    """The card image's pixels to the table plane: centred at (cx, cy), turned `angle` degrees."""
    h, w = face_shape[:2]
    a = np.radians(angle)
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, cx], [s, c, cy], [0, 0, 1]]) @ np.array(
        [[1, 0, -w / 2], [0, 1, -h / 2], [0, 0, 1]]
    )


def rounded_alpha(shape: tuple[int, ...], radius: float) -> np.ndarray:
    """A card's coverage: its rectangle with rounded corners (0..1)."""
    h, w = shape[:2]
    s = 4
    big = np.zeros((h * s, w * s), np.uint8)
    r = max(1, round(radius * s))
    cv2.rectangle(big, (r, 0), (w * s - 1 - r, h * s - 1), 255, -1)
    cv2.rectangle(big, (0, r), (w * s - 1, h * s - 1 - r), 255, -1)
    for x, y in ((r, r), (w * s - 1 - r, r), (r, h * s - 1 - r), (w * s - 1 - r, h * s - 1 - r)):
        cv2.circle(big, (x, y), r, 255, -1)
    return cv2.resize(big, (w, h), interpolation=cv2.INTER_AREA).astype(np.float32) / 255.0


def _soft(mask: np.ndarray, sigma: float) -> np.ndarray:
    """A Gaussian blur of a wide reach, done on a smaller copy (a shadow has no fine detail)."""
    f = int(max(1, sigma // 3))
    if f == 1:
        return cv2.GaussianBlur(mask, (0, 0), sigma)
    h, w = mask.shape[:2]
    small = cv2.resize(mask, (max(1, w // f), max(1, h // f)), interpolation=cv2.INTER_AREA)
    return cv2.resize(cv2.GaussianBlur(small, (0, 0), sigma / f), (w, h), interpolation=cv2.INTER_LINEAR)


def _to_linear(srgb: np.ndarray) -> np.ndarray:
    return np.power(np.clip(srgb / 255.0, 0, 1), 2.2).astype(np.float32)


def _to_srgb(linear: np.ndarray) -> np.ndarray:
    return 255.0 * np.power(np.clip(linear, 0, 1), 1 / 2.2)


def _hand_shadow(
    shape: tuple[int, int], at: tuple[float, float], size: float, rng: np.random.Generator
) -> np.ndarray:
    """A hand and forearm's shadow (0..1), soft-edged, the arm running off the frame."""
    h, w = shape
    img = np.zeros((h, w), np.uint8)
    a = rng.uniform(0, 2 * np.pi)
    d = np.array([np.cos(a), np.sin(a)])  # from the palm towards the fingers
    cx, cy = at
    palm = (int(cx), int(cy))
    cv2.ellipse(img, palm, (int(0.5 * size), int(0.42 * size)), np.degrees(a), 0, 360, 255, -1)
    for k, off in enumerate((-0.3, -0.1, 0.1, 0.3)):
        side = np.array([-d[1], d[0]]) * off * size
        length = size * (0.55 + 0.15 * (k in (1, 2)))
        tip = np.array([cx, cy]) + side + d * length
        base = np.array([cx, cy]) + side + d * 0.3 * size
        cv2.line(img, tuple(int(v) for v in base), tuple(int(v) for v in tip), 255, max(2, int(0.16 * size)))
    elbow = np.array([cx, cy]) - d * 4 * max(w, h)
    cv2.line(img, palm, tuple(int(v) for v in elbow), 255, int(0.7 * size))
    blur = rng.uniform(0.05, 0.25) * size
    return _soft(img.astype(np.float32) / 255.0, blur)


def _defocus(img: np.ndarray, radius: float) -> np.ndarray:
    if radius < 0.3:
        return img
    r = int(np.ceil(radius))
    k = np.zeros((2 * r + 1, 2 * r + 1), np.float32)
    cv2.circle(k, (r * 8, r * 8), int(radius * 8), 1.0, -1, cv2.LINE_AA, 3)
    return cv2.filter2D(img, -1, k / k.sum(), borderType=cv2.BORDER_REFLECT)


def _motion(img: np.ndarray, length: float, angle: float) -> np.ndarray:
    if length < 1:
        return img
    n = int(np.ceil(length)) | 1
    k = np.zeros((n, n), np.float32)
    c = n // 2
    dx, dy = np.cos(np.radians(angle)) * length / 2, np.sin(np.radians(angle)) * length / 2
    cv2.line(
        k,
        (round((c - dx) * 8), round((c - dy) * 8)),
        (round((c + dx) * 8), round((c + dy) * 8)),
        1.0,
        1,
        cv2.LINE_AA,
        3,
    )
    return cv2.filter2D(img, -1, k / k.sum(), borderType=cv2.BORDER_REFLECT)


# Scenes --------------------------------------------------------------------------------------------

KINDS = ("single", "pile", "pair")
SIZES = ("small", "typical", "big")


@dataclass(frozen=True)
class Scene:
    image: np.ndarray  # BGR uint8
    code: str  # the top card
    corners: np.ndarray  # 4 x 2: the top card's corners in the image, its upright index's first, clockwise
    conditions: frozenset[str]  # what the scene has: see `scene`
    width: float  # the top card's width in the image, px (the mean of its two short sides)
    tilt: float  # degrees


@dataclass(frozen=True)
class Look:
    """What a scene is made of; `scene` draws the rest at random."""

    kind: str = "pile"
    size: str = "typical"
    table: str | None = None  # None: any
    max_tilt: float = 25.0
    effects: bool = True  # hand and lamp shadows, glare, blur, white balance: False for calibration photos


def card_width_for(size: str, frame: tuple[int, int], rng: np.random.Generator) -> float:
    if size == "small":
        return float(rng.uniform(100, 170))
    if size == "big":
        return float(rng.uniform(0.52, 0.7) * frame[0])
    return float(rng.uniform(170, 300))


def scene(
    deck: str, top: str, rng: np.random.Generator, look: Look = Look(), under: list[str] | None = None
) -> Scene:
    """A frame of a pile with `top` on top, from `deck`; cards under it from `under` (default:
    the deck's other suited cards). Conditions named in the result: kind (single, pile, pair),
    size (small, typical, big), table, tilt>15, glare, hand shadow, lamp shadow, blur."""
    frame = PHONE if look.size == "big" else FRAME
    w, h = frame
    width = card_width_for(look.size, frame, rng)
    tilt = float(rng.uniform(0, look.max_tilt))
    m = tilt_homography(frame, tilt, float(rng.uniform(0, 360)), float(rng.uniform(0.8, 1.4) * max(w, h)))
    table = look.table or TABLES[int(rng.integers(len(TABLES)))]
    conditions = {look.kind, look.size, table}
    if tilt > 15:
        conditions.add("tilt>15")
    # The table plane: a canvas round the frame, wide enough for the tilt's view of it.
    margin = max(w, h) // 4
    to_canvas = np.array([[1, 0, margin], [0, 1, margin], [0, 0, 1]], np.float64)
    # Drawn at half size (its features are larger than a pixel), the cloth's fine grain added after.
    half = table_texture(table, ((h + 2 * margin) // 2, (w + 2 * margin) // 2), rng)
    plane_to_frame = m @ np.linalg.inv(to_canvas)
    to_half = np.array([[0.5, 0, 0], [0, 0.5, 0], [0, 0, 1]]) @ np.linalg.inv(plane_to_frame)
    flags = cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP
    table_img = cv2.warpPerspective(half, to_half, frame, flags=flags, borderMode=cv2.BORDER_REFLECT)
    grain = rng.standard_normal((h, w), np.float32) * (0.04 if table in ("felt", "dark") else 0.015)
    img = _to_linear(table_img * (1 + grain)[..., None])
    glossy = np.zeros((h, w), np.float32)  # where cards lie: glare shows on their gloss

    pool = [c for c in (under or english_codes(deck)) if c != top]
    n = {"single": 1, "pair": 2}.get(look.kind, int(rng.integers(2, 9 if look.size != "big" else 4)))
    codes = [pool[i] for i in rng.choice(len(pool), size=n - 1, replace=False)] + [top]
    # The lamp: where it is (the shadows fall away from it) and how high.
    lamp = np.array([rng.uniform(-0.5, 1.5) * w, rng.uniform(-0.5, 1.5) * h])
    shadow_dir = np.array([w / 2, h / 2]) - lamp
    shadow_dir /= np.linalg.norm(shadow_dir) + 1e-6
    shadow_len = rng.uniform(0.01, 0.04) * width
    corners = np.zeros((4, 2))
    centre, below_angle = np.array([w / 2, h / 2]), 0.0  # the card laid last, for a pair's top card
    for i, code in enumerate(codes):
        face = card_face(deck, code, width)
        fh, fw = face.shape[:2]
        top_card = i == n - 1
        for _ in range(50):  # the top card wholly in the frame (cards under it may run off)
            if look.kind == "pair" and top_card:
                a = rng.uniform(0, 2 * np.pi)
                shift = rng.uniform(0.3, 0.7) * width
                cx, cy = centre + shift * np.array([np.cos(a), np.sin(a)])
                angle = below_angle + rng.uniform(-30, 30)
            else:
                spread = 0.15 * width if look.kind == "pile" else 0.05 * min(w, h)
                cx, cy = w / 2 + rng.normal(0, spread), h / 2 + rng.normal(0, spread)
                angle = float(rng.uniform(0, 360))
            place = plane_to_frame @ to_canvas @ _card_to_plane(face.shape, cx, cy, angle)
            quad = _apply(place, np.array([[0, 0], [fw, 0], [fw, fh], [0, fh]], np.float64))
            if not top_card or ((quad.min(axis=0) >= 2).all() and (quad < [w - 2, h - 2]).all()):
                break
        else:
            raise ValueError(f"no place in a {w}x{h} frame for a card {width:.0f} px wide")
        centre, below_angle = np.array([cx, cy]), angle
        # Drawn only in the card's box (and its shadow's reach), clipped to the frame.
        pad = int(3 * shadow_len) + 4
        x0, y0 = np.maximum(np.floor(quad.min(axis=0)).astype(int) - pad, 0)
        x1, y1 = np.minimum(np.ceil(quad.max(axis=0)).astype(int) + pad, [w, h])
        if x1 <= x0 or y1 <= y0:
            continue
        box = (int(x1 - x0), int(y1 - y0))
        local = np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1]], np.float64) @ place
        alpha = cv2.warpPerspective(rounded_alpha(face.shape, 0.045 * fw), local, box, flags=cv2.INTER_LINEAR)
        colour = cv2.warpPerspective(_to_linear(face.astype(np.float32)), local, box, flags=cv2.INTER_LINEAR)
        # The lamp's shadow of this card on what lies under it: offset away from the lamp, soft.
        offset = np.float32([[1, 0, shadow_dir[0] * shadow_len], [0, 1, shadow_dir[1] * shadow_len]])
        shade = _soft(cv2.warpAffine(alpha, offset, box), max(0.8, 0.6 * shadow_len))
        roi = img[y0:y1, x0:x1]
        roi *= (1 - rng.uniform(0.3, 0.6) * shade)[..., None]
        roi[:] = roi * (1 - alpha[..., None]) + colour * alpha[..., None]
        glossy[y0:y1, x0:x1] = np.maximum(glossy[y0:y1, x0:x1], alpha)
        if top_card:
            corners = quad
    # The lamp's light: falling off from under the lamp.
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    reach = rng.uniform(0.6, 2.0) * max(w, h)
    d2 = ((xx - lamp[0]) ** 2 + (yy - lamp[1]) ** 2) / reach**2
    ambient = rng.uniform(0.15, 0.6)
    light = ambient + (1 - ambient) / (1 + d2)
    img *= (light / light.max())[..., None]
    if look.effects and rng.random() < 0.35:
        conditions.add("hand shadow")
        at = corners.mean(axis=0) + rng.normal(0, 0.6 * width, 2)
        img *= (
            1 - rng.uniform(0.3, 0.65) * _hand_shadow((h, w), tuple(at), rng.uniform(0.6, 1.1) * width, rng)
        )[..., None]
    if look.effects and rng.random() < 0.2:
        conditions.add("lamp shadow")
        bar = np.zeros((h, w), np.float32)
        p0 = rng.uniform(0, 1, 2) * [w, h]
        a = rng.uniform(0, np.pi)
        d = np.array([np.cos(a), np.sin(a)]) * 2 * max(w, h)
        cv2.line(
            bar,
            tuple(int(v) for v in p0 - d),
            tuple(int(v) for v in p0 + d),
            1.0,
            int(rng.uniform(0.1, 0.3) * width),
        )
        img *= (1 - rng.uniform(0.2, 0.5) * _soft(bar, 0.15 * width))[..., None]
    if look.effects and rng.random() < 0.4:
        # A hotspot: the lamp's reflection on the cards' gloss, somewhere over the pile.
        spot = corners.mean(axis=0) + rng.normal(0, 0.5 * width, 2)
        r = rng.uniform(0.1, 0.4) * width
        glare = np.exp(-((xx - spot[0]) ** 2 + (yy - spot[1]) ** 2) / (2 * r * r)) * rng.uniform(0.4, 1.5)
        glare *= 0.25 + 0.75 * glossy
        img += glare[..., None]
        inside = np.zeros((h, w), np.uint8)
        cv2.fillConvexPoly(inside, np.round(corners).astype(np.int32), 1)
        if glare[inside > 0].max(initial=0) > 0.3:
            conditions.add("glare")
    if look.effects:
        # White balance: a lamp warmer or cooler than the camera assumed, and a green-magenta tint.
        warm = rng.uniform(-0.25, 0.25)
        gains = np.array([1 - warm, 1 + rng.uniform(-0.06, 0.06), 1 + warm], np.float32)  # B, G, R
        img *= gains
        radius = rng.uniform(0, 2.5) * (1 if look.size != "big" else 2)
        img = _defocus(img, radius)
        if rng.random() < 0.25:
            img = _motion(img, rng.uniform(1, 6), rng.uniform(0, 180))
        if radius > 1.5:
            conditions.add("blur")
    # Exposure: the brightest part of the scene near full scale (a little clipping at times).
    img *= rng.uniform(0.85, 1.1) / max(float(np.percentile(img[::4, ::4], 99.5)), 1e-3)
    # The sensor: shot noise (its spread the root of the light) and read noise.
    full_well = rng.uniform(600, 5000) if look.effects else 8000.0
    read = rng.uniform(0.001, 0.01)
    img = img + rng.standard_normal(img.shape, np.float32) * np.sqrt(
        np.clip(img, 0, None) / full_well + read**2
    )
    out = np.clip(_to_srgb(img) + 0.5, 0, 255).astype(np.uint8)
    quality = int(rng.integers(60, 96)) if look.effects else 92
    ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, quality])
    assert ok
    image = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    side = (np.linalg.norm(corners[1] - corners[0]) + np.linalg.norm(corners[2] - corners[3])) / 2
    return Scene(image, top, corners, frozenset(conditions), float(side), tilt)


def calibration_photo(deck: str, code: str, rng: np.random.Generator) -> Scene:
    """One card alone on a plain table, held square-ish under the camera: the photos
    `referee calibrate deck --images DIR` takes (one per card, named by its code)."""
    table = ("felt", "wood", "dark")[int(rng.integers(3))]
    look = Look(kind="single", size="typical", table=table, max_tilt=8.0, effects=False)
    return scene(deck, code, rng, look)


# Watch sequences -----------------------------------------------------------------------------------

SEAT_SIDES = {2: ("bottom", "top"), 3: ("bottom", "left", "top"), 4: ("bottom", "left", "top", "right")}
_OUT = {
    "bottom": (0.0, 1.0),
    "top": (0.0, -1.0),
    "left": (-1.0, 0.0),
    "right": (1.0, 0.0),
}  # towards the seat
_SRGB_LUT = (255.0 * np.power(np.linspace(0, 1, 4096), 1 / 2.2) + 0.5).astype(np.uint8)


@dataclass(frozen=True)
class Lay:
    rest: int  # the first frame with the card in place and the hand gone
    code: str
    seat: int


@dataclass(frozen=True)
class Sequence:
    """A clip of cards laid one after another by hands from the seats' sides. `frames()` draws the
    frames one at a time (a 52-card clip is about 1600 frames: too many to keep)."""

    frames: object  # () -> Iterator[np.ndarray], BGR uint8
    lays: list[Lay]  # each lay's rest, known once `frames()` has drawn it
    sides: dict[str, int]  # frame edge -> seat, for the watcher
    count: int  # frames in all
    table: str


def lay_sequence(
    deck: str, codes: list[str], seats: int, rng: np.random.Generator, size: tuple[int, int] = FRAME
) -> Sequence:
    """`codes` laid in turn by `seats` players (2 to 4, one frame edge each) onto a pile, at 30 fps:
    each hand carries its card in over 7-10 frames, lets go, withdraws over 5-7, and the pile then
    lies still for 0.4-0.8 s. One lamp, camera and table for the whole clip; the sensor's noise
    differs in every frame. Cards are 150-230 px wide at 1280x720, in proportion at other sizes."""
    w, h = size
    sides = SEAT_SIDES[seats]
    m = tilt_homography(size, float(rng.uniform(0, 15)), float(rng.uniform(0, 360)), 1.1 * w)
    table = TABLES[int(rng.integers(len(TABLES)))]
    width = float(rng.uniform(150, 230)) * w / FRAME[0]
    length = width * ASPECT
    margin = w // 4
    to_canvas = np.array([[1, 0, margin], [0, 1, margin], [0, 0, 1]], np.float64)
    half = table_texture(table, ((h + 2 * margin) // 2, (w + 2 * margin) // 2), rng)
    to_half = np.array([[0.5, 0, 0], [0, 0.5, 0], [0, 0, 1]]) @ to_canvas @ np.linalg.inv(m)
    flags = cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP
    base = _to_linear(cv2.warpPerspective(half, to_half, size, flags=flags, borderMode=cv2.BORDER_REFLECT))
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    lamp = np.array([rng.uniform(0, 1) * w, rng.uniform(-0.3, 0.3) * h])
    d2 = ((xx - lamp[0]) ** 2 + (yy - lamp[1]) ** 2) / (rng.uniform(0.8, 2.0) * w) ** 2
    ambient = rng.uniform(0.25, 0.6)
    light = ambient + (1 - ambient) / (1 + d2)
    warm = rng.uniform(-0.2, 0.2)
    gains = np.array([1 - warm, 1 + rng.uniform(-0.05, 0.05), 1 + warm], np.float32)
    camera = (light / light.max())[..., None] * gains  # one multiplication per frame
    exposure = rng.uniform(0.85, 1.0) / max(float(np.percentile((base * camera)[::4, ::4], 99.5)), 1e-3)
    exposure = min(exposure, 1.6)  # a dark table is not lifted to white
    radius = float(rng.uniform(0, 1.5))
    full_well, read = rng.uniform(1000, 5000), rng.uniform(0.001, 0.006)
    quality = int(rng.integers(70, 93))
    shadow_dir = np.array([w / 2, h / 2]) - lamp
    shadow_dir /= np.linalg.norm(shadow_dir) + 1e-6
    skins = [
        np.array(c, np.float32) for c in ((120, 160, 220), (90, 120, 170), (60, 80, 120), (140, 170, 210))
    ]
    sleeves = [np.array(c, np.float32) for c in ((60, 40, 30), (40, 40, 140), (30, 90, 30), (170, 170, 170))]
    seat_look = [(skins[int(rng.integers(4))], sleeves[int(rng.integers(4))]) for _ in range(seats)]

    plan = []
    count = 20  # still frames first: the watcher learns the empty table
    lays: list[Lay] = []  # filled in as the frames are drawn: a rest is where the hand has gone
    for k, code in enumerate(codes):
        seat = k % seats
        out = np.array(_OUT[sides[seat]])
        rest = (w / 2 + rng.normal(0, 0.12 * width), h / 2 + rng.normal(0, 0.12 * width))
        # The card lies along its seat's way, turned a little.
        angle = float(np.degrees(np.arctan2(out[0], out[1])) * -1 + rng.normal(0, 20))
        carry, withdraw, still = int(rng.integers(7, 11)), int(rng.integers(5, 8)), int(rng.integers(12, 25))
        plan.append((code, seat, rest, angle, carry, withdraw, still, rng.integers(1 << 31)))
        count += carry + withdraw + still

    def shoot(img: np.ndarray, noise: np.random.Generator) -> np.ndarray:
        out_img = _defocus(img * camera, radius) * exposure
        out_img += noise.standard_normal(out_img.shape, np.float32) * np.sqrt(
            np.clip(out_img, 0, None) / full_well + read**2
        )
        coded = _SRGB_LUT[np.clip(out_img * 4095, 0, 4095).astype(np.uint16)]
        ok, buf = cv2.imencode(".jpg", coded, [cv2.IMWRITE_JPEG_QUALITY, quality])
        assert ok
        return cv2.imdecode(buf, cv2.IMREAD_COLOR)

    def place_card(
        img: np.ndarray, face: np.ndarray, alpha_src: np.ndarray, cx: float, cy: float, angle: float
    ) -> np.ndarray:
        place = m @ _card_to_plane(face.shape, cx, cy, angle)
        fh, fw = face.shape[:2]
        quad = _apply(place, np.array([[0, 0], [fw, 0], [fw, fh], [0, fh]], np.float64))
        pad = int(0.05 * width) + 4
        x0, y0 = np.maximum(np.floor(quad.min(axis=0)).astype(int) - pad, 0)
        x1, y1 = np.minimum(np.ceil(quad.max(axis=0)).astype(int) + pad, [w, h])
        if x1 <= x0 or y1 <= y0:
            return quad
        box = (int(x1 - x0), int(y1 - y0))
        local = np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1]], np.float64) @ place
        alpha = cv2.warpPerspective(alpha_src, local, box, flags=cv2.INTER_LINEAR)
        colour = cv2.warpPerspective(face, local, box, flags=cv2.INTER_LINEAR)
        s = 0.02 * width
        shade = _soft(
            cv2.warpAffine(alpha, np.float32([[1, 0, shadow_dir[0] * s], [0, 1, shadow_dir[1] * s]]), box), s
        )
        roi = img[y0:y1, x0:x1]
        roi *= (1 - 0.45 * shade)[..., None]
        roi[:] = roi * (1 - alpha[..., None]) + colour * alpha[..., None]
        return quad

    def draw_hand(img: np.ndarray, at: np.ndarray, out: np.ndarray, seat: int) -> bool:
        skin, sleeve = seat_look[seat]
        mask = np.zeros((h, w), np.uint8)
        arm = np.zeros((h, w), np.uint8)
        far = at + out * 3 * max(w, h)
        wrist = at + out * 0.45 * width
        cv2.line(
            arm,
            tuple(int(v) for v in wrist + out * 0.6 * width),
            tuple(int(v) for v in far),
            255,
            int(0.7 * width),
        )
        cv2.ellipse(
            mask,
            tuple(int(v) for v in at),
            (int(0.42 * width), int(0.32 * width)),
            float(np.degrees(np.arctan2(out[1], out[0]))),
            0,
            360,
            255,
            -1,
        )
        cv2.line(
            mask,
            tuple(int(v) for v in at),
            tuple(int(v) for v in wrist + out * 0.7 * width),
            255,
            int(0.55 * width),
        )
        side = np.array([-out[1], out[0]])
        for off in (-0.24, -0.08, 0.08, 0.24):
            base = at + side * off * width
            cv2.line(
                mask,
                tuple(int(v) for v in base),
                tuple(int(v) for v in base - out * 0.45 * width),
                255,
                max(3, int(0.12 * width)),
            )
        both = np.maximum(mask, arm).astype(np.float32) / 255.0
        shift = np.float32([[1, 0, shadow_dir[0] * 0.25 * width], [0, 1, shadow_dir[1] * 0.25 * width]])
        shadow = _soft(cv2.warpAffine(both, shift, (w, h)), 0.15 * width)
        img *= (1 - 0.5 * shadow)[..., None]
        for part, colour in ((mask, skin), (arm, sleeve)):
            a = cv2.GaussianBlur(part.astype(np.float32) / 255.0, (0, 0), 1.0)[..., None]
            img[:] = img * (1 - a) + _to_linear(colour) * a
        # In sight: a few pixels of the hand, or a shadow a camera can tell from the noise.
        return bool(np.count_nonzero(both > 0.5) >= 4 or shadow.max() > 0.08)

    def frames():
        noise = np.random.default_rng(int(rng.integers(1 << 31)))
        pile = base.copy()
        index = 0
        for _ in range(20):
            yield shoot(pile, noise)
            index += 1
        for code, seat, rest, angle, carry, withdraw, still, _ in plan:
            face_u8 = card_face(deck, code, width)
            face = _to_linear(face_u8.astype(np.float32))
            alpha_src = rounded_alpha(face.shape, 0.045 * face.shape[1])
            out = np.array(_OUT[sides[seat]])
            start = np.array(rest) + out * (0.5 * max(w, h) + length)
            for f in range(carry):
                t = 1 - (1 - (f + 1) / carry) ** 2  # slowing as it comes down
                c = start + (np.array(rest) - start) * t
                img = pile.copy()
                quad = place_card(img, face, alpha_src, c[0], c[1], angle + (1 - t) * 25)
                draw_hand(img, quad.mean(axis=0) + out * 0.45 * length, out, seat)
                if f == carry - 1:
                    place_card(pile, face, alpha_src, rest[0], rest[1], angle)  # let go: it lies there now
                    rest_at = quad.mean(axis=0)
                yield shoot(img, noise)
                index += 1
            rested = False
            for f in range(withdraw):
                img = pile.copy()
                leave = 0.45 * length + (f + 1) / withdraw * (0.5 * max(w, h) + length)
                if not draw_hand(img, rest_at + out * leave, out, seat) and not rested:
                    lays.append(Lay(index, code, seat))  # the first frame with the hand gone
                    rested = True
                yield shoot(img, noise)
                index += 1
            if not rested:
                lays.append(Lay(index, code, seat))
            for _ in range(still):
                yield shoot(pile, noise)
                index += 1

    return Sequence(frames, lays, {side: seat for seat, side in enumerate(sides)}, count, table)
