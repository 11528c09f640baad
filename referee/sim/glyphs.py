"""The simulator's text: OpenCV 5's putText faces, drawn the same on every OpenCV.

`cv2.putText` with a Hershey font draws a TrueType face (Rubik, built into the library) on
OpenCV 5 and Hershey's thin stroke fonts on OpenCV 4, the Pi's: the simulator's card faces
would be other pictures on each stack, and the tests and the index model's training set
with them. So the simulator draws its text here, from outlines it owns
(referee/data/glyphs.json, made from OpenCV 5's face by tools/make_glyphs.py), with numpy
alone: the same pixels on OpenCV 4.6, 4.10 and 5.0, and nearly those of 5.0's own putText.

`put_text` and `text_size` take `cv2.putText`'s and `cv2.getTextSize`'s arguments and follow
OpenCV 5's rules for them (imgproc's drawing_text.cpp): the font picks a weight from the
thickness and a pixel size from the scale; each glyph is rasterised as stb_truetype (5.0's
rasteriser) does it, in float32, at a whole-pixel pen position, and blended into the image
with its coverage. Measured against 5.0's own putText (tests/test_glyphs.py, when pip's
OpenCV 5 is installed): the same widths and heights, and the same pixels but for about 1 in
4,000 inked pixels, which differ by one grey level (float rounding not reproduced).
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path

import numpy as np

GLYPHS_PATH = Path(__file__).parents[1] / "data" / "glyphs.json"
WEIGHTS = (400, 600, 800)
FLATNESS = np.float32(0.35)  # px: how far stb_truetype lets a flattened curve stray from the outline

# cv2.FONT_HERSHEY_* -> (OpenCV 5's size factor, weight when thickness <= 1, weight otherwise).
# 5.0 has no serif face: the "serif" fonts fall back to its sans face, as here; FONT_ITALIC
# (16) is ignored by 5.0's putText for these fonts, and so here.
HERSHEY: dict[int, tuple[float, int, int]] = {
    0: (3.7, 400, 600),  # SIMPLEX
    1: (6.6, 400, 800),  # PLAIN
    2: (3.7, 600, 800),  # DUPLEX
    3: (3.7, 400, 800),  # COMPLEX
    4: (3.7, 600, 800),  # TRIPLEX
    5: (4.6, 400, 800),  # COMPLEX_SMALL
}
ITALIC = 16


class Glyph:
    """One character rasterised at one size: its coverage (uint8) placed relative to the pen."""

    __slots__ = ("alpha", "left", "top", "advance", "below")

    def __init__(self, alpha: np.ndarray, left: int, top: int, advance: int, below: int) -> None:
        self.alpha = alpha  # coverage, 0..255
        self.left = left  # alpha's column 0, relative to the pen
        self.top = top  # alpha's row 0, relative to the baseline (negative: above it)
        self.advance = advance  # px to the next pen position
        self.below = below  # px the glyph's box reaches below the baseline


@lru_cache(maxsize=1)
def _face() -> dict[str, object]:
    return json.loads(GLYPHS_PATH.read_text())


def _weight_and_size(font: int, scale: float, thickness: int) -> tuple[int, int]:
    try:
        factor, thin, thick = HERSHEY[font & ~ITALIC]
    except KeyError:
        raise ValueError(f"glyphs: font {font} is not one of OpenCV's FONT_HERSHEY_* 0..5") from None
    # cvRound is round-half-to-even, like Python's round.
    return (thin if thickness <= 1 else thick), round(100 * scale / factor)


# The rasteriser below follows stb_truetype's (public domain; OpenCV 5 draws putText with it):
# the same outline from the same integer points, the same curve flattening, the same exact-area
# coverage, all in float32 and in the same order, so that its pixels are those of OpenCV 5.

F = np.float32


def _shape(points: list[list[float]]) -> list[tuple[str, int, int, int, int]]:
    """A TrueType contour (x, y, on-curve) as stb_truetype's vertices: move, lines and quadratic
    curves ("m"/"l"/"q", x, y, control x, control y); implied on-curve points halve with >> 1."""
    pts = [(int(p[0]), int(p[1]), bool(p[2])) for p in points]
    x, y, on = pts[0]
    start_off = not on
    scx = scy = cx = cy = 0
    rest = pts[1:]
    if start_off:  # begin on the curve: the next point, or the midpoint to it
        scx, scy = x, y
        nx, ny, non = pts[1]
        if non:
            sx, sy = nx, ny
            rest = pts[2:]
        else:
            sx, sy = (x + nx) >> 1, (y + ny) >> 1
    else:
        sx, sy = x, y
    out = [("m", sx, sy, 0, 0)]
    was_off = False
    for x, y, on in rest:
        if not on:
            if was_off:
                out.append(("q", (cx + x) >> 1, (cy + y) >> 1, cx, cy))
            cx, cy, was_off = x, y, True
        else:
            out.append(("q", x, y, cx, cy) if was_off else ("l", x, y, 0, 0))
            was_off = False
    if start_off:
        if was_off:
            out.append(("q", (cx + scx) >> 1, (cy + scy) >> 1, cx, cy))
        out.append(("q", sx, sy, scx, scy))
    else:
        out.append(("q", sx, sy, cx, cy) if was_off else ("l", sx, sy, 0, 0))
    return out


def _flatten(shape: list[tuple[str, int, int, int, int]], flatness_sq: np.float32) -> list[tuple]:
    """The contour's polyline in font units (float32), curves halved until flat enough."""
    out: list[tuple[np.float32, np.float32]] = []
    x = y = F(0)
    for kind, vx, vy, cx, cy in shape:
        if kind == "q":
            _tesselate(out, x, y, F(cx), F(cy), F(vx), F(vy), flatness_sq, 0)
        else:
            out.append((F(vx), F(vy)))
        x, y = F(vx), F(vy)
    return out


