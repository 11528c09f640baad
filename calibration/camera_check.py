"""The camera step's measurements: pure functions over BGR uint8 frames.

- `meters`: brightness, clipped and dark shares, and the edge blur: how many px a sharp
  edge is smeared over (the sigma of a gaussian blur that would smear a perfect step so).
  Blur is measured on edges of strong contrast only, as a step's height over its steepest
  slope, so it does not depend on how much there is in the picture: the variance of the
  Laplacian, the usual meter, read 26 on a sharp empty green cloth and 56 on the same cloth
  with a blurred card (docs/calibration-camera.md). A plain empty table has no such edges:
  its blur is unknown (None) until a card is laid.
- `verdict`: "good" or what to do, in one line, from the meters and the card's width.
- `find_pile_area`: the card laid in the middle, found as the change from the empty table,
  and the pile's area round it.
- `draw_snapshot`: all of that drawn on the frame, for the saved PNG and the kiosk page.
"""

from __future__ import annotations

from typing import NamedTuple

import cv2
import numpy as np

from referee.vision.outline import change_outline, find_top_card, order_quad, side_lengths

# Edge blur: a step of at least STEP_CONTRAST grey levels within EDGE_REACH px either side.
STEP_CONTRAST = 40
EDGE_REACH = 8
MAX_SIGMA = EDGE_REACH / 2  # blurrier edges than this are not measured: None ("no sharp edge")
MIN_EDGE_PX = 100  # fewer edge pixels than this and the blur is unknown
BLUR_MAX = 1.6  # px on the card; see docs/calibration-camera.md for the recogniser against blur
CLIP_LEVEL = 250  # grey levels at or above this are burnt out
DARK_LEVEL = 16  # ... at or below this, crushed to black
CLIPPED_MAX = 0.05  # the share of the frame burnt out that makes it too bright
HIGHLIGHTS_MIN = 20  # the frame's 99th percentile below this: near black (a dark cloth reads 29-31)
CARD_DARK = 100  # the card's median grey: white paper exposed darker than this is too dark
CARD_BRIGHT = 245  # ... lighter, burnt out
CARD_PX = (130, 300)  # the card's width aimed at; the recogniser reads 120..400 px
PILE_HALF = 1.5  # the pile area's half side in card widths: a card at any angle, dropped 0.6 w off
CENTRE_PLAY = 0.15  # how far from the frame's centre the card may lie, as a share of the frame
SMALL_WIDTH = 160  # the change between frames is found on a copy this wide
CHANGE_LEVEL = 12.0  # grey levels (half the summed channel differences) that count as a change


class Meters(NamedTuple):
    brightness: float  # median grey 0..255: of the card when one is given, else of the frame
    highlights: float  # the frame's 99th percentile grey
    clipped: float  # the frame's share of burnt-out pixels (>= CLIP_LEVEL)
    dark: float  # the frame's share of black pixels (<= DARK_LEVEL)
    blur_px: float | None  # edge blur in px at the frame's resolution; None: no strong edges


class Verdict(NamedTuple):
    code: str  # good, too_dark, too_bright, blurry, move_closer, move_back, no_card, off_centre, off_frame
    message: str  # one line for the user

    @property
    def good(self) -> bool:
        return self.code == "good"


class PileArea(NamedTuple):
    quad: np.ndarray  # the card's corners, 4 x 2 float32, clockwise from a short side
    card_px: float  # the card's width (its short sides' mean) in px
    centre: tuple[float, float]
    box: tuple[int, int, int, int]  # x0, y0, x1, y1 (exclusive), clipped to the frame


def _grey(image: np.ndarray) -> np.ndarray:
    return image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)


def _quad_mask(shape: tuple[int, int], quad: np.ndarray, grow: int) -> np.ndarray:
    mask = np.zeros(shape, np.uint8)
    cv2.fillConvexPoly(mask, np.round(quad).astype(np.int32), 255)
    kernel = np.ones((2 * abs(grow) + 1,) * 2, np.uint8)
    return cv2.dilate(mask, kernel) if grow > 0 else cv2.erode(mask, kernel) if grow < 0 else mask


