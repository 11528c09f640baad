"""The built-in index model: a small neural network that names a rank glyph or a suit pip.

Plain numpy: the features of a glyph (a binary image, 255 = ink) are fixed functions of
its pixels, and each of the model's three networks is two matrix products (about 0.15 ms a
glyph for the three). The weights ship with the package (`referee/data/index_model.npz`,
about 2 MB) and are made by `tools/train_index_model.py` from the project's own card styles,
OpenCV's Hershey fonts, the system's fonts and some of Debian's card themes; the themes the
benchmarks call unseen are never in its training set (docs/vision.md lists both).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

MODEL_PATH = Path(__file__).parents[1] / "data" / "index_model.npz"
MODEL_VERSION = 1
STRETCH = (16, 24)  # the glyph stretched to this box (w, h): shape regardless of proportions
SQUARE = 20  # and kept in proportion on a square canvas: the proportions themselves
FEATURES = STRETCH[0] * STRETCH[1] + SQUARE * SQUARE + 8
# Each network's class for a glyph that is none of its own (a Dutch B, V or H where a rank should be,
# the O of a joker's JOKER where a pip should be): a corner of such glyphs is refused, not named.
UNKNOWN = "?"


def _holes(crop: np.ndarray) -> list[float]:
    """Centres (0 top .. 1 bottom) of enclosed background regions bigger than a speck."""
    padded = cv2.copyMakeBorder(crop, 1, 1, 1, 1, cv2.BORDER_CONSTANT, value=0)
    n, _, stats, cents = cv2.connectedComponentsWithStats(cv2.compare(padded, 0, cv2.CMP_EQ), connectivity=4)
    speck = max(3, 0.01 * cv2.countNonZero(crop))
    h = max(1, crop.shape[0])
    return sorted((cents[k][1] - 1) / h for k in range(2, n) if stats[k, cv2.CC_STAT_AREA] >= speck)


def glyph_features(binary: np.ndarray) -> np.ndarray | None:
    """The feature vector of one glyph, or None when it holds too little ink to be one."""
    if cv2.countNonZero(binary) < 4:
        return None
    x, y, w, h = cv2.boundingRect(binary)  # of the mask's non-zero pixels
    crop = binary[y : y + h, x : x + w]
    stretched = cv2.resize(crop, STRETCH, interpolation=cv2.INTER_AREA)
    side = max(w, h)
    square = np.zeros((side, side), np.uint8)
    square[(side - h) // 2 : (side - h) // 2 + h, (side - w) // 2 : (side - w) // 2 + w] = crop
    square = cv2.resize(square, (SQUARE, SQUARE), interpolation=cv2.INTER_AREA)
    holes = _holes(crop)
    extra = np.zeros(8, np.float32)
    extra[0] = np.log(w / h)
    extra[1] = np.count_nonzero(crop) / (w * h)
    extra[2 + min(len(holes), 3)] = 1.0  # how many holes: 0, 1, 2, 3 or more
    extra[6] = holes[0] if holes else -0.5
    extra[7] = holes[-1] if len(holes) > 1 else -0.5
    return np.concatenate(
        [stretched.ravel().astype(np.float32) / 255, square.ravel().astype(np.float32) / 255, extra]
    )


class GlyphNet:
    """Features -> standardised -> hidden ReLU layer -> class log-probabilities.

    The weights may hold several members, stacked on a first axis, trained from different
    seeds: their probabilities are averaged. One network trained again reads unseen decks
    differently, and is often sure when wrong; the members disagree where each is wrong, so
    the mean is rarely sure then (docs/vision.md, session 19)."""

    def __init__(self, classes: tuple[str, ...], mean, std, w1, b1, w2, b2) -> None:
        self.classes = classes
        one = np.ndim(w1) == 2  # a single network: a stack of one
        arrays = [np.asarray(a, np.float32) for a in (mean, std, w1, b1, w2, b2)]
        self.mean, self.std, self.w1, self.b1, self.w2, self.b2 = (a[None] if one else a for a in arrays)

    def log_probs(self, features: np.ndarray) -> np.ndarray:
        """Rows of features (n x FEATURES) -> rows of log-probabilities (n x classes)."""
        x = (np.atleast_2d(features)[None] - self.mean[:, None]) / self.std[:, None]
        h = np.maximum(x @ self.w1 + self.b1[:, None], 0.0)
        z = h @ self.w2 + self.b2[:, None]
        z -= z.max(axis=2, keepdims=True)
        log_p = z - np.log(np.exp(z).sum(axis=2, keepdims=True))
        if len(log_p) == 1:
            return log_p[0]
        top = log_p.max(axis=0)
        return top + np.log(np.exp(log_p - top).mean(axis=0))

    def arrays(self, prefix: str) -> dict[str, np.ndarray]:
        names = ("mean", "std", "w1", "b1", "w2", "b2")
        out = {f"{prefix}_{n}": getattr(self, n) for n in names}
        out[f"{prefix}_classes"] = np.array(self.classes)
        return out

    @classmethod
    def from_arrays(cls, data, prefix: str) -> GlyphNet:
        classes = tuple(str(c) for c in data[f"{prefix}_classes"])
        return cls(classes, *(data[f"{prefix}_{n}"] for n in ("mean", "std", "w1", "b1", "w2", "b2")))

    @classmethod
    def stacked(cls, members: list[GlyphNet]) -> GlyphNet:
        """One network of the members' (all of the same classes and shapes)."""
        names = ("mean", "std", "w1", "b1", "w2", "b2")
        return cls(members[0].classes, *(np.concatenate([getattr(m, n) for m in members]) for n in names))


def save_model(path: Path, rank: GlyphNet, suit: GlyphNet, **meta: np.ndarray) -> None:
    np.savez_compressed(
        path, version=np.array(MODEL_VERSION), **rank.arrays("rank"), **suit.arrays("suit"), **meta
    )


@lru_cache(maxsize=1)
def load_model(path: Path = MODEL_PATH) -> tuple[GlyphNet, GlyphNet]:
    """The rank and suit networks shipped with the package."""
    with np.load(path, allow_pickle=False) as data:
        if int(data["version"]) != MODEL_VERSION:
            raise RuntimeError(
                f"{path}: index model version {int(data['version'])}, expected {MODEL_VERSION}"
            )
        return GlyphNet.from_arrays(data, "rank"), GlyphNet.from_arrays(data, "suit")