def _tesselate(out: list, x0, y0, x1, y1, x2, y2, flatness_sq, depth: int) -> None:
    mx = (x0 + F(2) * x1 + x2) / F(4)
    my = (y0 + F(2) * y1 + y2) / F(4)
    dx = (x0 + x2) / F(2) - mx
    dy = (y0 + y2) / F(2) - my
    if depth > 16:
        return
    if dx * dx + dy * dy > flatness_sq:
        _tesselate(out, x0, y0, (x0 + x1) / F(2), (y0 + y1) / F(2), mx, my, flatness_sq, depth + 1)
        _tesselate(out, mx, my, (x1 + x2) / F(2), (y1 + y2) / F(2), x2, y2, flatness_sq, depth + 1)
    else:
        out.append((x2, y2))


def _sort_edges(p: list[list], n: int) -> None:
    """stb_truetype's edge sort (by top y; a median-of-three quicksort, then insertion): edges of
    equal height keep its order, and with it the order the coverage is summed in."""
    _quicksort(p, 0, n)
    for i in range(1, n):
        t = p[i]
        j = i
        while j > 0 and t[1] < p[j - 1][1]:
            p[j] = p[j - 1]
            j -= 1
        if i != j:
            p[j] = t


def _quicksort(p: list[list], lo: int, n: int) -> None:
    while n > 12:
        m = n >> 1
        c01 = p[lo][1] < p[lo + m][1]
        c12 = p[lo + m][1] < p[lo + n - 1][1]
        if c01 != c12:
            c = p[lo][1] < p[lo + n - 1][1]
            z = 0 if c == c12 else n - 1
            p[lo + z], p[lo + m] = p[lo + m], p[lo + z]
        p[lo], p[lo + m] = p[lo + m], p[lo]
        i, j = 1, n - 1
        while True:
            while p[lo + i][1] < p[lo][1]:
                i += 1
            while p[lo][1] < p[lo + j][1]:
                j -= 1
            if i >= j:
                break
            p[lo + i], p[lo + j] = p[lo + j], p[lo + i]
            i += 1
            j -= 1
        if j < n - i:
            _quicksort(p, lo, j)
            lo, n = lo + i, n - i
        else:
            _quicksort(p, lo + i, n - i)
            n = j