def edge_blur(grey: np.ndarray, mask: np.ndarray | None = None) -> float | None:
    """The blur of the sharpest edges, in px: a gaussian's sigma that smears a step as much.

    A step of height A blurred by sigma has a steepest slope of A / (sigma * sqrt(2 pi)):
    so sigma = A / (slope * sqrt(2 pi)), whatever the edge's contrast. A is the grey range
    within EDGE_REACH px, the slope the gradient at the edge's crest (a local maximum).
    The lower quartile is taken: soft shading and shadows only look blurrier than the lens
    is, never sharper. Sampling alone makes a perfect step read about 0.85 px.
    """
    g = grey.astype(np.float32)
    # A 3x3 Sobel is 8 times the slope per px.
    gx = cv2.Sobel(g, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(g, cv2.CV_32F, 0, 1, ksize=3)
    slope = cv2.magnitude(gx, gy) * (1 / 8)
    reach = np.ones((2 * EDGE_REACH + 1,) * 2, np.uint8)
    contrast = cv2.dilate(grey, reach).astype(np.float32) - cv2.erode(grey, reach)
    crest = (slope >= cv2.dilate(slope, np.ones((3, 3), np.uint8))) & (contrast >= STEP_CONTRAST)
    # Only slopes a step within reach could make: noise on a flat patch beside an edge has
    # crests of its own, whose contrast is the edge's and whose slope is nothing.
    crest &= slope * (np.sqrt(2 * np.pi) * MAX_SIGMA) >= contrast
    if mask is not None:
        crest &= mask > 0
    if np.count_nonzero(crest) < MIN_EDGE_PX:
        return None
    sigma = contrast[crest] / (np.sqrt(2 * np.pi) * slope[crest])
    return float(np.percentile(sigma, 25))


def meters(image: np.ndarray, quad: np.ndarray | None = None) -> Meters:
    """The frame's meters. With the card's `quad`, brightness is the card's (white paper: a
    known grey) and blur is measured on the card and its outline, not round it (a busy cloth's
    edges and the card's shadow are softer than the lens); without, the whole frame's."""
    grey = _grey(image)
    hist = cv2.calcHist([grey], [0], None, [256], [0, 256]).ravel()
    cum = np.cumsum(hist)
    n = float(cum[-1])
    highlights = float(np.searchsorted(cum, 0.99 * n))
    clipped = float(hist[CLIP_LEVEL:].sum() / n)
    dark = float(hist[: DARK_LEVEL + 1].sum() / n)
    if quad is None:
        return Meters(float(np.searchsorted(cum, 0.5 * n)), highlights, clipped, dark, edge_blur(grey))
    inside = _quad_mask(grey.shape, quad, -4)
    paper = grey[inside > 0]
    brightness = float(np.median(paper)) if paper.size else float(np.searchsorted(cum, 0.5 * n))
    return Meters(brightness, highlights, clipped, dark, edge_blur(grey, _quad_mask(grey.shape, quad, 2)))


def verdict(m: Meters, card_px: float | None) -> Verdict:
    """Good, or the one thing to fix first. `card_px`: the laid card's width, None before one
    is laid (then brightness and blur cannot be judged on paper: only a burnt-out or black
    picture is refused, and blur waits for the card)."""
    b = round(m.brightness)
    if m.clipped > CLIPPED_MAX or (card_px is not None and m.brightness > CARD_BRIGHT):
        return Verdict(
            "too_bright",
            f"Too bright: dim the lamp or turn it away from the table ({m.clipped:.0%} burnt out, "
            f"brightness {b} of 255)",
        )
    if (card_px is None and m.highlights < HIGHLIGHTS_MIN) or (card_px is not None and b < CARD_DARK):
        return Verdict("too_dark", f"Too dark: add light or open the curtains (brightness {b} of 255)")
    if card_px is None:
        return Verdict("good", f"Light is fine (brightness {b} of 255)")
    if m.blur_px is None or m.blur_px > BLUR_MAX:
        blur = "no sharp edge" if m.blur_px is None else f"edges smeared over {m.blur_px:.1f} px"
        return Verdict("blurry", f"Blurry: turn the lens's focus ring slowly ({blur}, aim under {BLUR_MAX})")
    lo, hi = CARD_PX
    if card_px < lo:
        return Verdict(
            "move_closer",
            f"Move the camera closer: the card is {card_px:.0f} px wide, aim for {lo}-{hi}",
        )
    if card_px > hi:
        return Verdict(
            "move_back",
            f"Move the camera back: the card is {card_px:.0f} px wide, aim for {lo}-{hi}",
        )
    return Verdict("good", f"Good: card {card_px:.0f} px wide, edges {m.blur_px:.1f} px, brightness {b}")


def _small(image: np.ndarray) -> np.ndarray:
    h, w = image.shape[:2]
    size = (SMALL_WIDTH, max(2, round(SMALL_WIDTH * h / w)))
    return cv2.GaussianBlur(cv2.resize(image, size, interpolation=cv2.INTER_AREA), (5, 5), 1.0)


def change_mask(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """Where `after` differs from `before` (both BGR, one size), on SMALL_WIDTH copies: uint8,
    255 = changed. A whole-picture brightness step (auto-exposure) is divided out first."""
    a, b = _small(before).astype(np.float32), _small(after).astype(np.float32)
    # The median ratio is the exposure's step, whatever a card does to less than half the picture.
    scale = float(np.median((a[..., 1] + 1) / (b[..., 1] + 1)))
    diff = np.abs(a - b * scale).sum(axis=2) * 0.5
    mask = (diff > CHANGE_LEVEL).astype(np.uint8) * 255
    return cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((2, 2), np.uint8))


def _card_blob(mask: np.ndarray) -> np.ndarray | None:
    """The biggest changed blob not touching the border (a hand does), if it could be a card."""
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask, 8)
    h, w = mask.shape
    best, area = 0, 0
    for i in range(1, n):
        x, y, bw, bh, a = stats[i]
        if x > 0 and y > 0 and x + bw < w and y + bh < h and a > area:
            best, area = i, a
    # A card at the smallest width the recogniser takes (90 px at 640) covers about 0.5 % of it.
    if area < 0.002 * h * w:
        return None
    return np.where(labels == best, 255, 0).astype(np.uint8)


