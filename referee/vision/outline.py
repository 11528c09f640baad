"""The top card of the pile: its outline as a quadrilateral, and the card warped upright.

Pure functions over BGR uint8 images, cheap enough for a Pi frame loop. Two stages:

1. Rough boxes. With a change mask (the watcher's: where the new card appeared) the mask's
   own box, and only if that is not sure, a search of the area round it. Without one, on a
   copy at most WORK_WIDTH wide: contours of edges (Canny on the blurred grey image, which
   works on light tables) and of paper cut along the edges (bright pixels far from the table
   colour: overlapping cards come apart along the top card's outline); and rectangles between
   pairs of long parallel edge lines, or from two square sides meeting at a corner (the top
   card's other sides may lie white on the white cards under it). On a check cloth, whose lines
   come in families of many parallels, only lines with something even along one side (a card's
   margin) are kept.
2. Each side of a rough box is moved onto the card's edge on the full-size image: grey levels
   are sampled on profiles across the side (only those pixels are read), and a line is fitted
   through the steps most profiles share. The fit makes the corners exact whatever the rough
   box was (grown by a shadow and the mask's margin, shrunk to a printed border, cut by glare).
   On a pile only the top card's outline is whole: the share of each side with a step under
   the fitted line, and which of two overlapping cards' outlines runs on across the other,
   pick the card. The cards are one size, set by outlines with a card's even margin inside:
   a bigger box without one is the cloth.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from functools import cache
from typing import NamedTuple

import cv2
import numpy as np

from referee.cards import ASPECT

WARP_SIZE = (200, 280)
MIN_WIDTH, MAX_WIDTH = 90, 480  # card widths accepted, a margin round 120..400 px
ASPECT_RANGE = (0.6, 0.78)  # short / long side of a found card
# ... seen from a camera turned up to 25 degrees off straight down: 0.6-0.74 foreshortened by
# cos 25 = 0.91, and the far side up to a fifth shorter than the near one (see find_top_card)
TILTED_RANGE = (0.55, 0.84)
WORK_WIDTH = 640  # frames wider than this are searched at this width (the sides are refined after)
HINT_WORK = 240  # a hinted crop is searched at most this big
_KEEP = 6  # rough rectangles refined per frame
_CORNERS = 3  # boxes from two sides meeting at a corner refined per frame
_COMPLETE = 3  # ... of which this many, the likeliest, may have a stray side put right
_GREY = np.array([0.114, 0.587, 0.299], np.float32)  # BGR to luma
_WHOLE = 0.45  # the share of a quad's outline with an edge under it that makes a card
_SURE = 0.8  # ... that makes the change mask's card sure: no search round it
_LINES = 0.93  # ... that a quad found from straight sides must have
_SIDE = 0.3  # ... that each side must have
_ALONG = 28  # profiles per side in the last fit
_STEP = 7.0  # grey levels per px that make a step in a profile across a side
# ... on a faint side: this share of its profiles' common step, and at least _FAINT (3 was tried:
# on Debian's OpenCV 4.6 a frame printed on a court card then lost its card round it)
_FAINT, _FAINT_SHARE = 4.0, 0.6
_LENGTH_PLAY = 0.06  # how far a card's long side may be from the length it is known to have
_ASPECT_PLAY = 0.04  # ... and its length for its width from the deck's (a 2 px misfit at 120 px)
_NEAR = np.arange(-2, 3)  # offsets round a side's vote where each profile's own step is looked for
_FAMILY = 9  # parallel lines that make a line one of a check cloth's
_GAP = 6  # px of a straight side missing that the line search joins across
_RIM = 0.85  # the share of a card's margin that is even (see _paper_rim)
_GROWN = 0.85  # the share of a whole outline round a card-shaped frame that makes it the card
# Each corner's next and previous one round the quad (np.roll's results, without its cost).
_NEXT, _PREV = np.array([1, 2, 3, 0]), np.array([3, 0, 1, 2])
_SIDE_INDEX = np.arange(4)[:, None]  # (side, profile) indices into _refine's arrays


@cache
def _along_index(along: int) -> np.ndarray:
    return np.arange(along)[None, :]


@cache
def _spaced(lo: float, hi: float, n: int) -> np.ndarray:
    """np.linspace(lo, hi, n) in float32, made once: it costs ~10 us a call, and the fits that
    call it run several times a frame."""
    out = np.linspace(lo, hi, n, dtype=np.float32)
    out.flags.writeable = False
    return out


def _norms(v: np.ndarray) -> np.ndarray:
    """np.linalg.norm(v, axis=1) of a float array, to the bit, without its overhead."""
    return np.sqrt((v * v).sum(axis=1))


def order_quad(pts: np.ndarray) -> np.ndarray:
    """Corners clockwise on screen (y down), starting so that the first side is a short one."""
    pts = np.asarray(pts, np.float32).reshape(4, 2)
    c = pts.mean(axis=0)
    pts = pts[np.argsort(np.arctan2(pts[:, 1] - c[1], pts[:, 0] - c[0]))]
    d0, d1 = pts[1] - pts[0], pts[2] - pts[1]
    if np.sqrt(d0.dot(d0)) > np.sqrt(d1.dot(d1)):  # np.linalg.norm's own sums, without its overhead
        pts = pts[_NEXT]
    # Of the two short-side starts (0 or 180 degrees) take the one nearer the top-left: stable.
    if pts[0].sum() > pts[2].sum():
        pts = pts[[2, 3, 0, 1]]
    return pts


def _size_ok(w: float, h: float, scale: float, tilted: bool = False) -> bool:
    short, long_ = min(w, h) / scale, max(w, h) / scale
    lo, hi = (0.53, 0.88) if tilted else (0.58, 0.86)
    return MIN_WIDTH <= short <= MAX_WIDTH and long_ > 0 and lo <= short / long_ <= hi


def side_lengths(quad: np.ndarray) -> np.ndarray:
    """The four side lengths of a quad, side i from corner i to corner i + 1."""
    return _norms(quad - quad[_NEXT])


def aspect_of(quad: np.ndarray) -> float:
    """A quad's length for its width (a card's shape: poker 1.40, bridge 1.56)."""
    sides = side_lengths(quad)
    return float(sides.max() / max(float(sides.min()), 1.0))


def _quad_ok(quad: np.ndarray, tilted: bool = False) -> bool:
    """Card-sized, card-shaped and nearly a rectangle (`tilted`: as a camera turned up to 25
    degrees sees one)."""
    sides = side_lengths(quad)
    w, h = (sides[0] + sides[2]) / 2, (sides[1] + sides[3]) / 2
    if not _size_ok(w, h, 1.0, tilted):
        return False
    # Cards run 0.64 (French) to 0.74 (bridge) wide for their length: a side moved onto a line
    # printed on the card makes a squatter box.
    lo, hi = TILTED_RANGE if tilted else ASPECT_RANGE
    if not lo <= min(w, h) / max(w, h) <= hi:
        return False
    unequal = 0.2 if tilted else 0.12
    if abs(sides[0] - sides[2]) > unequal * sides[0] or abs(sides[1] - sides[3]) > unequal * sides[1]:
        return False
    return cv2.isContourConvex(quad.reshape(-1, 1, 2).astype(np.float32))


def _edge_support(near: np.ndarray, box: np.ndarray) -> float:
    """The share of the rectangle's outline (corners left out: they are rounded) near an edge."""
    t = _spaced(0.12, 0.88, 16)[:, None]
    p = np.concatenate([box[i] + t * (box[(i + 1) % 4] - box[i]) for i in range(4)])
    p = np.round(p).astype(int)
    h, w = near.shape
    inside = (p[:, 0] >= 0) & (p[:, 0] < w) & (p[:, 1] >= 0) & (p[:, 1] < h)
    if not inside.any():
        return 0.0
    return float(np.count_nonzero(near[p[inside, 1], p[inside, 0]])) / len(p)