class _Active:
    __slots__ = ("fx", "fdx", "fdy", "direction", "sy", "ey")

    def __init__(self, edge: list, off_x: int, start: np.float32) -> None:
        x0, y0, x1, y1, invert = edge
        dxdy = (x1 - x0) / (y1 - y0)
        self.fdx = dxdy
        self.fdy = F(1) / dxdy if dxdy != 0 else F(0)
        self.fx = x0 + dxdy * (start - y0) - F(off_x)
        self.direction = F(1) if invert else F(-1)
        self.sy, self.ey = y0, y1


def _clipped(line: np.ndarray, x: int, e: _Active, x0, y0, x1, y1) -> None:
    """Coverage of a piece of edge that does not cross the pixel column x's sides."""
    if y0 == y1 or y0 > e.ey or y1 < e.sy:
        return
    if y0 < e.sy:
        x0 += (x1 - x0) * (e.sy - y0) / (y1 - y0)
        y0 = e.sy
    if y1 > e.ey:
        x1 += (x1 - x0) * (e.ey - y1) / (y1 - y0)
        y1 = e.ey
    if x0 <= x and x1 <= x:
        line[x] += e.direction * (y1 - y0)
    elif x0 >= x + 1 and x1 >= x + 1:
        pass
    else:
        line[x] += e.direction * (y1 - y0) * (F(1) - ((x0 - F(x)) + (x1 - F(x))) / F(2))


def _fill(line: np.ndarray, fill: np.ndarray, width: int, active: list[_Active], y_top: np.float32) -> None:
    """Add every active edge's exact coverage of this pixel row (`fill` is the sum carried right;
    its index 0 is the row's column -1)."""
    y_bottom = y_top + F(1)
    for e in active:
        if e.fdx == 0:
            _fill_upright(line, fill, width, e, y_top, y_bottom)
            continue
        x0, dx = e.fx, e.fdx
        # Where the edge enters and leaves the row (its own ends may lie inside it).
        if e.sy > y_top:
            x_top, sy0 = x0 + dx * (e.sy - y_top), e.sy
        else:
            x_top, sy0 = x0, y_top
        if e.ey < y_bottom:
            x_bottom, sy1 = x0 + dx * (e.ey - y_top), e.ey
        else:
            x_bottom, sy1 = x0 + dx, y_bottom
        if 0 <= x_top < width and 0 <= x_bottom < width:
            _fill_inside(line, fill, e, y_top, (x_top, sy0), (x_bottom, sy1))
        else:
            _fill_cut(line, width, e, y_top)


def _fill_upright(
    line: np.ndarray, fill: np.ndarray, width: int, e: _Active, y_top: np.float32, y_bottom: np.float32
) -> None:
    """A vertical edge's coverage of the row."""
    x0 = e.fx
    if x0 < width:
        if x0 >= 0:
            _clipped(line, int(x0), e, x0, y_top, x0, y_bottom)
            _clipped(fill, int(x0) + 1, e, x0, y_top, x0, y_bottom)
        else:
            _clipped(fill, 0, e, x0, y_top, x0, y_bottom)


