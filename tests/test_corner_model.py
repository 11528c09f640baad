"""The corner model: its marks read as frame points, and four marks made a card's box."""

from __future__ import annotations

import numpy as np
import pytest

from referee.cards import parse_card
from referee.sim.render import Placement
from referee.vision import corner_model

from .helpers import cards_on_wood

CARD = np.array([[300.0, 200.0], [460.0, 230.0], [420.0, 450.0], [260.0, 420.0]])  # 163 x 224 px


def _marked(points: np.ndarray, scale: float = 0.3, shape: tuple[int, int] = (54, 96)) -> corner_model.Marks:
    """Marks with a peak of 0.9 at each frame point, its offset in the cell as the network gives it."""
    heat = np.zeros(shape, np.float32)
    offsets = np.zeros((*shape, 2), np.float32)
    for x, y in points:
        # frame px to input px, then to cells (a cell's centre at whole numbers)
        u = ((x + 0.5) * scale - 0.5 - (corner_model.OUT_STRIDE - 1) / 2) / corner_model.OUT_STRIDE
        v = ((y + 0.5) * scale - 0.5 - (corner_model.OUT_STRIDE - 1) / 2) / corner_model.OUT_STRIDE
        i, j = round(v), round(u)
        heat[i, j] = 0.9
        offsets[i, j] = (u - j, v - i)
    return heat, offsets, scale


def _same_box(a: np.ndarray, b: np.ndarray, tol: float) -> bool:
    """The same four corners, in any order round."""
    return all(np.linalg.norm(b - p, axis=1).min() <= tol for p in a)


def test_a_mark_with_its_offset_is_the_frame_point() -> None:
    found = corner_model.peaks(_marked(CARD))
    assert len(found) == 4
    assert _same_box(CARD, np.array([p[:2] for p in found]), 1e-3)


def test_four_marks_of_a_card_make_its_box() -> None:
    boxes = corner_model.boxes(_marked(CARD))
    assert boxes
    assert _same_box(CARD, boxes[0], 1e-3)


def test_three_marks_make_the_box_with_the_fourth_corner_opposite() -> None:
    boxes = corner_model.boxes(_marked(CARD[:3]))
    assert boxes
    parallelogram = np.array([*CARD[:3], CARD[0] + CARD[2] - CARD[1]])
    assert _same_box(parallelogram, boxes[0], 1e-3)


@pytest.mark.parametrize(
    "points",
    [
        CARD * [1.0, 0.3] + [0, 200],  # far squatter than any card
        np.array([[300.0, 200.0], [460.0, 230.0], [330.0, 260.0], [260.0, 420.0]]),  # not convex
        np.array([[300.0, 200.0], [303.0, 202.0], [420.0, 450.0], [260.0, 420.0]]),  # two marks of one corner
    ],
)
def test_marks_in_no_card_shape_make_no_box(points: np.ndarray) -> None:
    # (three of the four may still make a box with a fourth corner of their own: not these four)
    assert not any(_same_box(points, box, 1.0) for box in corner_model.boxes(_marked(points)))


def test_nothing_marked_gives_no_box() -> None:
    assert corner_model.boxes((np.zeros((54, 96), np.float32), np.zeros((54, 96, 2), np.float32), 0.3)) == []


@pytest.mark.skipif(not corner_model.available(), reason="no corner model weights")
@pytest.mark.parametrize("portrait", [False, True])
def test_the_shipped_model_marks_the_corners_of_the_card_on_the_table(portrait: bool) -> None:
    under = Placement(parse_card("4C"), 560, 330, 20, 180)
    top = Placement(parse_card("KH"), 680, 400, 70, 180)
    frame, truth = cards_on_wood([under, top], portrait)
    marks = corner_model.marks(frame)
    assert marks is not None
    boxes = corner_model.boxes(marks)
    assert boxes
    # the strongest box is the top card's, every corner within a cell (13 px) of the truth
    assert _same_box(truth, boxes[0], 13)
