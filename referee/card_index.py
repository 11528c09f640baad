"""The card's corner index: rank glyph and suit pip cut out of an upright card, and scored.

The index in the top-left corner, and the bottom-right one turned round: Otsu on the
crop, the blobs grouped in rows (rank above, suit pip below), each normalised to a fixed
box and matched by correlation against templates; ink colour (red or black) weighs the
suit. The built-in templates are drawn at first use from the renderer's pips and OpenCV's
Hershey fonts, so nothing is downloaded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

import cv2
import numpy as np

from .card_outline import WARP_SIZE
from .cards import JOKER_CODE, RANKS, SUITS, parse_card
from .render import STYLES, draw_card, draw_pip

GLYPH = (20, 28)  # normalised glyph box (w, h)
_REDS = ("H", "D")


def _normalise(binary: np.ndarray) -> np.ndarray | None:
    """A glyph (255 = ink) as a zero-mean unit vector in the GLYPH box, or None if empty."""
    ys, xs = np.nonzero(binary)
    if len(xs) < 4:
        return None
    crop = binary[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
    v = cv2.resize(crop, GLYPH, interpolation=cv2.INTER_AREA).astype(np.float32).ravel()
    v -= v.mean()
    n = float(np.linalg.norm(v))
    return v / n if n > 1e-6 else None


def _aspect(binary: np.ndarray) -> float:
    ys, xs = np.nonzero(binary)
    return (xs.max() - xs.min() + 1) / (ys.max() - ys.min() + 1) if len(xs) else 1.0


@dataclass
class _Bank:
    """Templates by class: vectors (n x d), their aspect ratios, and the class of each."""

    vectors: list[np.ndarray] = field(default_factory=list)
    aspects: list[float] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)

    def add(self, binary: np.ndarray, label: str) -> None:
        v = _normalise(binary)
        if v is not None:
            self.vectors.append(v)
            self.aspects.append(_aspect(binary))
            self.labels.append(label)

    def freeze(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return np.array(self.vectors, np.float32), np.log(np.array(self.aspects)), np.array(self.labels)


def _scores(bank, binary: np.ndarray, classes: tuple[str, ...]) -> dict[str, float]:
    """The best correlation per class, less a penalty for a different aspect ratio."""
    vectors, log_aspects, labels = bank
    v = _normalise(binary)
    if v is None or len(vectors) == 0:
        return dict.fromkeys(classes, -1.0)
    s = vectors @ v - 0.3 * np.abs(log_aspects - np.log(_aspect(binary)))
    out = {}
    for c in classes:
        sel = s[labels == c]
        out[c] = float(sel.max()) if len(sel) else -1.0
    return out


_FONTS = (
    cv2.FONT_HERSHEY_SIMPLEX,
    cv2.FONT_HERSHEY_DUPLEX,
    cv2.FONT_HERSHEY_COMPLEX,
    cv2.FONT_HERSHEY_TRIPLEX,
    cv2.FONT_HERSHEY_COMPLEX_SMALL,
    cv2.FONT_HERSHEY_PLAIN,
)


def _text_glyph(text: str, font: int, thickness: int, height: int) -> np.ndarray:
    (w, h), base = cv2.getTextSize(text, font, 1.0, thickness)
    s = height / max(h, 1)
    (w, h), base = cv2.getTextSize(text, font, s, thickness)
    img = np.zeros((h + base + 2 * thickness + 8, w + 2 * thickness + 8), np.uint8)
    cv2.putText(img, text, (4 + thickness, h + 4), font, s, 255, thickness, cv2.LINE_AA)
    return (img > 110).astype(np.uint8) * 255


@lru_cache(maxsize=1)
def _builtin() -> tuple[tuple, tuple]:
    """Rank and suit templates drawn from Hershey fonts, the renderer's pips and its card styles."""
    ranks, suits = _Bank(), _Bank()
    for font in _FONTS:
        for thickness in (1, 2, 3, 5):
            for height in (22, 44):
                t = max(1, round(thickness * height / 44))
                for r in RANKS:
                    ranks.add(_text_glyph(r, font, t, height), r)
    for s in SUITS:
        for size in (24, 60):
            img = np.zeros((size + 8, size + 8), np.uint8)
            draw_pip(img, s, ((size + 8) / 2, (size + 8) / 2), size, 255)
            suits.add((img > 110).astype(np.uint8) * 255, s)
            suits.add(cv2.dilate((img > 110).astype(np.uint8) * 255, np.ones((3, 3), np.uint8)), s)
    # The renderer's own corners, read back through the same pipeline as a photo would be.
    for style in STYLES.values():
        for r in RANKS:
            for s in ("S", "H"):
                warped = cv2.resize(draw_card(parse_card(r + s), 250, style)[0], WARP_SIZE)
                parts = _index_parts(warped)
                if parts is not None:
                    ranks.add(parts[0], r)
    return ranks.freeze(), suits.freeze()


