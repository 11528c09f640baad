"""The outline model: its numpy forward pass, and how an outline is held against its marks."""

from __future__ import annotations

import numpy as np
import pytest

from referee.cards import parse_card
from referee.sim.render import Placement
from referee.vision import outline_model

from .helpers import cards_on_wood


def _naive_conv(x: np.ndarray, w: np.ndarray, b: np.ndarray, stride: int, dilation: int) -> np.ndarray:
    """A k x k convolution written out point by point (w: out, in, k, k), zero padded to keep size."""
    k = w.shape[2]
    pad = dilation * (k // 2)
    xp = np.pad(x, ((pad, pad), (pad, pad), (0, 0)))
    h, wd = x.shape[:2]
    oh, ow = -(-h // stride), -(-wd // stride)
    out = np.zeros((oh, ow, w.shape[0]), np.float64)
    for y in range(oh):
        for z in range(ow):
            for i in range(k):
                for j in range(k):
                    out[y, z] += w[:, :, i, j] @ xp[y * stride + i * dilation, z * stride + j * dilation]
    return out + b


@pytest.mark.parametrize(("stride", "dilation"), [(1, 1), (2, 1), (1, 2), (1, 4)])
def test_the_convolution_as_one_product_is_the_convolution(stride: int, dilation: int) -> None:
    rng = np.random.default_rng(stride * 10 + dilation)
    x = rng.normal(size=(9, 12, 3)).astype(np.float32)
    w = rng.normal(size=(5, 3, 3, 3)).astype(np.float32)
    b = rng.normal(size=5).astype(np.float32)
    layer = (np.ascontiguousarray(w.transpose(2, 3, 1, 0).reshape(-1, 5)), b)
    got = outline_model.conv(x, layer, 3, stride, dilation)
    np.testing.assert_allclose(got, _naive_conv(x, w, b, stride, dilation), rtol=1e-4, atol=1e-4)


QUAD = np.array([[300.0, 200.0], [460.0, 230.0], [420.0, 450.0], [260.0, 420.0]])


def test_an_outline_agrees_with_marks_of_itself_and_not_with_a_card_beside_it() -> None:
    factor = 0.05  # a 1280-px frame's marks, 64 cells wide
    marks = (outline_model._filled(QUAD, factor, (36, 64)), factor)
    assert outline_model.agreement(marks, QUAD) > 0.97
    assert outline_model.agreement(marks, QUAD + [200, 0]) < 0.1
    assert 0.3 < outline_model.agreement(marks, QUAD + [80, 0]) < 0.8


def test_the_box_round_the_marks_is_the_card() -> None:
    factor = 0.05
    marks = (outline_model._filled(QUAD, factor, (36, 64)), factor)
    box = outline_model.cover_box(marks)
    assert box is not None
    assert outline_model.agreement(marks, box) > 0.85
    # every corner of the card within a cell (20 frame px) of the box's
    assert max(np.linalg.norm(box - c, axis=1).min() for c in QUAD) < 1 / factor


def test_nothing_marked_gives_no_box() -> None:
    assert outline_model.cover_box((np.zeros((36, 64), np.float32), 0.05)) is None


@pytest.mark.skipif(not outline_model.available(), reason="no outline model weights")
@pytest.mark.parametrize("portrait", [False, True])
def test_the_shipped_model_marks_the_card_on_the_table(portrait: bool) -> None:
    # (Of two overlapping cards its marks cover both about alike: the edge search's own rule, no
    # outline lying under another, keeps the card underneath out; docs/vision.md.)
    frame, truth = cards_on_wood([Placement(parse_card("KH"), 680, 400, 70, 180)], portrait)
    marks = outline_model.cover(frame)
    assert marks is not None
    assert marks[0].shape[0] > marks[0].shape[1] if portrait else marks[0].shape[0] < marks[0].shape[1]
    assert outline_model.agreement(marks, truth) > 0.6
    beside = truth + ([0, 300] if portrait else [300, 0])
    assert outline_model.agreement(marks, beside) < 0.1
