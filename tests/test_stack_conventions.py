"""What the recogniser asks of OpenCV, the same on the Pi's OpenCV 4 as on pip's 5.0 (.ci/stacks
runs these on Debian bookworm's 4.6 and trixie's 4.10)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from referee.vision.outline import _min_area_rect

# (turn, the first corner boxPoints gives for it on OpenCV 5.0)
CASES = [
    (0.0, (230.0, 195.0)),
    (17.0, (215.53, 201.8)),
    (45.0, (189.39, 203.03)),
    (90.0, (245.0, 180.0)),
    (123.0, (221.4, 199.67)),
    (178.0, (171.59, 196.02)),
]


@pytest.mark.parametrize(("turn", "first"), CASES)
def test_a_rectangle_is_named_as_opencv_5_names_it(turn, first):
    # OpenCV 4 gives angles in (0, 90], 5.0 in [-90, 0) with the sides swapped: boxPoints then
    # starts at another corner, and the outline search walks the sides in another order.
    w, h = 60.0, 90.0
    t = np.radians(turn)
    corners = np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]])
    rot = np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])
    pts = (corners @ rot.T + [200, 150]).astype(np.float32)
    centre, (rw, rh), angle = _min_area_rect(pts)
    assert -90 <= angle < 0
    assert sorted((rw, rh)) == pytest.approx([w, h], abs=0.01)
    assert tuple(cv2.boxPoints((centre, (rw, rh), angle))[0]) == pytest.approx(first, abs=0.01)
