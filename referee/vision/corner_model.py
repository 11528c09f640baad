"""The corner model: a small convolutional network that marks the top card's four corners.

The outline model's cover (`outline_model`) says roughly where the top card lies, a cell of
20 px at 1280x720; fitted to a card's shape it can be a third of a card's width off, too far for
the edge search to pull in. Where a side is lost (a blurred card on a white table, stripes) the
search then finds no outline at all. This network looks at the frame 384 px wide and marks each
of the top card's corners at a quarter of that size (a cell is 13 px of a 1280x720 frame), with
the corner's offset within its cell; four marks that make a card's shape are a box for the edge
search to refine (`boxes`).

Plain numpy, as the outline model: nine convolutions, about 114,000 weights, made by
`tools/train_corner_model.py` from the generator that tunes (never from the held-out scenes) and
shipped in `referee/data/corner_model.npz`.
"""

from __future__ import annotations

import itertools
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from referee.vision.outline_model import conv, features, load_layers, network_input

MODEL_PATH = Path(__file__).parents[1] / "data" / "corner_model.npz"
INPUT_WIDTH = 384  # the frame's long side as the network sees it
OUT_STRIDE = 4  # its marks are at a quarter of the input's size, each with its offset in the cell
_LAYERS = ("enc1", "enc2", "enc3", "ctx1", "ctx2", "ctx3", "up", "fine", "head")
_PEAKS = 8  # the strongest marks that boxes are made of
_SHAPE = (0.5, 0.9)  # a box's short sides for its long ones: a card (0.6 to 0.74), seen up to 25 deg off
_SQUARE = 0.4  # the largest cosine of a box's corner angles (66 to 114 degrees)


def layer_names() -> list[str]:
    return list(_LAYERS)


@lru_cache(maxsize=1)
def _weights() -> dict[str, tuple[np.ndarray, np.ndarray]] | None:
    return load_layers(MODEL_PATH, _LAYERS)


def available() -> bool:
    return _weights() is not None


# (heat, offsets, factor): each cell's mark 0..1 (rows x cols), each cell's corner offset from its
# centre in cells (rows x cols x 2: across, down), and the factor from frame px to the network's
# input px; the frame's way round (a portrait photo's marks are turned back).
Marks = tuple[np.ndarray, np.ndarray, float]


def marks(image: np.ndarray) -> Marks | None:
    """The corner marks of a frame (see `Marks`), or None without the model's weights."""
    weights = _weights()
    if weights is None:
        return None
    x, scale, lying, rows = network_input(image, INPUT_WIDTH)
    v = features(x, weights)  # the outline model's trunk, its own weights
    v = np.maximum(conv(v, weights["fine"], 3), 0) + v
    out = conv(v, weights["head"], 1)[: rows // OUT_STRIDE]
    heat = (1 / (1 + np.exp(-np.clip(out[..., 0], -30, 30)))).astype(np.float32)
    offsets = out[..., 1:].astype(np.float32)
    if lying:
        heat, offsets = (
            np.ascontiguousarray(heat.T),
            np.ascontiguousarray(offsets.transpose(1, 0, 2)[..., ::-1]),
        )
    return heat, offsets, scale


def peaks(found: Marks, least: float = 0.2) -> list[tuple[float, float, float]]:
    """The marks that are the highest of their 3x3 cells and at least `least`, strongest first: each
    (x, y, mark), x and y in frame px."""
    heat, offsets, scale = found
    top = (heat == cv2.dilate(heat, np.ones((3, 3), np.uint8))) & (heat >= least)
    rows, cols = np.nonzero(top)
    out = []
    for i, j in zip(rows.tolist(), cols.tolist(), strict=True):
        u, v = j + float(offsets[i, j, 0]), i + float(offsets[i, j, 1])
        x, y = u * OUT_STRIDE + (OUT_STRIDE - 1) / 2, v * OUT_STRIDE + (OUT_STRIDE - 1) / 2
        out.append(((x + 0.5) / scale - 0.5, (y + 0.5) / scale - 0.5, float(heat[i, j])))
    return sorted(out, key=lambda p: -p[2])


def _card_like(quad: np.ndarray) -> bool:
    """Four points in order round a convex box of a card's shape, seen up to 25 degrees off."""
    sides = np.linalg.norm(quad - np.roll(quad, -1, axis=0), axis=1)
    if sides.min() < 8:
        return False
    edges = np.roll(quad, -1, axis=0) - quad
    turns = edges[:, 0] * np.roll(edges, -1, axis=0)[:, 1] - edges[:, 1] * np.roll(edges, -1, axis=0)[:, 0]
    if not ((turns > 0).all() or (turns < 0).all()):
        return False
    unit = edges / sides[:, None]
    if np.abs((unit * np.roll(unit, -1, axis=0)).sum(axis=1)).max() > _SQUARE:
        return False  # a corner far from square: not a card's, even seen from 25 degrees off
    short, long_ = sorted(((sides[0] + sides[2]) / 2, (sides[1] + sides[3]) / 2))
    even = (
        min(sides[0], sides[2]) / max(sides[0], sides[2]),
        min(sides[1], sides[3]) / max(sides[1], sides[3]),
    )
    return _SHAPE[0] <= short / long_ <= _SHAPE[1] and min(even) >= 0.75


def boxes(found: Marks, least: float = 0.2, most: int = 3) -> list[np.ndarray]:
    """Boxes (4 x 2, frame px) of four marked corners in a card's shape, the most strongly marked
    first: from the `_PEAKS` strongest marks, every four in order round their centre, and every
    three with the fourth put opposite the middle one (a corner off the frame or lost in a glare)."""
    points = peaks(found, least)[:_PEAKS]
    scored: list[tuple[float, np.ndarray]] = []
    for four in itertools.combinations(points, 4):
        quad = _round_centre(np.array([p[:2] for p in four]))
        if _card_like(quad):
            scored.append((sum(p[2] for p in four), quad))
    for three in itertools.combinations(points, 3):
        pts = np.array([p[:2] for p in three])
        for k in range(3):
            a, b, c = pts[(k + 1) % 3], pts[k], pts[(k + 2) % 3]  # b: the corner between a and c
            quad = _round_centre(np.array([a, b, c, a + c - b]))
            if _card_like(quad):
                scored.append((sum(p[2] for p in three) * 0.75, quad))
    scored.sort(key=lambda s: -s[0])
    out: list[np.ndarray] = []
    for _, quad in scored:
        if all(np.abs(quad - q).max() > 4 for q in out):
            out.append(quad.astype(np.float32))
        if len(out) == most:
            break
    return out


def _round_centre(pts: np.ndarray) -> np.ndarray:
    centre = pts.mean(axis=0)
    return pts[np.argsort(np.arctan2(pts[:, 1] - centre[1], pts[:, 0] - centre[0]))]
