"""OpenCV calls the recogniser makes, giving the same result on every OpenCV the referee runs on:
4.6 (Raspberry Pi OS bookworm), 4.10 (trixie) and pip's 5.0 (docs/dependencies.md).

Sampling: OpenCV 4 samples `warpPerspective` and `remap` (float maps) at 1/32 px: each coordinate
is rounded to a fixed-point map and interpolated from OpenCV's weight tables. OpenCV 5
interpolates at the float coordinates themselves, so the same warp differs by up to 6 grey levels
from 4.x, and a corner read at the margin goes the other way. Here the coordinates are worked out
in numpy (IEEE doubles: the same everywhere) and rounded to OpenCV's fixed-point map, which `remap`
reads through the same tables on every version: bit for bit what OpenCV 4's own warps give.

`minAreaRect`: OpenCV 5 names the same rectangle with its sides swapped and its angle 90 degrees
less than 4.x does, so `boxPoints` starts at another corner.
"""

from __future__ import annotations

import cv2
import numpy as np

_BITS = 5  # OpenCV's INTER_BITS: 32 sub-pixel steps
_STEPS = 1 << _BITS


def _fixed(fx: np.ndarray, fy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Coordinates in 1/32 px (integers) as remap's two fixed-point maps: whole pixels (CV_16SC2,
    clamped like OpenCV's own) and the fraction's table index (CV_16UC1)."""
    lo, hi = -32768, 32767
    whole = np.stack((np.clip(fx >> _BITS, lo, hi), np.clip(fy >> _BITS, lo, hi)), axis=-1).astype(np.int16)
    frac = ((fy & (_STEPS - 1)) * _STEPS + (fx & (_STEPS - 1))).astype(np.uint16)
    return whole, frac


def _to_steps(v: np.ndarray) -> np.ndarray:
    """Coordinates to 1/32 px, rounded half to even as OpenCV's cvRound, within int32."""
    return np.rint(np.clip(v * _STEPS, -(2.0**31), 2.0**31 - 1)).astype(np.int64)


def remap_linear(image: np.ndarray, mx: np.ndarray, my: np.ndarray) -> np.ndarray:
    """cv2.remap(image, mx, my, INTER_LINEAR, borderMode=BORDER_REPLICATE) with float maps, as
    OpenCV 4 computes it (each point at 1/32 px), on any OpenCV."""
    whole, frac = _fixed(_to_steps(np.asarray(mx, np.float64)), _to_steps(np.asarray(my, np.float64)))
    return cv2.remap(image, whole, frac, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def warp_perspective(
    image: np.ndarray, matrix: np.ndarray, size: tuple[int, int], inverse_map: bool = False
) -> np.ndarray:
    """cv2.warpPerspective(image, matrix, size, INTER_LINEAR, borderMode=BORDER_REPLICATE), as OpenCV 4
    computes it, on any OpenCV. `inverse_map`: `matrix` already maps output to input
    (WARP_INVERSE_MAP)."""
    m = np.asarray(matrix, np.float64)
    if not inverse_map:
        m = cv2.invert(m, flags=cv2.DECOMP_LU)[1]  # as warpPerspective inverts it
    w, h = size
    xs = np.arange(w, dtype=np.float64)[None, :]
    ys = np.arange(h, dtype=np.float64)[:, None]
    # OpenCV's own order of operations: each row's part first, then the column's added.
    x = (m[0, 1] * ys + m[0, 2]) + m[0, 0] * xs
    y = (m[1, 1] * ys + m[1, 2]) + m[1, 0] * xs
    d = (m[2, 1] * ys + m[2, 2]) + m[2, 0] * xs
    scale = np.divide(_STEPS, d, out=np.zeros_like(d), where=d != 0)
    fx = np.rint(np.clip(x * scale, -(2.0**31), 2.0**31 - 1)).astype(np.int64)
    fy = np.rint(np.clip(y * scale, -(2.0**31), 2.0**31 - 1)).astype(np.int64)
    whole, frac = _fixed(fx, fy)
    return cv2.remap(image, whole, frac, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def min_area_rect(points: np.ndarray) -> tuple[tuple[float, float], tuple[float, float], float]:
    """cv2.minAreaRect in one convention on every OpenCV: the angle in [-90, 0), as OpenCV 5 gives
    it (4.x gives (0, 90] with width and height swapped, or -0.0 for an upright box)."""
    centre, (w, h), angle = cv2.minAreaRect(points)
    if angle >= 0:  # 4.x's: the same box turned a quarter back (-0.0 too: it compares equal to 0)
        w, h, angle = h, w, angle - 90.0
    return centre, (w, h), angle
