"""The card recogniser: find the top card of the pile, warp it upright, read its corner index.

Pure functions over BGR uint8 images. The steps, each cheap enough for a Pi frame loop:

1. `find_top_card`: the card's outline as a quadrilateral. With a change mask (the new
   card) its largest blob's rotated rectangle; otherwise rectangles from two sources,
   edges (Canny on the blurred L channel, which works on light tables) and paper
   (bright, low-saturation pixels far from the table colour), scored by how card-like
   they are and how much of their outline has edges under it: on a pile only the top
   card's outline is whole.
2. `warp_card`: a perspective warp to a 200 x 280 portrait card.
3. The index in the top-left corner, and the bottom-right one turned round: Otsu on the
   crop, the blobs grouped in rows (rank above, suit pip below), each normalised to a
   fixed box and matched by correlation against templates; ink colour (red or black)
   weighs the suit.

The built-in templates are drawn at first use from the renderer's pips and OpenCV's
Hershey fonts, so nothing is downloaded. A `Profile` learns a deck's own glyphs (and a
small picture of each card) from one frame per card.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from .cards import JOKER_CODE, RANKS, SUITS, Card, parse_card
from .render import ASPECT, STYLES, draw_card, draw_pip

WARP_SIZE = (200, 280)
GLYPH = (20, 28)  # normalised glyph box (w, h)
THUMB = (32, 44)  # whole-card thumbnail for a profile
MIN_WIDTH, MAX_WIDTH = 90, 480  # card widths accepted, a margin round 120..400 px
WORK_WIDTH = 640  # frames wider than this are searched at this width
SEEN_MARGIN = 0.08  # a seen card gives way to an unseen runner-up this close
PROFILE_VERSION = 1
_REDS = ("H", "D")


class ProfileError(ValueError):
    """A calibration profile that cannot be read: missing, corrupt, or another version."""


@dataclass(frozen=True)
class Reading:
    card: Card | None
    confidence: float  # 0..1
    quad: np.ndarray | None = None  # 4 x 2 float corners in image coordinates
    ranked: tuple[tuple[str, float], ...] = field(default=())


# Finding the card ---------------------------------------------------------------------------


def _order_quad(pts: np.ndarray) -> np.ndarray:
    """Corners clockwise on screen (y down), starting so that the first side is a short one."""
    pts = np.asarray(pts, np.float32).reshape(4, 2)
    c = pts.mean(axis=0)
    pts = pts[np.argsort(np.arctan2(pts[:, 1] - c[1], pts[:, 0] - c[0]))]
    if np.linalg.norm(pts[1] - pts[0]) > np.linalg.norm(pts[2] - pts[1]):
        pts = np.roll(pts, -1, axis=0)
    # Of the two short-side starts (0 or 180 degrees) take the one nearer the top-left: stable.
    if pts[0].sum() > pts[2].sum():
        pts = np.roll(pts, 2, axis=0)
    return pts


def _size_ok(w: float, h: float, scale: float) -> bool:
    short, long_ = min(w, h) / scale, max(w, h) / scale
    return MIN_WIDTH <= short <= MAX_WIDTH and long_ > 0 and 0.58 <= short / long_ <= 0.86


def _from_mask(mask: np.ndarray) -> np.ndarray | None:
    n, labels, stats, _ = cv2.connectedComponentsWithStats((mask > 127).astype(np.uint8), connectivity=8)
    if n < 2:
        return None
    k = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    ys, xs = np.nonzero(labels == k)
    rect = cv2.minAreaRect(np.stack([xs, ys], axis=1).astype(np.float32))
    if not _size_ok(*rect[1], 1.0):
        return None
    return _order_quad(cv2.boxPoints(rect))


def _edge_support(near: np.ndarray, box: np.ndarray) -> float:
    """The share of the rectangle's outline (corners left out: they are rounded) near an edge."""
    t = np.linspace(0.12, 0.88, 24)[:, None]
    p = np.concatenate([box[i] + t * (box[(i + 1) % 4] - box[i]) for i in range(4)])
    p = np.round(p).astype(int)
    h, w = near.shape
    inside = (p[:, 0] >= 0) & (p[:, 0] < w) & (p[:, 1] >= 0) & (p[:, 1] < h)
    if not inside.any():
        return 0.0
    return float(np.count_nonzero(near[p[inside, 1], p[inside, 0]])) / len(p)


