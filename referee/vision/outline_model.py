"""The outline model: a small convolutional network that marks where the top card of a pile lies.

The edge search (`card_outline`) finds a card from its straight sides; where a side is lost (a
white card on a cream table, a check cloth's lines, a glare) it finds nothing, or the card under
the top one. This network looks at the whole frame at once, 256 px wide, and marks the top card's
cover at a quarter of that size; the cover's outline is then a quad for the edge search to refine.

Plain numpy, so it gives the same marks on every OpenCV and numpy the referee supports: eight
convolutions, about 100,000 weights, made by `tools/train_outline_model.py` from the generator
that tunes (never from the held-out scenes) and shipped in `referee/data/outline_model.npz`.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

MODEL_PATH = Path(__file__).parents[1] / "data" / "outline_model.npz"
INPUT_WIDTH = 256  # the frame's long side as the network sees it
OUT_STRIDE = 4  # its marks are at a quarter of the input's size: enough to choose among outlines
_LAYERS = ("enc1", "enc2", "enc3", "ctx1", "ctx2", "ctx3", "up", "head")


def layer_names() -> list[str]:
    return list(_LAYERS)


def load_layers(path: Path, names: tuple[str, ...]) -> dict[str, tuple[np.ndarray, np.ndarray]] | None:
    """A network's weights, each convolution as one matrix and its bias; None when not shipped."""
    if not path.exists():
        return None
    with np.load(path) as data:
        out = {}
        for name in names:
            w = data[f"{name}.w"].astype(np.float32)  # out, in, kh, kw
            # as one matrix over (kh, kw, in) patches: the convolution is then one product
            out[name] = (
                np.ascontiguousarray(w.transpose(2, 3, 1, 0).reshape(-1, w.shape[0])),
                data[f"{name}.b"],
            )
        return out


@lru_cache(maxsize=1)
def _weights() -> dict[str, tuple[np.ndarray, np.ndarray]] | None:
    return load_layers(MODEL_PATH, _LAYERS)


def available() -> bool:
    return _weights() is not None


