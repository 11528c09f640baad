"""The corner index reader on an upright card: rank and suit when other print touches them."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from referee import card_index, render
from referee.card_outline import WARP_SIZE
from referee.cards import parse_card


def upright(code: str) -> np.ndarray:
    """The card as the recogniser's warp gives it: upright, WARP_SIZE."""
    img, _ = render.draw_card(parse_card(code), 200)
    return cv2.resize(img, WARP_SIZE, interpolation=cv2.INTER_AREA)


def glyph_boxes(card: np.ndarray) -> list[tuple[int, int, int, int]]:
    """(x, y, w, h) in card px of the rank and the suit pip in the top-left corner, top first."""
    x0, y0 = round(card_index._CORNER[0] * WARP_SIZE[0]), round(card_index._CORNER[2] * WARP_SIZE[1])
    crop = card_index._corner_crop(card)
    ink = (card_index._weakest(crop) < 128).astype(np.uint8)
    _, _, stats, _ = cv2.connectedComponentsWithStats(ink)
    ch, cw = ink.shape
    glyphs = [s for s in stats[1:] if s[4] > 20 and s[3] < 0.4 * ch and s[2] < 0.6 * cw]  # not a frame
    boxes = sorted(glyphs, key=lambda s: s[1])
    return [(int(x) + x0, int(y) + y0, int(w), int(h)) for x, y, w, h, _ in boxes[:2]]


def best(card: np.ndarray) -> str:
    scores = card_index._read_corner(card)
    assert scores is not None, "no index read"
    return max(scores, key=scores.__getitem__)


@pytest.mark.parametrize("code", ["QS", "7H", "10C"])
def test_a_frame_line_touching_the_rank_is_not_part_of_it(code):
    # A court picture's frame (or the card's own border) running past the index and touching the
    # rank: rank and line would be one blob, too tall to be a glyph.
    card = upright(code)
    assert best(card) == code
    (rx, ry, rw, _), (sx, _, sw, _) = glyph_boxes(card)
    x = max(rx + rw, sx + sw) + 3
    cv2.line(card, (x, 0), (x, WARP_SIZE[1] // 2), (30, 30, 30), 2)
    cv2.line(card, (rx + rw // 2, ry), (WARP_SIZE[0] // 2, ry), (30, 30, 30), 2)
    assert best(card) == code


@pytest.mark.parametrize("code", ["QS", "KC", "4D"])
def test_strokes_of_a_picture_joined_to_the_suit_pip_are_cut_off(code):
    # A queen's flower or a king's sceptre drawn up to the pip: pip and strokes would be one blob.
    card = upright(code)
    _, (sx, sy, sw, sh) = glyph_boxes(card)
    ink = (30, 30, 30) if code[-1] in "SC" else (40, 40, 200)
    tip = (sx + sw // 2, sy + sh - 2)
    cv2.line(card, tip, (sx + 2 * sw, sy + 2 * sh), ink, 2)
    cv2.line(card, tip, (sx, sy + 2 * sh), ink, 2)
    cv2.circle(card, (sx + 2 * sw, sy + 2 * sh), max(3, sh // 3), ink, -1)
    assert best(card) == code