def _fill_inside(
    line: np.ndarray, fill: np.ndarray, e: _Active, y_top: np.float32, enters: tuple, leaves: tuple
) -> None:
    """The coverage of an edge that crosses the row inside the box, from `enters` to `leaves`
    (each (x, y))."""
    (x_top, sy0), (x_bottom, sy1) = enters, leaves
    y_bottom = y_top + F(1)
    if int(x_top) == int(x_bottom):  # within one pixel
        x = int(x_top)
        height = (sy1 - sy0) * e.direction
        line[x] += ((F(x) + F(1) - x_top) + (F(x) + F(1) - x_bottom)) / F(2) * height
        fill[x + 1] += height
        return
    x0, dy = e.fx, e.fdy
    if x_top > x_bottom:  # flip the row upside down: the signed area is the same
        sy0, sy1 = y_bottom - (sy1 - y_top), y_bottom - (sy0 - y_top)
        x_top, x_bottom = x_bottom, x_top
        dy = -dy
        x0 = e.fx + e.fdx
    x1, x2 = int(x_top), int(x_bottom)
    y_crossing = y_top + dy * (F(x1 + 1) - x0)
    y_final = y_top + dy * (F(x2) - x0)
    y_crossing = min(y_crossing, y_bottom)
    sign = e.direction
    area = sign * (y_crossing - sy0)
    line[x1] += area * (F(x1 + 1) - x_top) / F(2)
    if y_final > y_bottom:
        y_final = y_bottom
        if x2 - (x1 + 1) != 0:
            dy = (y_final - y_crossing) / F(x2 - (x1 + 1))
    step = sign * dy * F(1)
    for x in range(x1 + 1, x2):
        line[x] += area + step / F(2)
        area += step
    right = F(x2) + F(1)
    line[x2] += area + sign * (((right - F(x2)) + (right - x_bottom)) / F(2) * (sy1 - y_final))
    fill[x2 + 1] += sign * (sy1 - sy0)


def _fill_cut(line: np.ndarray, width: int, e: _Active, y_top: np.float32) -> None:
    """The coverage of an edge that leaves the box in this row: cut at each pixel's sides."""
    x0, dx = e.fx, e.fdx
    x3, y3 = x0 + dx, y_top + F(1)
    for x in range(width):
        fx1, fx2 = F(x), F(x + 1)
        y1 = (F(x) - x0) / dx + y_top
        y2 = (F(x + 1) - x0) / dx + y_top
        if x0 < fx1 and x3 > fx2:
            parts = ((x0, y_top, fx1, y1), (fx1, y1, fx2, y2), (fx2, y2, x3, y3))
        elif x3 < fx1 and x0 > fx2:
            parts = ((x0, y_top, fx2, y2), (fx2, y2, fx1, y1), (fx1, y1, x3, y3))
        elif (x0 < fx1 and x3 > fx1) or (x3 < fx1 and x0 > fx1):
            parts = ((x0, y_top, fx1, y1), (fx1, y1, x3, y3))
        elif (x0 < fx2 and x3 > fx2) or (x3 < fx2 and x0 > fx2):
            parts = ((x0, y_top, fx2, y2), (fx2, y2, x3, y3))
        else:
            parts = ((x0, y_top, x3, y3),)
        for a, b, c, d in parts:
            _clipped(line, x, e, a, b, c, d)


def _rasterise(
    polys: list[list[tuple]], s: np.float32, left: int, top: int, width: int, height: int
) -> np.ndarray:
    """Exact-area coverage (0..255) of the polylines (font units, y up) at scale `s`, in the box
    whose corner is (left, top) px, y down."""
    edges = []
    for p in polys:
        j = len(p) - 1
        for k in range(len(p)):
            if p[j][1] != p[k][1]:  # horizontal edges add nothing
                a, b, invert = (j, k, True) if p[j][1] > p[k][1] else (k, j, False)
                edges.append(
                    [p[a][0] * s + F(0), p[a][1] * -s + F(0), p[b][0] * s + F(0), p[b][1] * -s + F(0), invert]
                )
            j = k
    n = len(edges)
    _sort_edges(edges, n)
    edges.append([F(0), F(top + height) + F(1), F(0), F(0), False])  # the sentinel
    out = np.zeros((height, width), np.uint8)
    active: list[_Active] = []
    i = 0
    for row in range(height):
        y_top, y_bottom = F(top + row), F(top + row + 1)
        line = np.zeros(width, np.float32)
        fill = np.zeros(width + 1, np.float32)
        active = [z for z in active if z.ey > y_top]
        while edges[i][1] <= y_bottom:
            e = edges[i]
            if e[1] != e[3]:
                z = _Active(e, left, y_top)
                if row == 0 and top != 0 and z.ey < y_top:
                    z.ey = y_top
                active.insert(0, z)
            i += 1
        if active:
            _fill(line, fill, width, active, y_top)
        total = F(0)
        for x in range(width):
            total += fill[x]
            k = F(abs(line[x] + total)) * F(255) + F(0.5)
            out[row, x] = min(int(k), 255)
        for z in active:
            z.fx += z.fdx
    return out


