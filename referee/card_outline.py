"""The top card of the pile: its outline as a quadrilateral, and the card warped upright.

Pure functions over BGR uint8 images, cheap enough for a Pi frame loop. With a change
mask (the new card) the search covers only the area round it; otherwise rectangles come
from two sources, edges (Canny on the blurred L channel, which works on light tables) and
paper (bright, low-saturation pixels far from the table colour), scored by how card-like
they are and how much of their outline has edges under it: on a pile only the top card's
outline is whole.
"""

from __future__ import annotations

import cv2
import numpy as np

from .render import ASPECT

WARP_SIZE = (200, 280)
MIN_WIDTH, MAX_WIDTH = 90, 480  # card widths accepted, a margin round 120..400 px
WORK_WIDTH = 640  # frames wider than this are searched at this width


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
