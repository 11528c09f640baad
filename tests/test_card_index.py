"""The corner index reader on an upright card: rank and suit when other print touches them."""

from __future__ import annotations

import shutil

import cv2
import numpy as np
import pytest

from referee.cards import deck, parse_card
from referee.sim import glyphs, render
from referee.sim.card_themes import available_themes, theme_cards
from referee.vision import index as card_index
from referee.vision.index_model import UNKNOWN
from referee.vision.outline import WARP_SIZE


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


@pytest.mark.parametrize("code", ["7H", "QS", "4D", "AS"])
def test_a_speck_beside_the_rank_is_not_taken_for_it(code):
    # A speck of dirt or print left of the rank, in its row: the leftmost blob of the row was
    # taken for the rank.
    card = upright(code)
    (rx, ry, _, _), _ = glyph_boxes(card)
    cv2.circle(card, (rx - 4, ry + 3), 2, (30, 30, 30), -1)
    assert best(card) == code


@pytest.mark.parametrize("code", ["9S", "QH", "10D", "AS"])
@pytest.mark.parametrize("edge", [0.05, 0.15])
def test_a_shadows_edge_across_the_index_is_not_taken_for_ink(code, edge):
    # A hand's shadow, its soft edge running down through the index: the shadowed paper is
    # darker than the lit threshold, and was one blob of "ink" with the glyphs in it.
    card = upright(code).astype(np.float32)
    h, w = card.shape[:2]
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    across = (xs - edge * w) + 0.5 * (ys - 0.15 * h)  # px from a slanted line, shadow on its right
    shade = 1 - 0.6 / (1 + np.exp(-across / 6))
    card = (card * shade[..., None]).astype(np.uint8)
    assert best(card) == code


def condensed_ten(height: int) -> np.ndarray:
    """A serif 10 squeezed to about half as wide as tall, as condensed card indices draw it (255 = ink)."""
    img = np.zeros((120, 120), np.uint8)
    glyphs.put_text(img, "10", (5, 95), cv2.FONT_HERSHEY_TRIPLEX, 3.0, 255, 3)
    x, y, w, h = cv2.boundingRect(cv2.findNonZero((img > 127).astype(np.uint8)))
    width = round(w * height / h * 0.32)
    return cv2.resize(img[y : y + h, x : x + w], (width, height), interpolation=cv2.INTER_AREA)


@pytest.mark.parametrize("top", [1, 3])
def test_a_tall_condensed_ten_against_the_cards_top_is_cut_whole(top):
    # A tall index set close to the card's top edge reaches the crop's top: its upright strokes
    # were taken for a picture's frame and cut out, leaving a sliver read as a 6 or 9.
    w, h = WARP_SIZE
    card = np.full((h, w, 3), 245, np.uint8)
    ten = condensed_ten(40).astype(np.float32)[..., None] / 255
    th, tw = ten.shape[:2]
    region = card[top : top + th, 5 : 5 + tw]
    region[:] = (region * (1 - ten) + 20 * ten).astype(np.uint8)
    render.draw_pip(card, "S", (5 + tw // 2, top + th + 12), 16, (20, 20, 20))
    card = cv2.GaussianBlur(np.minimum(card, card[::-1, ::-1]), (0, 0), 0.8)  # both corners
    rank = card_index._index_parts(card)[0]
    assert cv2.boundingRect(cv2.findNonZero(rank))[2] >= tw - 2  # the 1 and the 0
    assert best(card) == "10S"


HAVE_BELLOT = "bellot" in available_themes() and shutil.which("rsvg-convert") is not None


@pytest.mark.skipif(not HAVE_BELLOT, reason="apt install gnome-cards-data librsvg2-bin")
@pytest.mark.parametrize("code", ["10S", "10H", "10D", "10C", "8S", "QH", "QD", "JS", "JD"])
def test_a_condensed_serif_index_unseen_in_training_is_read(code):
    # Debian's bellot deck (held out from the model's training): a tall condensed serif index
    # close to the card's edges, a big pip right beside it on court cards. Its upright card as a
    # camera's warp gives it: lower resolution, blur, noise and JPEG, seeded.
    face = cv2.resize(theme_cards("bellot", 250)[code], WARP_SIZE, interpolation=cv2.INTER_AREA)
    rng = np.random.default_rng(7)
    for _ in range(3):
        src = int(rng.uniform(110, 200))
        img = cv2.resize(face, (src, round(src * WARP_SIZE[1] / WARP_SIZE[0])), interpolation=cv2.INTER_AREA)
        img = cv2.GaussianBlur(cv2.resize(img, WARP_SIZE, interpolation=cv2.INTER_LINEAR), (0, 0), 0.7)
        img = np.clip(img + rng.normal(0, 3, img.shape), 0, 255).astype(np.uint8)
        _, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 85])
        assert best(cv2.imdecode(buf, cv2.IMREAD_COLOR)) == code


def test_an_index_laid_across_the_top_is_read_where_no_corner_holds_one():
    # The modern style prints the pip level with the rank at the top right, once: the corner
    # reader finds no pip under the rank, the reader across the band finds it beside.
    style = render.STYLES["modern"]
    for card in deck(52):
        img, _ = render.draw_card(card, 200, style)
        warped = cv2.resize(img, WARP_SIZE, interpolation=cv2.INTER_AREA)
        assert card_index._read_corner(warped) is None
        scores = card_index._read_beside(warped)
        assert scores is not None and max(scores, key=scores.__getitem__) == card.code
        # Turned round, the band holds no index: nothing is made up from the big pips.
        turned = card_index._read_beside(cv2.flip(warped, -1))
        assert turned is None or max(turned, key=turned.__getitem__) in (card.code, UNKNOWN)


def test_across_the_top_a_rank_with_nothing_level_with_it_reads_nothing():
    # A stacked index (the pip under the rank) has nothing beside the rank: no pip is made up.
    img, _ = render.draw_card(parse_card("7H"), 200, render.STYLES["bold"])
    assert card_index._read_beside(cv2.resize(img, WARP_SIZE, interpolation=cv2.INTER_AREA)) is None