def find_pile_area(empty_frame: np.ndarray, frame_with_card: np.ndarray) -> PileArea | None:
    """The card laid since `empty_frame`, found in `frame_with_card`, and the pile's area round
    it; None when nothing card-sized changed or no card outline is found there."""
    if empty_frame.shape != frame_with_card.shape:
        return None
    blob = _card_blob(change_mask(empty_frame, frame_with_card))
    if blob is None:
        return None
    h, w = frame_with_card.shape[:2]
    # As the watcher hints the recogniser: the change blown up to full size, gaps closed.
    hint = cv2.resize(blob, (w, h), interpolation=cv2.INTER_NEAREST)
    hint = cv2.dilate(hint, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (7, 7)))
    quad, sure = change_outline(frame_with_card, hint)
    if not sure:
        # Not whole: the full search round the change puts a stray side right.
        searched = find_top_card(frame_with_card, hint)
        quad = searched if searched is not None else quad
    if quad is None:
        return None
    quad = order_quad(quad)
    sides = side_lengths(quad)
    card_px = float((sides[0] + sides[2]) / 2)
    cx, cy = (float(v) for v in quad.mean(axis=0))
    half = PILE_HALF * card_px
    box = (
        max(0, int(np.floor(cx - half))),
        max(0, int(np.floor(cy - half))),
        min(w, int(np.ceil(cx + half)) + 1),
        min(h, int(np.ceil(cy + half)) + 1),
    )
    return PileArea(quad, card_px, (cx, cy), box)


def placement_verdict(area: PileArea, size: tuple[int, int]) -> Verdict:
    """Whether the card lies where the pile will be: wholly in the picture, near its centre."""
    w, h = size
    q = area.quad
    if (q[:, 0] < 2).any() or (q[:, 1] < 2).any() or (q[:, 0] > w - 3).any() or (q[:, 1] > h - 3).any():
        return Verdict("off_frame", "The card is partly out of the picture: lay it in the middle")
    cx, cy = area.centre
    dx, dy = (cx - (w - 1) / 2) / w, (cy - (h - 1) / 2) / h
    if abs(dx) > CENTRE_PLAY or abs(dy) > CENTRE_PLAY:
        where = ("right" if dx > 0 else "left") if abs(dx) >= abs(dy) else ("low" if dy > 0 else "high")
        return Verdict("off_centre", f"The card lies too far {where} in the picture: lay it in the middle")
    return Verdict("good", "The card lies in the middle")


_GREEN, _YELLOW, _RED, _WHITE = (80, 220, 80), (40, 220, 240), (60, 60, 230), (255, 255, 255)


def draw_snapshot(
    frame: np.ndarray, area: PileArea | None, m: Meters | None, v: Verdict | None
) -> np.ndarray:
    """A copy of `frame` with the card's outline, the pile area's box, the meters and the verdict."""
    out = frame.copy() if frame.ndim == 3 else cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR)
    w = out.shape[1]
    thick = max(1, round(w / 400))
    if area is not None:
        x0, y0, x1, y1 = area.box
        cv2.rectangle(out, (x0, y0), (x1 - 1, y1 - 1), _YELLOW, thick, cv2.LINE_AA)
        cv2.polylines(out, [np.round(area.quad).astype(np.int32)], True, _GREEN, thick, cv2.LINE_AA)
    lines: list[tuple[str, tuple[int, int, int]]] = []
    if m is not None:
        blur = "-" if m.blur_px is None else f"{m.blur_px:.1f} px"
        text = f"brightness {m.brightness:.0f}  edges {blur}  burnt {m.clipped:.1%}  black {m.dark:.1%}"
        if area is not None:
            text += f"  card {area.card_px:.0f} px"
        lines.append((text, _WHITE))
    if v is not None:
        lines.append((v.message, _GREEN if v.good else _RED))
    scale = max(0.4, w / 1600)
    step = round(30 * scale) + 6
    if lines:
        # A dark band behind the text, so that it reads on any table.
        band = out[: step * len(lines) + 6]
        band[:] = (band * 0.35).astype(np.uint8)
    for i, (text, colour) in enumerate(lines):
        org = (6, step * (i + 1))
        cv2.putText(out, text, org, cv2.FONT_HERSHEY_SIMPLEX, scale, colour, thick, cv2.LINE_AA)
    return out