def _min_area_rect(points: np.ndarray) -> tuple[tuple[float, float], tuple[float, float], float]:
    """cv2.minAreaRect in OpenCV 5's convention on every version: OpenCV 4 names the same
    rectangle with its sides swapped and its angle 90 degrees more ((0, 90] against 5.0's
    [-90, 0)), so boxPoints would start at another corner on the Pi's OpenCV."""
    centre, (w, h), angle = cv2.minAreaRect(points)
    if angle == 90:
        return centre, (w, h), -90.0
    if angle > 0:
        return centre, (h, w), angle - 90
    return centre, (w, h), angle


def _candidates(binary: np.ndarray, scale: float, mode: int, grow: float = 0.0) -> list[np.ndarray]:
    """Rotated rectangles of card size round the solid contours of `binary` (grown by `grow` px)."""
    out = []
    contours, _ = cv2.findContours(binary, mode, cv2.CHAIN_APPROX_SIMPLE)
    min_area = (MIN_WIDTH * scale) ** 2 * ASPECT * 0.6
    for cnt in contours:
        if len(cnt) < 6:  # a card's outline has rounded corners: many points
            continue
        area = cv2.contourArea(cnt)
        if area < min_area:
            continue
        centre, (rw, rh), angle = _min_area_rect(cnt)
        area *= (rw + 2 * grow) * (rh + 2 * grow) / max(1.0, rw * rh)
        rw, rh = rw + 2 * grow, rh + 2 * grow
        # Loose: the sides are refined later, so a box a shadow or a notch of glare spoils will do.
        if not _size_ok(rw, rh, scale * 1.08) and not _size_ok(rw, rh, scale * 0.92):
            continue
        if area / max(1.0, rw * rh) < 0.5:
            continue
        out.append(cv2.boxPoints((centre, (rw, rh), angle)))
    return out


class _Rough(NamedTuple):
    """What the small copy of a frame gives the search (see _rough)."""

    boxes: list[np.ndarray]  # card-like rectangles, the likeliest first
    edges: np.ndarray | None  # Canny edges (None: a flat frame)
    light: np.ndarray  # blurred grey levels
    paper: np.ndarray | None  # bright and far from the table's colour: the cards' bodies
    colour: np.ndarray | None  # the small copy blurred as `light` is, in colour