# Reading the index --------------------------------------------------------------------------

_CORNER = (0.015, 0.24, 0.012, 0.36)  # x0, x1, y0, y1 as parts of the card


_WIDE = (0.34, 0.5)  # x1, y1 of the region searched for a larger index than _CORNER holds


def _corner_crop(warped: np.ndarray) -> np.ndarray:
    """The index corner: the fixed `_CORNER` box, grown to hold the rank and suit when they are larger."""
    h, w = warped.shape[:2]
    x0, x1, y0, y1 = _CORNER
    ix0, iy0 = round(x0 * w), round(y0 * h)
    ix1, iy1 = round(x1 * w), round(y1 * h)
    region = warped[iy0 : round(_WIDE[1] * h), ix0 : round(_WIDE[0] * w)]
    grey = region.min(axis=2) if region.ndim == 3 else region
    if int(grey.max()) - int(grey.min()) >= 40:
        _, ink = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY_INV | cv2.THRESH_OTSU)
        n, _, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
        rh, rw = ink.shape
        # The rank's first glyph: the topmost glyph-sized blob near the left edge.
        first = None
        for k in range(1, n):
            x, y, bw, bh, area = stats[k]
            if (x == 0 and y == 0) or bh < 0.05 * h or bh > 0.2 * h or bw > 0.2 * w or x > 0.1 * w:
                continue
            if area < 0.15 * bw * bh or x + bw >= rw or y + bh >= rh:
                continue
            if first is None or y < stats[first, cv2.CC_STAT_TOP]:
                first = k
        if first is not None:
            x, y, bw, bh, _ = stats[first]
            top, bottom, right = y, y + bh, x + bw
            for k in range(1, n):  # the rest of the rank's row (the 0 of a 10)
                kx, ky, kw, kh, _ = stats[k]
                beside = k != first and right - 2 <= kx < right + 0.3 * bh and kw < bh
                if beside and 0.75 * bh < kh < 1.25 * bh and abs(ky - top) < 0.2 * bh:
                    right = max(right, kx + kw)
            ix1 = max(ix1, min(ix0 + round(right + 0.45 * bh), round(_WIDE[0] * w)))
            iy1 = max(iy1, min(iy0 + round(bottom + 1.35 * bh), round(_WIDE[1] * h)))
    return warped[iy0:iy1, ix0:ix1]


def _index_parts(warped: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, int] | None:
    """Rank glyph, suit pip (each 255 = ink on its own canvas), the ink mask and the row count."""
    crop = _corner_crop(warped)
    grey = crop.min(axis=2) if crop.ndim == 3 else crop  # red ink is dark in its weakest channel
    if int(grey.max()) - int(grey.min()) < 40:
        return None
    _, ink = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY_INV | cv2.THRESH_OTSU)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    ch, cw = ink.shape
    keep = []
    for k in range(1, n):
        x, y, bw, bh, area = stats[k]
        if area < 6 or bh < 3:
            continue
        touches = x == 0 or y == 0 or x + bw >= cw or y + bh >= ch
        if (x == 0 and y == 0) or (x + bw >= cw and y + bh >= ch and (bw > 0.5 * cw or bh > 0.5 * ch)):
            continue  # the table seen past a rounded corner, or a picture's corner
        if touches and (bw <= 3 or bh <= 3 or area < 0.2 * bw * bh or bw > 0.8 * cw or bh > 0.6 * ch):
            continue  # the card's outline or a court frame, not a glyph
        if x + bw >= cw and x > 0.6 * cw:
            continue  # the edge of a picture to the right
        keep.append(k)
    if not keep:
        return None
    # Rows: blobs whose vertical spans overlap belong together (the 1 and 0 of a 10, say).
    keep.sort(key=lambda k: stats[k, cv2.CC_STAT_TOP])
    rows: list[list[int]] = []
    bottom = -1
    for k in keep:
        top, kb = stats[k, cv2.CC_STAT_TOP], stats[k, cv2.CC_STAT_TOP] + stats[k, cv2.CC_STAT_HEIGHT]
        if rows and top < bottom - 1:
            rows[-1].append(k)
            bottom = max(bottom, kb)
        else:
            rows.append([k])
            bottom = kb
    # The rank is the first row that is big enough; tiny specks above are noise.
    big = [r for r in rows if max(stats[k, cv2.CC_STAT_HEIGHT] for k in r) >= 0.06 * ch]
    if len(big) < 2:
        return None
    rank = np.isin(labels, big[0]).astype(np.uint8) * 255
    suit = np.isin(labels, big[1]).astype(np.uint8) * 255
    return rank, suit, ink, len(big)