def conv(
    x: np.ndarray, layer: tuple[np.ndarray, np.ndarray], k: int, stride: int = 1, dilation: int = 1
) -> np.ndarray:
    """x: H x W x C; a k x k convolution with zero padding that keeps the size (then strides)."""
    w, b = layer
    if k == 1:
        return x @ w + b
    pad = dilation * (k // 2)
    xp = np.pad(x, ((pad, pad), (pad, pad), (0, 0)))
    h, wd = x.shape[:2]
    oh, ow = (h + stride - 1) // stride, (wd + stride - 1) // stride
    cols = [
        xp[
            i * dilation : i * dilation + (oh - 1) * stride + 1 : stride,
            j * dilation : j * dilation + (ow - 1) * stride + 1 : stride,
        ]
        for i in range(k)
        for j in range(k)
    ]
    patches = np.concatenate(cols, axis=2)  # oh x ow x (k*k*C), in (kh, kw, in) order
    return patches @ w + b


def upsample(x: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    return np.repeat(np.repeat(x, 2, axis=0), 2, axis=1)[: shape[0], : shape[1]]


def network_input(image: np.ndarray, width: int) -> tuple[np.ndarray, float, bool, int]:
    """A frame as a network sees it: lying down (a portrait photo turned over its diagonal: the
    models learnt frames lying down), `width` px wide by INTER_AREA, -0.5..0.5, its height padded
    to a multiple of 8 (three halvings); with the factor from frame px, whether it was turned and
    its rows before the padding."""
    if image.ndim == 2:
        image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    h, w = image.shape[:2]
    lying = h > w
    if lying:
        image = image.transpose(1, 0, 2)
        h, w = w, h
    scale = width / w
    size = (width, max(8, round(h * scale)))
    x = cv2.resize(image, size, interpolation=cv2.INTER_AREA).astype(np.float32) / 255 - 0.5
    padded_h = -(-size[1] // 8) * 8
    if padded_h != size[1]:
        x = np.pad(x, ((0, padded_h - size[1]), (0, 0), (0, 0)), mode="edge")
    return x, scale, lying, size[1]


def features(x: np.ndarray, weights: dict[str, tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """The trunk both models share: three halvings (enc1-3), three dilated convolutions that let a
    cell see a whole big card (ctx1-3), and one back up to a quarter of the input with the
    half-size features beside it (up)."""
    relu = np.maximum  # written out below as relu(v, 0)
    e1 = relu(conv(x, weights["enc1"], 3, 2), 0)
    e2 = relu(conv(e1, weights["enc2"], 3, 2), 0)
    e3 = relu(conv(e2, weights["enc3"], 3, 2), 0)
    v = relu(conv(e3, weights["ctx1"], 3, 1, 2), 0)
    v = relu(conv(v, weights["ctx2"], 3, 1, 4), 0) + v
    v = relu(conv(v, weights["ctx3"], 3, 1, 8), 0) + v
    return relu(conv(np.concatenate([upsample(v, e2.shape[:2]), e2], axis=2), weights["up"], 3), 0)


def cover(image: np.ndarray) -> tuple[np.ndarray, float] | None:
    """The top card's cover (0..1, float32) at 1/OUT_STRIDE of the network's input, and the factor
    from the frame's pixels to the cover's; None without the model's weights."""
    weights = _weights()
    if weights is None:
        return None
    x, scale, lying, rows = network_input(image, INPUT_WIDTH)
    logits = conv(features(x, weights), weights["head"], 1)[..., 0]
    out = 1 / (1 + np.exp(-np.clip(logits, -30, 30)))
    out = out[: rows // OUT_STRIDE].astype(np.float32)
    if lying:
        out = np.ascontiguousarray(out.T)
    return out, scale / OUT_STRIDE


# A cover cell is the mean of OUT_STRIDE input pixels each way, so its centre lies (OUT_STRIDE - 1) / 2
# input pixels in: in the cells' own units, this far from the frame point that maps to its corner.
_CELL_CENTRE = (OUT_STRIDE - 1) / 2 / OUT_STRIDE


def _to_cells(points: np.ndarray, factor: float) -> np.ndarray:
    """Frame px to cover cells, a cell's centre at whole numbers."""
    return points * factor - _CELL_CENTRE


def _filled(quad: np.ndarray, factor: float, shape: tuple[int, int]) -> np.ndarray:
    """How much of each cover cell a quad (frame px) covers, 0..1: drawn _FINER times finer, then
    each cell the mean of its fine pixels (as the model's training covers were made)."""
    fine = np.zeros((shape[0] * _FINER, shape[1] * _FINER), np.uint8)
    # frame px to fine px (a fine pixel's centre at whole numbers), then 16ths for `shift`
    cells = _to_cells(np.asarray(quad, np.float64).reshape(4, 2), factor)
    pts = np.round((cells * _FINER + (_FINER - 1) / 2) * 16).astype(np.int32)
    cv2.fillConvexPoly(fine, pts, 255, lineType=cv2.LINE_AA, shift=4)
    return cv2.resize(fine, (shape[1], shape[0]), interpolation=cv2.INTER_AREA).astype(np.float32) / 255


def agreement(marks: tuple[np.ndarray, float], quad: np.ndarray) -> float:
    """How well an outline (frame px) lies on the top card's cover: the cover's overlap with it over
    their union (1: the same place and size; 0: apart)."""
    cov, factor = marks
    q = _filled(quad, factor, cov.shape)
    union = float(np.maximum(cov, q).sum())
    return float(np.minimum(cov, q).sum()) / union if union > 0 else 0.0


def cover_box(marks: tuple[np.ndarray, float], least: float = 0.5) -> np.ndarray | None:
    """The rotated box (4 x 2, frame px) round the cover's biggest blob, or None when nothing is
    marked as a card's. The cover is drawn 4 times finer first (between cells, the marks' own
    slope places the edge better than a cell's side)."""
    cov, factor = marks
    fine = cv2.resize(cov, None, fx=_FINER, fy=_FINER, interpolation=cv2.INTER_LINEAR)
    binary = (fine >= least).astype(np.uint8)
    contours, _ = cv2.findContours(binary, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    if not contours:
        return None
    blob = max(contours, key=cv2.contourArea)
    if cv2.contourArea(blob) < 4 * _FINER * _FINER:
        return None
    # a fine pixel u is cell (u - (FINER - 1) / 2) / FINER; the blob's edge runs along its pixels' outer sides
    box = cv2.boxPoints(cv2.minAreaRect(blob.reshape(-1, 2).astype(np.float32)))
    centre = box.mean(axis=0)
    box = box + 0.5 * (box - centre) / np.maximum(np.linalg.norm(box - centre, axis=1, keepdims=True), 1e-6)
    cells = (box - (_FINER - 1) / 2) / _FINER
    return (cells + _CELL_CENTRE) / factor


_FINER = 4


def near(marks: tuple[np.ndarray, float], least: float = 0.3) -> np.ndarray:
    """Where the top card may lie (uint8, 255; at the cover's size): the cells marked at least
    `least`, and one cell round them (the card's sides lie along the marks' soft edge)."""
    marked = (marks[0] >= least).astype(np.uint8) * 255
    return cv2.dilate(marked, np.ones((3, 3), np.uint8))


def _rect(cx: float, cy: float, w: float, h: float, angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    offs = np.array([[-w, -h], [w, -h], [w, h], [-w, h]]) / 2
    return offs @ np.array([[c, s], [-s, c]]) + [cx, cy]


def fit_card(marks: tuple[np.ndarray, float], least: float = 0.5) -> np.ndarray | None:
    """The card-shaped rectangle (4 x 2, frame px) that lies best on the marks: from the box round
    the marked blob, each of its centre, size and turn moved while the agreement grows. The marks
    bleed onto the cards under the top one; the fit keeps to where they are strongest."""
    box = cover_box(marks, least)
    if box is None:
        return None
    cx, cy = box.mean(axis=0)
    sides = np.linalg.norm(box - np.roll(box, -1, axis=0), axis=1)
    w, h = float(sides[0]), float(sides[1])
    angle = float(np.arctan2(box[1, 1] - box[0, 1], box[1, 0] - box[0, 0]))
    params = np.array([cx, cy, w, h, angle])
    best = agreement(marks, _rect(*params))
    cell = 1 / marks[1]
    steps = np.array([cell, cell, cell, cell, 0.06])
    for _ in range(4):
        improved = True
        while improved:
            improved = False
            for k in range(5):
                for sign in (1, -1):
                    trial = params.copy()
                    trial[k] += sign * steps[k]
                    if min(trial[2], trial[3]) < cell:
                        continue
                    got = agreement(marks, _rect(*trial))
                    if got > best + 1e-4:
                        params, best, improved = trial, got, True
        steps /= 2
    return _rect(*params).astype(np.float32)