def _rough(small: np.ndarray, scale: float) -> _Rough:
    """Card-like rectangles on the small copy, the likeliest first (at most _KEEP), its edges, its
    blurred grey levels and its paper."""
    grey = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
    light = cv2.GaussianBlur(grey, (5, 5), 0)
    if int(light.max()) - int(light.min()) < 20:
        return _Rough([], None, light, None, None)  # a flat frame: black, burnt out, or a bare table
    # Edges: thresholds from the gradient's own spread, so faint light-on-light outlines count.
    gx = cv2.Sobel(light, cv2.CV_16S, 1, 0)
    gy = cv2.Sobel(light, cv2.CV_16S, 0, 1)
    mag = cv2.add(cv2.convertScaleAbs(gx), cv2.convertScaleAbs(gy))
    hist = cv2.calcHist([mag], [0], None, [256], [0, 256]).ravel()
    hi = float(np.clip(np.searchsorted(np.cumsum(hist), 0.9 * mag.size), 40, 300))
    edges = cv2.Canny(gx, gy, hi * 0.4, hi, L2gradient=False)
    near = cv2.dilate(edges, np.ones((3, 3), np.uint8))
    # Two closings: a thin one keeps glyphs near the border apart from the outline, a thick one
    # bridges gaps in it (glare, a card's edge on a card of the same colour); inner contours
    # shrink by the dilation, so their rectangles grow back by it.
    cands = []
    closed = near
    for k in (3, 5):
        closed = near if k == 3 else cv2.dilate(edges, np.ones((k, k), np.uint8))
        # The frame's own edge closes the outline of a card lying over it (see _complete).
        closed[[0, -1], :] = 255
        closed[:, [0, -1]] = 255
        cands += _candidates(closed, scale, cv2.RETR_LIST, grow=(k - 1) / 2)
    # Paper: far from the table colour (the median of the frame's edge) and bright.
    border = np.concatenate([small[0], small[-1], small[:, 0], small[:, -1]])
    table = np.partition(border, len(border) // 2, axis=0)[len(border) // 2]
    diff = cv2.absdiff(small, (*(float(v) for v in table), 0.0))
    diff = cv2.transform(diff, np.ones((1, 3), np.float32))  # the sum over channels, saturating
    paper = cv2.bitwise_and(
        cv2.threshold(diff, 40, 255, cv2.THRESH_BINARY)[1],
        cv2.threshold(grey, 100, 255, cv2.THRESH_BINARY)[1],
    )
    paper = cv2.morphologyEx(paper, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    # Paper cut along the edges: overlapping cards come apart along the top card's outline.
    cut = cv2.bitwise_and(paper, cv2.bitwise_not(closed))
    cands += _candidates(cut, scale, cv2.RETR_EXTERNAL, grow=2.0)
    # On a check or a busy cloth, bits of it as light as paper cling to the card's sides: opened
    # with a square a third of the smallest card, only the cards' bodies are left.
    k = int(0.3 * MIN_WIDTH * scale)
    if k >= 7:
        opened = cv2.morphologyEx(cut, cv2.MORPH_OPEN, np.ones((k, k), np.uint8))
        cands += _candidates(opened, scale, cv2.RETR_EXTERNAL, grow=2.0)
    colour = cv2.GaussianBlur(small, (5, 5), 0)
    return _Rough(_likeliest(cands, edges), edges, light, paper, colour)


def _blob_edges(paper: np.ndarray) -> np.ndarray:
    """The outline of the paper's blobs, as edges. On a wood grain or a busy cloth the table's own
    edges are as strong as a card's and crowd its sides out of the line search; the paper's
    outline is the cards' alone (two overlapping cards make one blob, whose straight sides and
    corners are still the cards')."""
    closed = cv2.morphologyEx(paper, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8))
    return cv2.morphologyEx(closed, cv2.MORPH_GRADIENT, np.ones((3, 3), np.uint8))


def _likeliest(cands: list[np.ndarray], edges: np.ndarray, keep_n: int = _KEEP) -> list[np.ndarray]:
    """The rough boxes with most edges along them, near-duplicates left out (at most keep_n)."""
    # Rough boxes are often a few px off (a shadow, a printed border): count edges nearby.
    near = cv2.dilate(edges, np.ones((7, 7), np.uint8))
    scored = [(_edge_support(near, box), box) for box in cands]
    scored = [s for s in scored if s[0] > 0.3]
    scored.sort(key=lambda t: -t[0])
    # Near-duplicates (the same card from several sources) are refined once.
    keep: list[np.ndarray] = []
    for _, box in scored:
        c = box.mean(axis=0)
        if all(np.abs(c - k.mean(axis=0)).max() > 3 for k in keep):
            keep.append(box)
        if len(keep) == keep_n:
            break
    return keep


def _one_side_even(light: np.ndarray, ang: float, rho: float, t0: float, t1: float) -> bool:
    """Whether the colours just to one side of the line are even all along it, as a card's margin
    is beside its edge; a check cloth's lines have squares of two shades on each side. `light`:
    the blurred frame, in colour (a gingham's orange and white squares can be as bright as each
    other) or grey."""
    u = np.array([np.cos(ang), np.sin(ang)], np.float32)
    n = np.array([-u[1], u[0]], np.float32)
    t = np.linspace(t0 + 0.1 * (t1 - t0), t1 - 0.1 * (t1 - t0), 12, dtype=np.float32)[:, None]
    h, w = light.shape[:2]
    for side in (3.0, -3.0, 6.0, -6.0):
        p = np.round(rho * n + t * u + side * n).astype(int)
        p[:, 0] = p[:, 0].clip(0, w - 1)
        p[:, 1] = p[:, 1].clip(0, h - 1)
        seen = light[p[:, 1], p[:, 0]].astype(np.float32).reshape(len(p), -1)
        med = np.median(seen, axis=0)
        bright = float(med @ _GREY) if seen.shape[1] == 3 else float(med[0])
        if np.mean(np.abs(seen - med).max(axis=1) <= 0.12 * bright + 8.0) >= 0.9:
            return True
    return False


def _across(light: np.ndarray, segs: np.ndarray) -> np.ndarray:
    """Which segments (n x 4: x0, y0, x1, y1) are edges across them: where the grey levels change
    along one, they mostly change across it. The transform also finds straight rows of bits of
    edges running another way (across a wood grain's waves), which crowd out the cards' sides."""
    d = segs[:, 2:] - segs[:, :2]
    u = d / np.maximum(_norms(d), 1e-6)[:, None]
    n = np.stack([-u[:, 1], u[:, 0]], axis=1)
    t = _spaced(0.0, 1.0, 16)[None, :, None]
    p = segs[:, None, :2] + t * d[:, None, :]  # (n, 16, 2)
    h, w = light.shape
    x = np.clip(np.round(p[..., 0]).astype(int), 1, w - 2)
    y = np.clip(np.round(p[..., 1]).astype(int), 1, h - 2)
    # Central differences at the points alone: no gradient image of the frame is made.
    gx = light[y, x + 1].astype(np.float32) - light[y, x - 1]
    gy = light[y + 1, x].astype(np.float32) - light[y - 1, x]
    mag = np.hypot(gx, gy)
    strong = mag >= 6.0
    aligned = np.abs(gx * n[:, None, 0] + gy * n[:, None, 1]) >= 0.8 * mag  # within ~37 degrees
    n_strong = strong.sum(axis=1)
    # Too faint to tell (white on white): left to the side fits.
    return (n_strong < 5) | ((aligned & strong).sum(axis=1) >= 0.6 * n_strong)


def _facing(to: float, ang: float, rho: float, t0: float, t1: float) -> tuple[float, float, float, float]:
    """A line (angle in [0, pi), offset, extent) put the way that is nearer angle `to`: a side at
    179 degrees is one at -1, with its offset and extent negated (the wrap of the angle)."""
    if ang - to > np.pi / 2:
        return ang - np.pi, -rho, -t1, -t0
    if to - ang > np.pi / 2:
        return ang + np.pi, -rho, -t1, -t0
    return ang, rho, t0, t1


def _line_seeds(
    edges: np.ndarray,
    light: np.ndarray,
    scale: float,
    aspect: float | None = None,
    colour: np.ndarray | None = None,
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Rectangles between pairs of long parallel edge lines a card's width or length apart, and
    from two square sides meeting at a corner. `colour`: the blurred frame in colour, for telling
    a check cloth's lines (see below); else the grey `light` is used."""
    lo = MIN_WIDTH * scale
    segs = cv2.HoughLinesP(edges, 1, np.pi / 180, int(0.25 * lo), minLineLength=0.3 * lo, maxLineGap=_GAP)
    if segs is None:
        return [], []
    segs = segs.reshape(-1, 4).astype(np.float32)
    length = np.hypot(segs[:, 2] - segs[:, 0], segs[:, 3] - segs[:, 1])
    order = np.argsort(-length)
    order = _few_per_family(segs, order[_across(light, segs[order])])[:200]
    # Pieces of one straight side (the transform breaks them up) joined: angle, offset, extent.
    lines: list[list[float]] = []
    for x0, y0, x1, y1 in segs[order]:
        ang = float(np.arctan2(y1 - y0, x1 - x0)) % np.pi
        u = np.array([np.cos(ang), np.sin(ang)])
        rho = -u[1] * (x0 + x1) / 2 + u[0] * (y0 + y1) / 2
        t0, t1 = sorted((u[0] * x0 + u[1] * y0, u[0] * x1 + u[1] * y1))
        for line in lines:
            a, r, s0, s1 = _facing(line[0], ang, rho, t0, t1)
            if abs(line[0] - a) < 0.035 and abs(line[1] - r) < 3:
                line[2], line[3] = min(line[2], s0), max(line[3], s1)
                break
        else:
            lines.append([ang, rho, t0, t1])
    long_ = [ln for ln in lines if ln[3] - ln[2] >= 0.5 * lo]
    lines = _cloth_free(long_, light if colour is None else colour)
    out = []
    for i, (ang, rho, a1, b1) in enumerate(lines):
        for line in lines[i + 1 :]:
            ang2, rho2, a2, b2 = _facing(ang, *line)
            if abs(ang - ang2) > 0.07:  # not parallel within 4 degrees
                continue
            gap = rho2 - rho
            if not lo * 0.9 <= abs(gap) <= MAX_WIDTH * scale * 1.6:
                continue
            if min(b1, b2) - max(a1, a2) < 0.5 * min(b1 - a1, b2 - a2):
                continue  # side by side, not facing each other
            t0, t1 = min(a1, a2), max(b1, b2)
            if not 0.55 <= min(t1 - t0, abs(gap)) / max(t1 - t0, abs(gap)) <= 0.9:
                continue
            u = np.array([np.cos(ang), np.sin(ang)], np.float32)
            n = np.array([-u[1], u[0]], np.float32)
            p0, p1 = rho * n + t0 * u, rho * n + t1 * u
            out.append(np.array([p0, p1, p1 + gap * n, p0 + gap * n], np.float32))
    return out, _corner_seeds(lines, scale, aspect)


_DIRECTIONS = 60  # a line's direction in bins of 3 degrees (a line at 179 degrees runs as one at 0)


def _direction(angle: np.ndarray) -> np.ndarray:
    """The direction bin (0 .. _DIRECTIONS - 1) of angles in radians, any sign or turn."""
    return np.floor((angle % np.pi) / (np.pi / _DIRECTIONS)).astype(int) % _DIRECTIONS


def _few_per_family(segs: np.ndarray, order: np.ndarray, most: int = 40) -> np.ndarray:
    """`order` (segment indices, longest first) with the first `most` segments of each direction (3
    degree bins) first, then the others: a striped cloth's hundreds of long parallel edges would
    otherwise be all of the longest segments kept, and a card's sides, shorter, none of them.
    (The others are not dropped: a wood grain's many segments lie along a card's sides too.)"""
    d = segs[order, 2:] - segs[order, :2]
    bins = _direction(np.arctan2(d[:, 1], d[:, 0]))
    rank = np.zeros(len(order), int)
    seen = np.zeros(_DIRECTIONS, int)
    for i, b in enumerate(bins.tolist()):
        rank[i] = seen[b]
        seen[b] += 1
    return np.concatenate([order[rank < most], order[rank >= most]])


def _cloth_free(lines: list[list[float]], even: np.ndarray) -> list[list[float]]:
    """The lines (angle, offset, extent) that are not a check cloth's, at most 40. A check cloth's
    lines crowd out the cards' sides, and any two of them make a box. They come in families of
    many parallel lines: of those, only lines with something even along one side (a card's
    margin, a plain table) are kept. A court card's side between two pictures is not even, but
    it has few parallels. `even`: the blurred frame the evenness is judged on."""
    angles = np.array([ln[0] for ln in lines])
    diff = np.abs(angles[:, None] - angles[None, :])
    parallels = (np.minimum(diff, np.pi - diff) < 0.035).sum(axis=1) - 1
    keep = [k < _FAMILY or _one_side_even(even, *ln) for ln, k in zip(lines, parallels, strict=True)]
    # A striped cloth's lines are even on both sides (each stripe is one colour): kept, but only
    # the first _FAMILY of a direction come before the other directions' lines, so as not to
    # crowd those out.
    seen: dict[int, int] = defaultdict(int)
    kept = []
    for i, (ln, ok) in enumerate(zip(lines, keep, strict=True)):
        if ok:
            family = int(_direction(np.float64(ln[0])))
            kept.append((seen[family] >= _FAMILY, i))
            seen[family] += 1
    return [lines[i] for _, i in sorted(kept)][:40]


def _corner_seeds(lines: list[list[float]], scale: float, aspect: float | None = None) -> list[np.ndarray]:
    """Rectangles from two square sides meeting at a corner (angle, offset, extent each), a card's
    shape: the top card's other two sides may lie white on the white cards under it."""
    lo, hi = MIN_WIDTH * scale * 1.3, MAX_WIDTH * scale * 1.65  # a card's long side
    tol = 0.12 * MIN_WIDTH * scale + 4
    out = []
    for i, (ang, rho, a1, b1) in enumerate(lines):
        u1 = np.array([np.cos(ang), np.sin(ang)])
        for ang2, rho2, a2, b2 in lines[i + 1 :]:
            if abs(abs(ang - ang2) - np.pi / 2) > 0.07:
                continue
            u2 = np.array([np.cos(ang2), np.sin(ang2)])
            # The corner: on both lines (n . p = rho, n = u turned a quarter).
            m = np.array([[-u1[1], u1[0]], [-u2[1], u2[0]]])
            corner = np.linalg.solve(m, [rho, rho2])
            ends = []
            for u, a, b in ((u1, a1, b1), (u2, a2, b2)):
                t = float(u @ corner)
                if not (abs(t - a) < tol or abs(t - b) < tol):
                    break  # the lines don't meet at their ends: not a card's corner
                ends.append((u, b - t) if abs(t - a) < abs(t - b) else (-u, t - a))
            else:
                (d1, e1), (d2, e2) = ends
                if e1 < e2:
                    (d1, e1), (d2, e2) = (d2, e2), (d1, e1)  # d1 along the longer side seen
                if e1 < 0.9 * MIN_WIDTH * scale:
                    continue
                # Both sides whole, or one cut short (white on white): the card's shape from the
                # longer one, which is its long side or its short one.
                ratio = aspect or 1.45  # the deck's shape, when known: the far sides land on its edges
                sizes = [(e1, e1 / ratio), (e1, e1 * ratio)]
                if 1.3 <= e1 / max(e2, 1.0) <= 1.65:
                    sizes.append((e1, e2))
                for s1, s2 in sizes:
                    if lo <= max(s1, s2) <= hi:
                        p1, p2 = corner + s1 * d1, corner + s2 * d2
                        out.append(np.array([corner, p1, p1 + s2 * d2, p2], np.float32))
    return out


class _Profiles(NamedTuple):
    """Grey-level profiles across a quad's sides, and their steps (see _refine)."""

    a: np.ndarray  # the sides' starts (4 x 2)
    b: np.ndarray  # ... and ends
    n: np.ndarray  # their outward normals
    t: np.ndarray  # where along a side each profile lies, 0..1
    offs: np.ndarray  # the offsets sampled across a side
    step: np.ndarray  # (4, along, m - 1): steps between offsets j, j + 1
    strength: np.ndarray  # ... those that are sharp local peaks, others 0
    inside: np.ndarray  # (4, along): the profiles inside the frame
    votes: np.ndarray  # (4, m - 1): each offset's vote for the side's edge


def _refine(
    image: np.ndarray, quad: np.ndarray, reach: tuple[int, int], outermost: bool = False, along: int = 20
) -> tuple[np.ndarray | None, np.ndarray]:
    """The quad with each side moved onto the card's edge, and which of the `along` profiles
    per side (4 x along, bool) have a step under the fitted side: all of them for the top card.
    `reach` = (px in, px out) searched.

    Grey levels are sampled on `along` profiles across each side; the edge is the offset where
    most profiles have a sharp step, and a line is fitted through those steps (sub-pixel).
    """
    return _fit(_profiles(image, quad, reach, along), outermost)


def _profiles(image: np.ndarray, quad: np.ndarray, reach: tuple[int, int], along: int = 20) -> _Profiles:
    """The profiles _refine fits a quad's sides from: the dearer half of it, which fits both ways
    (outermost or not) from one box share. Runs several times per frame: plain indexing, no
    padded or rolled copies."""
    quad = quad.astype(np.float32)
    a, b = quad, quad[_NEXT]
    d = b - a
    n = np.empty_like(d)
    n[:, 0], n[:, 1] = d[:, 1], -d[:, 0]
    n /= np.maximum(np.sqrt((d * d).sum(axis=1)), 1e-6)[:, None]
    centre = quad.sum(axis=0) / 4  # np.mean's own sum and division, without its overhead
    inwards = (n * ((a + b) / 2 - centre)).sum(axis=1) < 0
    np.negative(n, out=n, where=inwards[:, None])  # outwards
    t = _spaced(0.1, 0.9, along)
    offs = np.arange(-reach[0], reach[1] + 1, dtype=np.float32)
    base = a[:, None, :] + t[None, :, None] * d[:, None, :]  # (4, along, 2)
    mx = (base[:, :, None, 0] + offs[None, None, :] * n[:, None, None, 0]).reshape(1, -1)
    my = (base[:, :, None, 1] + offs[None, None, :] * n[:, None, None, 1]).reshape(1, -1)
    # Only the profiles are sampled (from the colour image: no grey copy of the frame is made).
    prof = cv2.remap(image, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    prof = prof.reshape(4, along, offs.size, 3).astype(np.float32) @ _GREY
    step = np.abs(prof[:, :, 1:] - prof[:, :, :-1])  # (4, along, m - 1): between offsets j, j + 1
    # A step counts where it is a local peak of its profile and strong enough: _STEP, or on a side
    # whose every profile has a fainter step (a white card on a white table, blurred) most of the
    # strongest step its profiles have in common.
    common = np.median(step.max(axis=2), axis=1)  # (4,)
    bar = np.clip(_FAINT_SHARE * common, _FAINT, _STEP)[:, None, None]
    peak = step >= bar
    peak[:, :, 1:] &= step[:, :, 1:] >= step[:, :, :-1]
    peak[:, :, :-1] &= step[:, :, :-1] >= step[:, :, 1:]
    h, w = image.shape[:2]
    x, y = base[..., 0], base[..., 1]
    inside = (x >= 2) & (x < w - 2) & (y >= 2) & (y < h - 2)
    peak &= inside[:, :, None]
    strength = step * peak
    # Votes weighted by the step: a shadow's soft edge loses to the card's sharp one.
    votes = np.minimum(strength, 25.0).sum(axis=1)  # (4, m - 1)
    votes[:, 1:-1] += votes[:, :-2] + votes[:, 2:]
    votes[:, 0] = votes[:, -1] = 0
    return _Profiles(a, b, n, t, offs, step, strength, inside, votes)


def _fit(profiles: _Profiles, outermost: bool) -> tuple[np.ndarray | None, np.ndarray]:
    """The sides fitted to the profiles' steps (see _refine)."""
    a, b, n, t, offs, step, strength, inside, votes = profiles
    along = len(t)
    best = votes.argmax(axis=1)
    if outermost:
        # Coming in from outside the card: its own edge before any frame printed on it.
        strong = votes >= 0.5 * votes[np.arange(4), best][:, None]
        best = votes.shape[1] - 1 - strong[:, ::-1].argmax(axis=1)
    # Per profile the strongest peak within 2 px of the vote, its position refined to sub-pixel.
    cols = np.minimum(np.maximum(best[:, None] + _NEAR[None, :], 1), step.shape[2] - 2)  # (4, 5)
    side, prof_i = _SIDE_INDEX, _along_index(along)
    win = strength[side[..., None], prof_i[..., None], cols[:, None, :]]  # (4, along, 5)
    k = win.argmax(axis=2)
    ok = win[side, prof_i, k] > 0
    col = cols[side, k]
    s0, s1, s2 = step[side, prof_i, col - 1], step[side, prof_i, col], step[side, prof_i, col + 1]
    pos = offs[col] + 0.5 + (s2 - s0) / np.maximum(s0 + s1 + s2, 1e-3)
    # A weighted least-squares line through them, once more without the outliers.
    used = ok
    for _ in range(2):
        wgt = used.astype(np.float32)
        sw = np.maximum(wgt.sum(axis=1), 1e-6)
        mt = (wgt * t).sum(axis=1) / sw
        mp = (wgt * pos).sum(axis=1) / sw
        dt = t - mt[:, None]
        slope = (wgt * dt * (pos - mp[:, None])).sum(axis=1) / np.maximum((wgt * dt**2).sum(axis=1), 1e-6)
        icept = mp - slope * mt
        kept = ok & (np.abs(pos - (slope[:, None] * t + icept[:, None])) < 1.5)
        if (kept == used).all():
            break  # no outliers: the fit again would be this one
        used = kept
    wgt = kept.astype(np.float32)
    # A side with no edge to fit (off the frame, white on white) stays where it was.
    lost = wgt.sum(axis=1) < 3
    if lost.any():
        slope[lost], icept[lost], wgt[lost] = 0.0, 0.0, 0.0
    # Profiles off the frame neither count for a side nor against it (but see _refined).
    whole = (wgt > 0) | ~inside
    if np.count_nonzero(inside) / inside.size < 0.6:
        whole[:] = False  # mostly off the frame, or a box round the frame
    # The fitted lines, through offset icept at t = 0 and icept + slope at t = 1; each corner
    # where a side's line meets the one before it.
    p0 = a + n * icept[:, None]
    dirs = b + n * (icept + slope)[:, None] - p0
    pj, dj = p0[_PREV], dirs[_PREV]
    den = dj[:, 0] * dirs[:, 1] - dj[:, 1] * dirs[:, 0]
    if (np.abs(den) < 1e-6).any():
        return None, wgt > 0
    u = ((p0[:, 0] - pj[:, 0]) * dirs[:, 1] - (p0[:, 1] - pj[:, 1]) * dirs[:, 0]) / den
    return (pj + u[:, None] * dj).astype(np.float32), whole


_LENGTHS = (1.36, 1.45, 1.55)  # a card's length for its width: poker 1.40, bridge 1.56


def _opposite(quad: np.ndarray, i: int) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, float]:
    """The side opposite side i: its index j (corner j to j + 1), its ends, the unit normal
    pointing from it towards side i, and its length (the card's extent along these sides)."""
    j = (i + 2) % 4
    a, b = quad[j], quad[(j + 1) % 4]
    d = b - a
    across = float(np.linalg.norm(d))
    n = np.array([d[1], -d[0]], np.float32) / max(across, 1e-6)
    if np.dot(n, quad.mean(axis=0) - (a + b) / 2) < 0:
        n = -n
    return j, a, b, n, across


def _moved(quad: np.ndarray, j: int, a: np.ndarray, b: np.ndarray, n: np.ndarray, dist: float) -> np.ndarray:
    """The quad with the side facing side j (from its ends a, b, along n) put `dist` from it."""
    moved = quad.copy()
    moved[(j + 2) % 4] = b + dist * n
    moved[(j + 3) % 4] = a + dist * n
    return moved


def _outline_points(quad: np.ndarray, along: int) -> np.ndarray:
    """`along` points on each side of the quad, 10 % to 90 % of the way ((4 * along) x 2)."""
    t = _spaced(0.1, 0.9, along)[None, :, None]
    return (quad[:, None, :] + t * (quad[_NEXT] - quad)[:, None, :]).reshape(-1, 2)


def _complete(
    image: np.ndarray,
    quad: np.ndarray,
    whole: np.ndarray,
    holds: bool = False,
    aspect: float | None = None,
    tilted: bool = False,
) -> tuple[np.ndarray, np.ndarray] | None:
    """A quad with one side astray (on the edge of a card underneath, which the rough box took
    in, or on a frame printed on the card) put right: that side is put a card's length or width
    from its opposite side, and fitted there. `holds`: the quad came from a box that holds the
    card (the change mask's), so a side only comes in. The best whole quad, or None."""
    sides = whole.mean(axis=1)
    best, best_support = None, 0.0
    for i in np.argsort(sides)[:2]:
        j, a, b, n, across = _opposite(quad, int(i))  # n: towards the side being put right
        now = float(np.dot(n, (quad[(j + 2) % 4] + quad[(j + 3) % 4]) / 2 - (a + b) / 2))
        for ratio in (aspect, *_LENGTHS) if aspect else _LENGTHS:
            if aspect and ratio != aspect and best is not None:
                break  # the deck's own shape did: a guessed one is only for when it doesn't
            for dist in (across * ratio, across / ratio):
                if holds and dist > 1.1 * now:
                    continue
                moved = _moved(quad, j, a, b, n, dist)
                reach = int(0.04 * dist) + 3
                got, _ = _refine(image, moved, (reach, reach))
                if got is None:
                    continue
                got, got_whole = _refine(image, got, (3, 3), along=_ALONG)
                if got is None or not _quad_ok(got, tilted):
                    continue
                got_sides = got_whole.mean(axis=1)
                # Put right, the card's outline is whole but for what glare or white on white hides.
                if got_sides.min() >= 0.5 and got_sides.mean() >= 0.75 and got_sides.mean() > best_support:
                    best, best_support = (got, got_whole), float(got_sides.mean())
                    if got_sides.min() >= 0.9 and best_support >= 0.98:
                        return best  # whole all round: no other length will do better
    return best


class _Quad(NamedTuple):
    support: float  # the share of the outline with an edge under it
    quad: np.ndarray  # 4 x 2 corners
    points: np.ndarray  # (4 * along) x 2 points on the outline
    whole: np.ndarray  # (4 * along) bool: an edge under the point
    margin: bool  # an even strip just inside the sides, like a card's margin (see _paper_rim, _refined)


def _refined(
    image: np.ndarray,
    box: np.ndarray,
    reach: tuple[int, int],
    outermost: bool = False,
    strict: bool = True,
    complete: bool = True,
    aspect: float | None = None,
    profiles: _Profiles | None = None,
    tilted: bool = False,
) -> _Quad | None:
    """A rough box moved onto the card's edges, with the share of its outline that is whole.
    Not `strict`: the box is the change mask's, which holds the new card and nothing else.
    `complete`: a side astray may be put right (`_complete`, the dearest step), at the deck's
    length for its width (`aspect`) when that is known. `profiles`: the box's, at `reach`, if
    the caller has them."""
    if profiles is None:
        profiles = _profiles(image, box, reach)  # one sampling for both ways of fitting below
    for outer in (outermost, True) if not outermost else (True,):
        # The strongest line near each side, else (a side moved onto a line printed on the card
        # makes a squat box) the outermost strong one.
        quad, _ = _fit(profiles, outer)
        if quad is None:
            return None
        quad, whole = _refine(image, quad, (3, 3), along=_ALONG)  # once more, close in
        if quad is None:
            continue
        # A side along the frame's edge or past it is no side of the card's: the card may run on
        # past it, and is given its length as a side astray is (below).
        whole[_off_frame(quad, image.shape)] = False
        if _quad_ok(quad, tilted) and whole.mean(axis=1).min() >= _SIDE:
            break
        done = _complete(image, quad, whole, not strict, aspect, tilted) if complete else None
        if done is not None:
            quad, whole = done
            break
        if _quad_ok(quad, tilted):
            break
    else:
        return None
    # Every side of the top card is there (a side a glare or a white card hides may be half there);
    # a table's check or a box round two cards has a side that is not.
    sides = whole.mean(axis=1)
    support = float(sides.mean()) if sides.min() >= _SIDE or not strict else 0.0
    # Not strict (the change's own box, read at once when sure), the margin is only worked out
    # for a fit kept for the pick: by _change_fits.
    margin = strict and _paper_rim(image, quad) >= _RIM
    if support and strict and not margin and _runs_on(image, quad) > 0.6:
        support = 0.0
    return _Quad(support, quad, _outline_points(quad, _ALONG), whole.ravel(), margin)


def _off_frame(quad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Which sides lie (both ends) within 3 px of the frame's edge or past it."""
    h, w = shape[:2]
    x, y = quad[:, 0], quad[:, 1]
    out = (x < 3) | (y < 3) | (x > w - 4) | (y > h - 4)
    return out & out[_NEXT]


def _paper_rim(image: np.ndarray, quad: np.ndarray) -> float:
    """The share of a strip just inside the quad's sides that is even, like a card's margin
    (each sample within 12 % of its side's median brightness, in every colour): a box of a check
    or stripes crosses them. In colour: a gingham's orange and white squares can be as bright
    as each other, and a box of its lines looked even in grey."""
    centre = quad.mean(axis=0)
    inner = centre + (quad - centre) * 0.95
    t = _spaced(0.2, 0.8, 16)[None, :, None]
    pts = (inner[:, None, :] + t * (inner[_NEXT] - inner)[:, None, :]).reshape(1, -1, 2)
    rim = cv2.remap(image, pts[..., 0], pts[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    rim = rim.reshape(4, -1, 3).astype(np.float32)
    # The median of each side's 16 samples, as np.median takes it (the two middle ones' mean).
    part = np.partition(rim, (7, 8), axis=1)
    med = (part[:, 7:8] + part[:, 8:9]) / 2  # (4, 1, 3)
    bright = np.maximum(med @ _GREY, 20.0)  # (4, 1)
    even = np.abs(rim - med).max(axis=2) <= 0.12 * bright
    # A hand's or a lamp's shadow across the card shades its margin smoothly, by more than that
    # from end to end; a check or stripes change it at a step. A side with no step between
    # neighbouring samples is even all along.
    smooth = np.abs(np.diff(rim, axis=1)).max(axis=(1, 2)) <= 0.12 * bright[:, 0]
    return float(np.mean(even | smooth[:, None]))


def _runs_on(image: np.ndarray, quad: np.ndarray) -> float:
    """The share of the quad's side lines, past its corners, that still have a step across
    them: a card's sides end at its corners, the lines of a check or a stripe run on."""
    a, b = quad, quad[_NEXT]
    d = b - a
    n = np.stack([d[:, 1], -d[:, 0]], axis=1) / np.maximum(_norms(d), 1e-6)[:, None]
    t = np.array([-0.3, -0.25, -0.2, -0.15, 1.15, 1.2, 1.25, 1.3], np.float32)
    offs = np.arange(-3, 4, dtype=np.float32)
    pts = (a[:, None, None, :] + t[None, :, None, None] * d[:, None, None, :]) + offs[
        None, None, :, None
    ] * n[:, None, None, :]
    h, w = image.shape[:2]
    flat = pts.reshape(1, -1, 2).astype(np.float32)
    prof = cv2.remap(image, flat[..., 0], flat[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    prof = prof.reshape(*pts.shape[:3], 3).astype(np.float32) @ _GREY
    steps = np.abs(np.diff(prof, axis=2))  # (4, 8, 6): steps between the 7 offsets
    # The line runs on where the strongest step across it lies on the line itself (within a
    # px or so): a check's line does; a busy cloth has steps everywhere but at random offsets.
    at = np.argmax(steps, axis=2)
    step = steps.max(axis=2)
    base = pts[:, :, 3, :]
    inside = (base[..., 0] >= 0) & (base[..., 0] < w) & (base[..., 1] >= 0) & (base[..., 1] < h)
    if inside.sum() < 8:
        return 1.0  # nearly all past the frame's edge: a box round the frame, not a card in it
    on_line = (at >= 1) & (at <= 4)
    return float(np.count_nonzero((step >= 2 * _STEP) & on_line & inside)) / int(inside.sum())


def _above(a: _Quad, b: _Quad) -> bool | None:
    """Whether card a lies on card b, if they overlap: the top card's outline goes on across
    the one under it, whose outline stops at the top card's edge."""
    in_a = _inside(a.quad, b.points)
    in_b = _inside(b.quad, a.points)
    if in_a.sum() < 4 or in_b.sum() < 4:
        return None
    return bool(a.whole[in_b].mean() > b.whole[in_a].mean() + 0.1)


def _inside(quad: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """Which points lie inside the convex quad (clockwise or not), a few px in from its sides."""
    a, b = quad, quad[_NEXT]
    cross = (b[:, 0] - a[:, 0])[:, None] * (pts[None, :, 1] - a[:, 1:2]) - (b[:, 1] - a[:, 1])[:, None] * (
        pts[None, :, 0] - a[:, 0:1]
    )
    cross /= _norms(b - a)[:, None]  # signed distances to the sides
    return (cross > 3).all(axis=0) | (cross < -3).all(axis=0)


def _holds(found: _Quad, least: float) -> bool:
    """Whether an outline is whole enough to be taken: `least` of it, or (the top card with a side
    white on the white card under it, or in a glare) three sides whole, the fourth 60 % there,
    and a card's even margin inside."""
    if found.support >= least:
        return True
    sides = np.sort(found.whole.reshape(4, -1).mean(axis=1))
    return found.margin and bool(sides[1] >= 0.96) and bool(sides[0] >= 0.6)


def _shaped(quad: np.ndarray, aspect: float | None) -> bool:
    """Whether the quad has the deck's length for its width (any, when that isn't known)."""
    return aspect is None or abs(aspect_of(quad) / aspect - 1.0) <= _ASPECT_PLAY


def _pick(scored: list[_Quad], length: float | None = None, aspect: float | None = None) -> _Quad | None:
    """Of the refined quads, the top card: whole, full size, and on every card it overlaps.
    `length`: the card's long side in px, when known (calibration: one camera, one deck).
    `aspect`: the deck's length for its width, when known (a calibrated deck): a box onto the
    table or a card beside it is whole too, but rarely of the deck's shape. When no quad has
    it, the others still may be the card (a side a little off): they are not thrown away."""
    scored = sorted((s for s in scored if s.support >= _WHOLE), key=lambda q: -q.support)
    scored = [s for s in scored if _shaped(s.quad, aspect)] or scored
    long_ = [float(side_lengths(q.quad).max()) for q in scored]
    if length is not None:
        scored = [q for n, q in zip(long_, scored, strict=True) if abs(n - length) <= _LENGTH_PLAY * length]
    if not scored:
        return None
    if length is not None:
        return scored[0]
    # The cards of a pile are one size: a frame printed on a card, half a court card or the
    # visible end of a card underneath is card-shaped and whole too, but smaller. A box of a
    # check cloth's lines is whole too, and bigger: the size is set by outlines with a card's
    # even margin inside them, and a bigger box without one is the cloth.
    whole = [(n, q.margin) for n, q in zip(long_, scored, strict=True) if q.support >= 0.6]
    full = max((n for n, margin in whole if margin), default=0.0) or max((n for n, _ in whole), default=0.0)
    scored = [
        q for n, q in zip(long_, scored, strict=True) if n >= 0.88 * full and (q.margin or n <= 1.12 * full)
    ] or scored
    best = scored[0]
    for other in scored[1:]:
        if _above(other, best):
            best = other
    return best


def _grown(image: np.ndarray, found: _Quad, complete: bool = True, tilted: bool = False) -> _Quad | None:
    """The card round a card-shaped frame printed on it (a court card's panel, a border), if
    there is one: the outermost whole outline a little outside the quad. `complete`: see _refined."""
    out = None
    for _ in range(3):  # a panel in a frame in the card: step out one outline at a time
        sides = side_lengths(found.quad)
        reach = (2, int(0.45 * sides.min()) + 4)
        got = _refined(image, found.quad, reach, outermost=True, complete=complete, tilted=tilted)
        # Only an outline whole all round: a box round the card and the ones under it is not.
        if got is None or got.support < _GROWN or got.whole.reshape(4, -1).mean(axis=1).min() < 0.6:
            break
        grown = side_lengths(got.quad)
        if grown.max() < 1.06 * sides.max():
            break
        out = found = got
    return out


def _covered(mask: np.ndarray, quad: np.ndarray) -> float:
    """The share of the quad that the change mask covers (on a grid of points inside it)."""
    u = _spaced(0.1, 0.9, 7)
    uu, vv = np.meshgrid(u, u)
    uu, vv = uu.ravel()[:, None], vv.ravel()[:, None]
    pts = (1 - vv) * ((1 - uu) * quad[0] + uu * quad[1]) + vv * ((1 - uu) * quad[3] + uu * quad[2])
    p = np.round(pts).astype(int)
    h, w = mask.shape
    ok = (p[:, 0] >= 0) & (p[:, 0] < w) & (p[:, 1] >= 0) & (p[:, 1] < h)
    return float(np.count_nonzero(mask[p[ok, 1], p[ok, 0]] > 127)) / len(p)


def _change_fits(
    image: np.ndarray,
    hint: np.ndarray,
    aspect: float | None = None,
    complete: bool = True,
    tilted: bool = False,
) -> tuple[np.ndarray | None, list[_Quad]]:
    """The change's own box `hint` fitted to the card's edges: the quad if that is sure, else None
    and the fits that are not (for the search round the change). `aspect`: see _pick;
    `complete`: see _refined."""
    # The change covers the card, its shadow and a margin: its sides lie outside the card's.
    short = min(np.linalg.norm(hint[1] - hint[0]), np.linalg.norm(hint[2] - hint[1]))
    # Nothing but the new card is in it: no need to be strict about its sides. The outermost
    # lines first (a frame printed on the card is inside its edge), then the strongest (the
    # outermost may be the edge of a card underneath, white on white), stepping out from a
    # court card's frame to the card round it.
    scored = []
    reach = (int(0.2 * short) + 4, 4)
    profiles = _profiles(image, hint, reach)  # both fits below start from these
    for outer in (True, False):
        found = _refined(image, hint, reach, outer, False, complete, aspect, profiles, tilted)
        if found is None:
            continue
        if found.support >= _SURE and _shaped(found.quad, aspect):
            grown = None if outer else _grown(image, found, complete, tilted)
            return (grown or found).quad, []
        scored.append(found._replace(margin=_paper_rim(image, found.quad) >= _RIM))
    return None, scored


def _margined(scored: list[_Quad]) -> bool:
    """Whether a whole outline with a card's even margin has been found."""
    return any(q.support >= _LINES and q.margin for q in scored)


def _search(
    image: np.ndarray,
    work: int,
    hint: np.ndarray | None = None,
    mask: np.ndarray | None = None,
    length: float | None = None,
    aspect: float | None = None,
    tilted: bool = False,
) -> tuple[np.ndarray | None, bool]:
    """The top card in `image` (a frame, or the crop round a change whose box is `hint` and
    mask `mask`), searched at `work` px, and whether it has a card's even margin inside (or is
    the change's own sure fit); `tilted`: outlines as a camera turned up to 25 degrees off
    straight down sees cards."""
    scored = []
    if hint is not None:
        sure, scored = _change_fits(image, hint, aspect, tilted=tilted)
        if sure is not None:
            return sure, True
    h, w = image.shape[:2]
    # A frame is searched WORK_WIDTH wide, a crop round a change HINT_WORK at its longest; by an
    # integer factor, which INTER_AREA has a fast path for.
    k = -(-(max(w, h) if hint is not None else w) // work)
    small = cv2.resize(image, (w // k, h // k), interpolation=cv2.INTER_AREA) if k > 1 else image
    scale = small.shape[1] / w
    look = _Look(image, scale, int(max(20, round(16 / scale))), aspect, tilted, mask)
    rough = _rough(small, scale)
    edges, light = rough.edges, rough.light
    _refine_boxes(look, rough.boxes, scored)
    if edges is not None:
        # Outlines broken into the pictures or the cards round them (a court picture that runs to
        # the card's edge): pairs of straight sides too. They find more junk (a picture's frame,
        # the end of a card underneath): only sure ones, and the full-sized card on top wins.
        pairs, corners = _line_seeds(edges, light, scale, aspect, rough.colour)
        _refine_boxes(look, _likeliest(pairs, edges), scored, _LINES)
        # Boxes from corners cost as much again: only while no card with a card's margin is found.
        if not _margined(scored):
            _refine_boxes(look, _likeliest(corners, edges, _CORNERS), scored, _LINES)
        # Still none: the straight sides of the paper's outline (a wood grain's edges drown the
        # cards' in the edge map).
        if rough.paper is not None and not _margined(scored):
            blob = _blob_edges(rough.paper)
            pairs, corners = _line_seeds(blob, light, scale, aspect, rough.colour)
            _refine_boxes(look, _likeliest(pairs + corners, blob, _KEEP), scored, _LINES)
    best = _pick(scored, length, aspect)
    return (None, False) if best is None else (best.quad, best.margin)


class _Look(NamedTuple):
    """What one search looks at: the image, the scale it was searched at, how far a side may be
    put right, and the card's expected shape; `mask`: the change the new card lies in."""

    image: np.ndarray
    scale: float
    reach: int
    aspect: float | None
    tilted: bool
    mask: np.ndarray | None


def _in_change(mask: np.ndarray | None, found: _Quad) -> bool:
    """With a change mask, the new card is inside it."""
    return mask is None or _covered(mask, found.quad) > 0.85


def _refine_boxes(look: _Look, boxes: list[np.ndarray], scored: list[_Quad], least: float = 0.0) -> None:
    """Each rough box fitted to the card's edges; those that hold go on `scored`."""
    for i, box in enumerate(boxes):
        # Only the likeliest boxes may have a side put right: it costs up to 24 side fits.
        found = _refined(
            look.image,
            box / look.scale,
            (look.reach,) * 2,
            complete=i < _COMPLETE,
            aspect=look.aspect,
            tilted=look.tilted,
        )
        if found is not None and _in_change(look.mask, found):
            held = _holds(found, least)
            if held:
                scored.append(found)
            # A frame printed on the card, one side put right at the card's shape (not the
            # frame's), falls short of `least`: the card round it may not. Only an even frame
            # (a card's margin inside it): other boxes short of it, stepped out of, run on
            # past the top card onto one lying square to it underneath.
            if found.support >= _GROWN and (held or found.margin):
                grown = _grown(look.image, found, tilted=look.tilted)
                if grown is not None and _holds(grown, least) and _in_change(look.mask, grown):
                    scored.append(grown)
        # A side of the top card that is faint (white on the white card under it) loses the
        # fit above to a strong line near it: the edge of a card a few px out, or a line
        # printed just inside the card. The box already lies on the card's own edges (its
        # paper's blob, or straight lines found on them); fitted close in, it keeps them.
        found = _refined(
            look.image, box / look.scale, (int(3 / look.scale) + 2,) * 2, complete=False, tilted=look.tilted
        )
        if found is not None and found.support >= _LINES and _in_change(look.mask, found):
            scored.append(found)


def outline_candidates(
    image: np.ndarray, limit: int = 12, boxes: Sequence[np.ndarray] = (), near: np.ndarray | None = None
) -> list[np.ndarray]:
    """Every card-like outline of the frame, not only the one `find_top_card` picks: each rough
    box, pair of sides and corner refined, as seen from straight above and tilted, whole at least
    _WHOLE and lying under no other (`_above`), the most whole first. For a still photo whose
    picked outline read no card surely (recognise, `thorough`): the reading chooses among them.
    `limit` boxes of each kind are refined; about 0.1 to 0.7 s a 1280x720 frame. `boxes`: more
    rough boxes (frame px) to refine with them (the outline model's); `near`: a map of the frame
    (any size, non-zero where the top card may lie: the outline model's), whose edges alone are
    searched for straight sides once more."""
    if image is None or image.ndim != 3 or min(image.shape[:2]) < 40:
        return []
    h, w = image.shape[:2]
    k = -(-w // WORK_WIDTH)
    small = cv2.resize(image, (w // k, h // k), interpolation=cv2.INTER_AREA) if k > 1 else image
    scale = small.shape[1] / w
    reach = int(max(20, round(16 / scale)))
    rough = _rough(small, scale)
    edges, light = rough.edges, rough.light
    seeds = [np.asarray(b, np.float32) * scale for b in boxes] + rough.boxes
    if edges is not None:
        pairs, corners = _line_seeds(edges, light, scale, colour=rough.colour)
        seeds += [*_likeliest(pairs, edges, limit), *_likeliest(corners, edges, limit)]
    if rough.paper is not None:
        blob = _blob_edges(rough.paper)
        pairs, corners = _line_seeds(blob, light, scale, colour=rough.colour)
        seeds += _likeliest(pairs + corners, blob, limit)
    if edges is not None and near is not None:
        # A check cloth's lines crowd the card's sides out of the search above (the two best
        # lines a card's width apart are mostly the cloth's); near the top card there are few.
        local = cv2.bitwise_and(edges, cv2.resize(near, edges.shape[::-1], interpolation=cv2.INTER_NEAREST))
        pairs, corners = _line_seeds(local, light, scale, colour=rough.colour)
        seeds += [*_likeliest(pairs, local, limit), *_likeliest(corners, local, limit)]
    found: list[_Quad] = []
    for box in seeds:
        for tilted in (False, True):
            got = _refined(image, box / scale, (reach, reach), tilted=tilted)
            if got is None:
                continue
            for one in [got] if got.support >= _WHOLE else _three_sided(got, tilted):
                one = one._replace(quad=order_quad(one.quad))
                if all(np.abs(one.quad - q.quad).max() > 2.0 for q in found):
                    found.append(one)
    found.sort(key=lambda q: -q.support)
    # A card partly under another is whole where it shows, and reads as surely as the top one.
    return [q.quad for q in found if not any(_above(o, q) for o in found if o is not q)]


def _three_sided(found: _Quad, tilted: bool = False) -> list[_Quad]:
    """A refined quad with three sides whole and the fourth not there at all, completed at each
    card shape (`_LENGTHS`) from its opposite side: the top card of a pair whose fourth side lies
    white on the white card under it, with no step in the grey levels to fit (a still photo's
    outlines only: the reading chooses among them, and both corners must agree for its outline to
    count). The fourth side is marked as not whole."""
    whole = found.whole.reshape(4, -1)
    sides = whole.mean(axis=1)
    order = np.argsort(sides)
    if sides[order[1]] < 0.9 or sides[order[0]] >= _SIDE:
        return []
    i = int(order[0])
    j, a, b, n, across = _opposite(found.quad, i)  # n: towards the missing side
    marked = whole.copy()
    marked[i] = False
    out = []
    for ratio in _LENGTHS:
        for dist in (across * ratio, across / ratio):
            moved = _moved(found.quad, j, a, b, n, dist)
            if _quad_ok(moved, tilted):
                points = _outline_points(moved, whole.shape[1])
                out.append(_Quad(float(marked.mean()), moved, points, marked.ravel(), found.margin))
    return out


def _hint_box(hint_mask: np.ndarray) -> tuple[np.ndarray, tuple[int, int, int, int]] | None:
    """The rotated box round the biggest blob of a change mask, and its upright bounds."""
    # The watcher's masks are blown up from a small image: every k-th pixel loses nothing.
    k = max(1, hint_mask.shape[1] // 320)
    small = np.ascontiguousarray(hint_mask[::k, ::k])
    binary = cv2.threshold(small, 127, 255, cv2.THRESH_BINARY)[1]
    contours, _ = cv2.findContours(binary, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    if not contours:
        return None
    blob = max(contours, key=cv2.contourArea).astype(np.float32) * k
    x, y, bw, bh = cv2.boundingRect(blob)
    return cv2.boxPoints(_min_area_rect(blob)), (x, y, bw + k, bh + k)


def _change_crop(
    hint_mask: np.ndarray, shape: tuple[int, ...]
) -> tuple[np.ndarray, tuple[slice, slice], np.ndarray] | None:
    """The change's box, the crop round it (a margin added) and the crop's offset, or None."""
    found = _hint_box(hint_mask)
    if found is None:
        return None
    box, (x, y, bw, bh) = found
    pad = max(bw, bh) // 8 + 8
    x0, y0 = max(x - pad, 0), max(y - pad, 0)
    x1, y1 = min(x + bw + pad, shape[1]), min(y + bh + pad, shape[0])
    offset = np.array([x0, y0], np.float32)
    return box - offset, (slice(y0, y1), slice(x0, x1)), offset


def find_top_card(
    image: np.ndarray,
    hint_mask: np.ndarray | None = None,
    length: float | None = None,
    aspect: float | None = None,
    work: int = WORK_WIDTH,
) -> np.ndarray | None:
    """The top card's corners (4 x 2 float32, clockwise from a short side), or None. `length`:
    the card's long side in px, if known; only an outline that long (give or take 6 %) will do.
    `aspect`: the deck's length for its width, if known; an outline of that shape (give or take
    4 %) is preferred. `work`: the width a whole frame is searched at (a still photo in which
    no card was found at WORK_WIDTH is searched again up to twice as wide: `Recogniser.recognise`)."""
    if image is None or image.ndim < 2 or min(image.shape[:2]) < 40:
        return None
    if image.ndim == 2:
        image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    if hint_mask is not None and hint_mask.shape[:2] == image.shape[:2]:
        # The change since the last rest is where the new card lies: search only round it.
        crop = _change_crop(hint_mask, image.shape)
        if crop is None:
            return None
        box, at, offset = crop
        quad = _either(
            lambda tilted: _search(image[at], HINT_WORK, box, hint_mask[at], aspect=aspect, tilted=tilted)
        )
        return None if quad is None else order_quad(quad + offset)
    quad = _either(lambda tilted: _search(image, work, length=length, aspect=aspect, tilted=tilted))
    return None if quad is None else order_quad(quad)


def _either(search: Callable[[bool], tuple[np.ndarray | None, bool]]) -> np.ndarray | None:
    """A card seen from straight above first; only when none is found, or none with a card's even
    margin inside (the boxes of a check cloth's lines are square to the frame, a card seen by a
    tilted camera is not), the shapes a camera turned up to 25 degrees sees. Taken at once, they
    let in squat boxes (a side on a line printed on the card) that beat the card's own outline on
    frames from straight above."""
    straight, margined = search(False)
    if straight is not None and margined:
        return straight
    tilted, margined = search(True)
    if tilted is not None and (margined or straight is None):
        return tilted
    return straight


def change_outline(
    image: np.ndarray, hint_mask: np.ndarray, aspect: float | None = None
) -> tuple[np.ndarray | None, bool]:
    """The change's own outline, sure or not, and whether it is sure (sure enough to need no
    search round it); None when it has none. `aspect`: as for `find_top_card`. Cheap: a few side
    fits. Unlike in `find_top_card`, a side astray is not put right (_complete: up to 24 side
    fits each time, several times). Measured over the watch's frames, putting sides right there
    made more wrong readings than right ones, and reading this outline first changed no right
    reading to a wrong one."""
    if image is None or image.ndim != 3 or min(image.shape[:2]) < 40 or hint_mask.shape != image.shape[:2]:
        return None, False
    crop = _change_crop(hint_mask, image.shape)
    if crop is None:
        return None, False
    box, at, offset = crop
    sure, fits = _change_fits(image[at], box, aspect, complete=False)
    if sure is not None:
        return order_quad(sure + offset), True
    best = _pick(fits, aspect=aspect)
    return (None if best is None else order_quad(best.quad + offset)), False


def warp_card(
    image: np.ndarray,
    quad: np.ndarray,
    size: tuple[int, int] = WARP_SIZE,
    regions: tuple[tuple[int, int, int, int], ...] | None = None,
) -> np.ndarray:
    """The card upright (long side vertical), `size` = (w, h); 0 or 180 degrees, either may come.
    `regions`: only these boxes (x0, y0, x1, y1) of it are warped, the rest is left black (the
    corner reader needs a third of the card: the warp costs ~0.5 ms at full size)."""
    quad = order_quad(quad)
    w, h = size
    dst = np.array([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]], np.float32)
    m = cv2.getPerspectiveTransform(quad, dst)

    def warp(matrix: np.ndarray, size: tuple[int, int], flags: int = cv2.INTER_LINEAR) -> np.ndarray:
        return cv2.warpPerspective(image, matrix, size, flags=flags, borderMode=cv2.BORDER_REPLICATE)

    if regions is None:
        return warp(m, (w, h))
    out = np.zeros((h, w, *image.shape[2:]), image.dtype)
    inverse = cv2.invert(m, flags=cv2.DECOMP_LU)[1]  # as warpPerspective inverts it
    for x0, y0, x1, y1 in regions:
        if x0 == y0 == 0:
            # At the card's own corner: the same map, and a width OpenCV's vector loop covers as it
            # does the whole card's (a multiple of 32 px), give the whole warp's pixels exactly.
            out[:y1, :x1] = warp(m, (min(w, -(-x1 // 32) * 32), y1))[:, :x1]
            continue
        # Elsewhere the map shifted to the box: its pixels may differ from the whole warp's by a
        # grey level where a coordinate rounds the other way.
        shifted = inverse.copy()
        shifted[:, 2] += inverse[:, 0] * x0 + inverse[:, 1] * y0
        out[y0:y1, x0:x1] = warp(shifted, (x1 - x0, y1 - y0), cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP)
    return out