def _candidates(
    binary: np.ndarray, scale: float, mode: int, grow: float = 0.0
) -> list[tuple[np.ndarray, float, float]]:
    """Rotated rectangles of card size round the contours of `binary` (grown by `grow` px), with
    their solidity."""
    out = []
    contours, _ = cv2.findContours(binary, mode, cv2.CHAIN_APPROX_SIMPLE)
    min_area = (MIN_WIDTH * scale) ** 2 * ASPECT * 0.7
    for cnt in contours:
        area = cv2.contourArea(cnt)
        if area < min_area:
            continue
        centre, (rw, rh), angle = cv2.minAreaRect(cnt)
        area *= (rw + 2 * grow) * (rh + 2 * grow) / max(1.0, rw * rh)
        rw, rh = rw + 2 * grow, rh + 2 * grow
        rect = (centre, (rw, rh), angle)
        if not _size_ok(rw, rh, scale):
            continue
        solidity = area / max(1.0, rw * rh)
        if solidity < 0.8:
            continue
        out.append((cv2.boxPoints(rect), solidity, rw * rh))
    return out


def find_top_card(image: np.ndarray, hint_mask: np.ndarray | None = None) -> np.ndarray | None:
    """The top card's corners (4 x 2 float32, clockwise from a short side), or None."""
    if image is None or image.ndim < 2 or min(image.shape[:2]) < 40:
        return None
    if hint_mask is not None and hint_mask.shape[:2] == image.shape[:2]:
        # The change since the last rest is where the new card lies: search only round it
        # (cheaper, and the outline there is exact), and trust the mask's box only if need be.
        points = cv2.findNonZero((hint_mask > 127).astype(np.uint8))
        if points is None:
            return None
        x, y, bw, bh = cv2.boundingRect(points)
        pad = max(bw, bh) // 4
        x0, y0 = max(x - pad, 0), max(y - pad, 0)
        x1, y1 = min(x + bw + pad, image.shape[1]), min(y + bh + pad, image.shape[0])
        quad = find_top_card(image[y0:y1, x0:x1])
        if quad is not None:
            return quad + np.array([x0, y0], np.float32)
        return _from_mask(hint_mask)
    w = image.shape[1]
    scale = min(1.0, WORK_WIDTH / w)  # crop the work: search a smaller copy
    small = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA) if scale < 1 else image
    if small.ndim == 2:
        small = cv2.cvtColor(small, cv2.COLOR_GRAY2BGR)
    lab = cv2.cvtColor(small, cv2.COLOR_BGR2Lab)
    light = cv2.GaussianBlur(lab[:, :, 0], (5, 5), 0)
    if int(light.max()) - int(light.min()) < 20:
        return None  # a flat frame: black, burnt out, or a bare table
    # Edges: thresholds from the gradient's own spread, so faint light-on-light outlines count.
    gx = cv2.Sobel(light, cv2.CV_16S, 1, 0)
    gy = cv2.Sobel(light, cv2.CV_16S, 0, 1)
    mag = cv2.add(cv2.convertScaleAbs(gx[::4, ::4]), cv2.convertScaleAbs(gy[::4, ::4]))  # a sample will do
    hi = float(np.clip(np.partition(mag.ravel(), int(mag.size * 0.9))[int(mag.size * 0.9)], 40, 300))
    edges = cv2.Canny(gx, gy, hi * 0.4, hi, L2gradient=False)
    near = cv2.dilate(edges, np.ones((5, 5), np.uint8))  # within 2 px of an edge
    # Two closings: a thin one keeps glyphs near the border apart from the outline, a thick one
    # bridges gaps in it (glare, a card's edge on a card of the same colour); inner contours
    # shrink by the dilation, so their rectangles grow back by it.
    cands = []
    for k in (3, 7):
        closed = cv2.dilate(edges, np.ones((k, k), np.uint8))
        cands += _candidates(closed, scale, cv2.RETR_LIST, grow=(k - 1) / 2)
    # Paper: far from the table colour (the border's median) and not saturated.
    border = np.concatenate([lab[0], lab[-1], lab[:, 0], lab[:, -1]])
    table = np.median(border, axis=0)
    diff = cv2.absdiff(lab, (*(float(v) for v in table), 0.0))
    diff = cv2.transform(diff, np.ones((1, 3), np.float32))  # the sum over channels, saturating
    paper = cv2.bitwise_and(
        cv2.threshold(diff, 25, 255, cv2.THRESH_BINARY)[1],
        cv2.threshold(lab[:, :, 0], 100, 255, cv2.THRESH_BINARY)[1],
    )
    paper = cv2.morphologyEx(paper, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    cands += _candidates(paper, scale, cv2.RETR_EXTERNAL)
    # Paper cut along the edges: overlapping cards come apart along the top card's outline.
    cut = cv2.bitwise_and(paper, cv2.bitwise_not(closed))
    cands += _candidates(cut, scale, cv2.RETR_EXTERNAL, grow=3.0)
    scored = []
    for box, solidity, area in cands:
        support = _edge_support(near, box)
        if support > 0.5:
            scored.append((support * 2 + solidity, area, box))
    if not scored:
        return None
    scored.sort(key=lambda t: -t[0])
    _, area, best = scored[0]
    # A frame printed on the card is card-shaped too: a good rectangle round the best one wins.
    for s2, a2, box in scored[1:]:
        centre = best.mean(axis=0)
        inside = cv2.pointPolygonTest(box.reshape(-1, 1, 2), (float(centre[0]), float(centre[1])), False)
        if a2 > 1.15 * area and s2 > 2.4 and inside > 0:
            area, best = a2, box
    return _order_quad(best / scale)


def warp_card(image: np.ndarray, quad: np.ndarray, size: tuple[int, int] = WARP_SIZE) -> np.ndarray:
    """The card upright (long side vertical), `size` = (w, h); 0 or 180 degrees, either may come."""
    quad = _order_quad(quad)
    w, h = size
    dst = np.array([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]], np.float32)
    m = cv2.getPerspectiveTransform(quad, dst)
    return cv2.warpPerspective(image, m, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


# Glyphs -------------------------------------------------------------------------------------


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


def _thumb(warped: np.ndarray) -> np.ndarray:
    g = cv2.resize(cv2.cvtColor(warped, cv2.COLOR_BGR2GRAY), THUMB, interpolation=cv2.INTER_AREA)
    v = g.astype(np.float32).ravel()
    v -= v.mean()
    return v / max(1e-6, float(np.linalg.norm(v)))


# Calibration --------------------------------------------------------------------------------


class Profile:
    """One deck's own glyphs and card thumbnails, learnt from one frame per card."""

    def __init__(
        self,
        ranks: tuple[np.ndarray, np.ndarray, np.ndarray],
        suits: tuple[np.ndarray, np.ndarray, np.ndarray],
        thumbs: np.ndarray,
        thumb_codes: np.ndarray,
    ) -> None:
        self.ranks, self.suits = ranks, suits
        self.thumbs, self.thumb_codes = thumbs, thumb_codes

    @classmethod
    def learn(cls, images: dict[str, np.ndarray]) -> Profile:
        """From frames of each card alone on the table, keyed by code; cards not found are skipped."""
        ranks, suits = _Bank(), _Bank()
        thumbs, codes = [], []
        for code, image in images.items():
            card = parse_card(code)
            quad = find_top_card(image)
            if quad is None:
                continue
            warped = warp_card(image, quad)
            for view in (warped, warped[::-1, ::-1]):
                thumbs.append(_thumb(view))
                codes.append(card.code)
                parts = _index_parts(view) if not card.is_joker else None
                if parts is not None:
                    ranks.add(parts[0], RANKS[card.rank - 1])
                    suits.add(parts[1], card.suit)
        return cls(
            ranks.freeze(),
            suits.freeze(),
            np.array(thumbs, np.float32).reshape(len(thumbs), -1),
            np.array(codes),
        )

    def __len__(self) -> int:
        return len(set(self.thumb_codes.tolist()))

    def save(self, path: str | Path) -> None:
        np.savez_compressed(
            path,
            version=np.array(PROFILE_VERSION),
            rank_vectors=self.ranks[0],
            rank_aspects=self.ranks[1],
            rank_labels=self.ranks[2],
            suit_vectors=self.suits[0],
            suit_aspects=self.suits[1],
            suit_labels=self.suits[2],
            thumbs=self.thumbs,
            thumb_codes=self.thumb_codes,
        )

    @classmethod
    def load(cls, path: str | Path) -> Profile:
        try:
            with np.load(path, allow_pickle=False) as data:
                version = int(data["version"])
                if version != PROFILE_VERSION:
                    raise ProfileError(f"{path}: card profile version {version}, expected {PROFILE_VERSION}")
                return cls(
                    (data["rank_vectors"], data["rank_aspects"], data["rank_labels"]),
                    (data["suit_vectors"], data["suit_aspects"], data["suit_labels"]),
                    data["thumbs"],
                    data["thumb_codes"],
                )
        except ProfileError:
            raise
        except Exception as exc:  # zip, key or value errors all mean one thing here
            raise ProfileError(f"{path}: not a card profile ({type(exc).__name__})") from None


# The recogniser -----------------------------------------------------------------------------


class Recogniser:
    """Reads the top card of a pile; a `Profile` makes it read that deck better."""

    def __init__(self, profile: Profile | None = None) -> None:
        self.profile = profile
        self._banks = [_builtin()]
        if profile is not None and len(profile.ranks[0]):
            self._banks.insert(0, (profile.ranks, profile.suits))

    def read_warped(self, warped: np.ndarray) -> dict[str, float]:
        """Scores per code for an upright card, both index corners and (with a profile) its picture."""
        scores: dict[str, float] = {}
        for view in (warped, warped[::-1, ::-1]):
            got = _read_corner(view, self._banks)
            if got:
                for k, v in got.items():
                    scores[k] = max(scores.get(k, -9.0), v)
        p = self.profile
        if p is not None and len(p.thumb_codes):
            sim = p.thumbs @ _thumb(warped)
            for code in set(p.thumb_codes.tolist()):
                best = float(sim[p.thumb_codes == code].max())
                scores[code] = scores.get(code, 0.0) + 1.5 * best
        return scores

    def recognise(
        self, image: np.ndarray, hint_mask: np.ndarray | None = None, seen: frozenset[str] = frozenset()
    ) -> Reading:
        try:
            quad = find_top_card(image, hint_mask)
        except cv2.error:
            quad = None
        if quad is None:
            return Reading(None, 0.0)
        scores = self.read_warped(warp_card(image, quad))
        if not scores:
            return Reading(None, 0.05, quad)
        ranked = sorted(scores.items(), key=lambda kv: -kv[1])[:5]
        best, runner = ranked[0], ranked[1] if len(ranked) > 1 else ("", -9.0)
        margin = best[1] - runner[1]
        pick = best
        if best[0] in seen and runner[0] and runner[0] not in seen and margin < SEEN_MARGIN:
            pick = runner
        # Confidence: an absolute fit (two correlations near 1 make 2) times the margin over the next.
        fit = np.clip((pick[1] - 0.6) / 1.2, 0.0, 1.0)
        conf = float(fit * np.clip(0.5 + margin / 0.3, 0.0, 1.0))
        if pick is not best:
            conf *= 0.8
        ranked_out = tuple((c, round(float(s), 4)) for c, s in ranked)
        if pick[1] < 0.6:
            return Reading(None, conf, quad, ranked_out)
        return Reading(parse_card(pick[0]), conf, quad, ranked_out)