@lru_cache(maxsize=4096)
def glyph(char: str, weight: int, size: int) -> Glyph:
    """`char` of the face at `weight`, `size` px high (the face's ascent), as 5.0 places it."""
    face = _face()
    table = face["weights"][str(weight)]  # type: ignore[index]
    if char not in table:
        raise ValueError(f"glyphs: no glyph for {char!r} (the simulator draws printable ASCII)")
    advance, contours = table[char]
    s = F(size) / F(face["ascent"])  # OpenCV's float scale: the ascent is `size` px
    step = round(float(F(advance) * s) * 64) >> 6
    if not contours:
        return Glyph(np.zeros((0, 0), np.uint8), 0, 0, step, 0)
    xs = [p[0] for c in contours for p in c]
    ys = [p[1] for c in contours for p in c]
    # The glyph's box (all its points, as TrueType's header box), whole pixels, y down.
    left, right = math.floor(F(min(xs)) * s), math.ceil(F(max(xs)) * s)
    top, bottom = math.floor(F(-max(ys)) * s), math.ceil(F(-min(ys)) * s)
    flatness = FLATNESS / s
    polys = [_flatten(_shape(c), flatness * flatness) for c in contours]
    alpha = _rasterise(polys, s, left, top, right - left, bottom - top)
    alpha.setflags(write=False)  # cached: shared by every caller
    return Glyph(alpha, left, top, step, bottom)


def text_size(text: str, font: int, scale: float, thickness: int) -> tuple[tuple[int, int], int]:
    """((width, height), baseline) as `cv2.getTextSize` gives them on OpenCV 5."""
    weight, size = _weight_and_size(font, scale, thickness)
    pen, below = 0, 0
    for ch in text:
        g = glyph(ch, weight, size)
        pen += g.advance
        below = max(below, g.below)
    height = round(float(np.float32(_face()["ascent"]) * np.float32(size / _face()["ascent"])))
    return (pen + 1 if text else 0, height if text else 0), below


def put_text(
    img: np.ndarray,
    text: str,
    org: tuple[int, int],
    font: int,
    scale: float,
    colour: tuple[int, ...] | int,
    thickness: int = 1,
) -> None:
    """Draw `text` in place with its baseline starting at `org`, as `cv2.putText` (any line type)."""
    weight, size = _weight_and_size(font, scale, thickness)
    ink = np.array([colour] if isinstance(colour, int) else colour[: img.shape[2] if img.ndim == 3 else 1])
    ink = np.clip(np.round(ink), 0, 255).astype(np.int32)
    pen_x, pen_y = int(org[0]), int(org[1])
    for ch in text:
        g = glyph(ch, weight, size)
        x0, y0 = pen_x + g.left, pen_y + g.top
        h, w = g.alpha.shape
        ya, yb = max(y0, 0), min(y0 + h, img.shape[0])
        xa, xb = max(x0, 0), min(x0 + w, img.shape[1])
        if ya < yb and xa < xb:
            a = g.alpha[ya - y0 : yb - y0, xa - x0 : xb - x0].astype(np.int32)
            region = img[ya:yb, xa:xb]
            if img.ndim == 3:
                a = a[:, :, None]
            blended = (region.astype(np.int32) * (255 - a) + ink * a + 127) // 255
            region[...] = np.where(a > 0, blended, region).astype(img.dtype)
        pen_x += g.advance