# Holes (enclosed background) each rank may have: a cheap check that separates 6 from 5, 9 from 8.
_HOLES = {
    "A": (0, 1), "2": (0,), "3": (0,), "4": (0, 1), "5": (0,), "6": (1,), "7": (0,),
    "8": (2,), "9": (1,), "10": (1, 2), "J": (0, 2), "Q": (1, 2), "K": (0, 1),
}  # fmt: skip
# Where a lone hole's centre may lie, as a part of the glyph's height: a 6's is low, a 9's high.
_HOLE_Y = {
    "A": (0.35, 0.65),
    "4": (0.38, 0.64),
    "6": (0.55, 0.8),
    "9": (0.2, 0.42),
    "10": (0.38, 0.6),
    "Q": (0.15, 0.56),
}
HOLE_PENALTY = 0.6


def _holes(binary: np.ndarray) -> list[float]:
    """Enclosed background regions of a glyph bigger than a speck: each one's centre, from 0 (top) to 1."""
    ys, xs = np.nonzero(binary)
    if len(xs) < 4:
        return []
    crop = cv2.copyMakeBorder(binary[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1], 1, 1, 1, 1, 0)
    n, _, stats, cents = cv2.connectedComponentsWithStats((crop == 0).astype(np.uint8), connectivity=4)
    speck = max(3, 0.01 * len(xs))
    h = crop.shape[0] - 2
    return [(cents[k][1] - 1) / h for k in range(2, n) if stats[k, cv2.CC_STAT_AREA] >= speck]


def _redness(crop: np.ndarray, ink: np.ndarray) -> float:
    """How red the ink is, relative to the paper round it: over about 0.15 is red."""
    sel = ink > 0
    if crop.ndim != 3 or sel.sum() < 5 or (~sel).sum() < 5:
        return 0.0
    b, g, r = (crop[..., i].astype(np.float32) for i in range(3))
    paper = [float(np.median(c[~sel])) + 1 for c in (b, g, r)]
    bn, gn, rn = b[sel] / paper[0], g[sel] / paper[1], r[sel] / paper[2]
    return float(np.median(rn - (gn + bn) / 2))


def _read_corner(warped: np.ndarray, banks) -> dict[str, float] | None:
    """Scores for each code from one corner, or None when it holds no index."""
    parts = _index_parts(warped)
    if parts is None:
        return None
    rank, suit, ink, n_rows = parts
    crop = _corner_crop(warped)
    red = _redness(crop, ink) > 0.15
    rank_scores: dict[str, float] = dict.fromkeys(RANKS, -1.0)
    suit_scores: dict[str, float] = dict.fromkeys(SUITS, -1.0)
    for rb, sb in banks:
        for k, v in _scores(rb, rank, RANKS).items():
            rank_scores[k] = max(rank_scores[k], v)
        for k, v in _scores(sb, suit, SUITS).items():
            suit_scores[k] = max(suit_scores[k], v)
    holes = _holes(rank)
    for r in RANKS:
        lo, hi = _HOLE_Y.get(r, (0.0, 1.0))
        if len(holes) not in _HOLES[r] or (len(holes) == 1 and not lo <= holes[0] <= hi):
            rank_scores[r] -= HOLE_PENALTY
    for s in SUITS:  # ink colour is the surest cue to the suit
        if (s in _REDS) != red:
            suit_scores[s] -= 0.5
    out = {r + s: rank_scores[r] + suit_scores[s] for r in RANKS for s in SUITS}
    if n_rows >= 4:  # JOKER written down the corner
        out[JOKER_CODE] = 1.2
    return out
