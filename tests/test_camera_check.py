"""The camera step's meters, verdicts, pile area and snapshot, on the simulator's frames."""

import cv2
import numpy as np
import pytest

from calibration.camera_check import (
    BLUR_MAX,
    draw_snapshot,
    edge_blur,
    find_pile_area,
    meters,
    placement_verdict,
    verdict,
)
from referee.cards import parse_card
from referee.sim.render import TABLE_KINDS, Camera, Placement, compose, table_surface

SIZE = (640, 480)


def shots(
    table: str,
    blur: float = 0.6,
    card_at: tuple[float, float] | None = (330, 235),
    width: int = 140,
    seed: int = 3,
    gain: float = 1.0,
) -> tuple[np.ndarray, np.ndarray]:
    """The empty table and the same table with one card, through one camera (light, blur, noise, JPEG)."""
    rng = np.random.default_rng(seed)
    surface = table_surface(table, SIZE, rng)
    camera = Camera(SIZE, np.random.default_rng(seed + 1), 0.3, 0.0, blur, 3.0, 85)
    placed = [] if card_at is None else [Placement(parse_card("QS"), *card_at, 33.0, width)]
    empty, full = camera.shoot(surface, rng), camera.shoot(compose(placed, surface), rng)
    if gain != 1.0:
        empty, full = cv2.convertScaleAbs(empty, alpha=gain), cv2.convertScaleAbs(full, alpha=gain)
    return empty, full


@pytest.mark.parametrize("table", TABLE_KINDS)
def test_a_card_in_the_middle_is_found_and_a_good_picture_says_good(table):
    empty, full = shots(table)
    area = find_pile_area(empty, full)
    assert area is not None
    assert area.card_px == pytest.approx(140, rel=0.03)
    # On the light table a side can lie on the card's shadow, white on near-white: 6 px off.
    assert np.hypot(area.centre[0] - 330, area.centre[1] - 235) < 8
    x0, y0, x1, y1 = area.box
    assert (area.quad[:, 0] > x0).all() and (area.quad[:, 0] < x1).all()
    assert (area.quad[:, 1] > y0).all() and (area.quad[:, 1] < y1).all()
    assert placement_verdict(area, SIZE).code == "good"
    assert verdict(meters(empty), None).code == "good"
    m = meters(full, area.quad)
    assert verdict(m, area.card_px).code == "good", verdict(m, area.card_px)


@pytest.mark.parametrize("table", TABLE_KINDS)
def test_blur_is_measured_on_the_card_whatever_the_table(table):
    blurs = []
    for blur in (0.6, 1.2, 3.0):
        empty, full = shots(table, blur=blur)
        area = find_pile_area(empty, full)
        assert area is not None
        blurs.append(meters(full, area.quad).blur_px)
    sharp, soft, blurred = blurs
    assert sharp < soft < BLUR_MAX < blurred
    assert verdict(meters(full, area.quad), area.card_px).code == "blurry"


def test_a_plain_empty_table_has_no_blur_to_measure():
    empty, _ = shots("green_cloth")
    assert edge_blur(cv2.cvtColor(empty, cv2.COLOR_BGR2GRAY)) is None


def test_too_dark_and_too_bright():
    empty, full = shots("green_cloth", gain=0.1)
    assert verdict(meters(empty), None).code == "too_dark"
    empty, full = shots("green_cloth", gain=0.25)
    area = find_pile_area(empty, full)
    assert area is not None
    v = verdict(meters(full, area.quad), area.card_px)
    assert v.code == "too_dark" and "of 255" in v.message and "\n" not in v.message
    empty, full = shots("green_cloth", gain=1.8)
    area = find_pile_area(empty, full)
    assert area is not None
    assert verdict(meters(full, area.quad), area.card_px).code == "too_bright"
    empty, _ = shots("light", gain=1.8)
    assert verdict(meters(empty), None).code == "too_bright"


@pytest.mark.parametrize(
    ("card_px", "code"), [(80, "move_closer"), (140, "good"), (300, "good"), (450, "move_back")]
)
def test_the_cards_width_says_closer_or_back(card_px, code):
    empty, full = shots("wood")
    area = find_pile_area(empty, full)
    assert area is not None
    v = verdict(meters(full, area.quad), card_px)
    assert v.code == code
    assert f"{card_px} px" in v.message and "\n" not in v.message


def test_a_card_off_the_middle_or_over_the_edge_is_refused():
    empty, full = shots("green_cloth", card_at=(150, 240))
    area = find_pile_area(empty, full)
    assert area is not None
    v = placement_verdict(area, SIZE)
    assert v.code == "off_centre" and "left" in v.message
    empty, full = shots("green_cloth", card_at=(320, 440))
    area = find_pile_area(empty, full)
    if area is not None:  # a card cut by the frame's edge may have no outline at all: refused too
        assert placement_verdict(area, SIZE).code == "off_frame"


def test_nothing_laid_is_no_pile_area():
    empty, full = shots("wood", card_at=None)
    assert find_pile_area(empty, full) is None
    assert find_pile_area(empty, empty[:100]) is None


def test_the_snapshot_draws_the_box_and_the_card_on_a_copy():
    empty, full = shots("green_cloth")
    area = find_pile_area(empty, full)
    assert area is not None
    m = meters(full, area.quad)
    before = full.copy()
    out = draw_snapshot(full, area, m, verdict(m, area.card_px))
    assert out.shape == full.shape and np.array_equal(full, before)
    _, y0, x1, y1 = area.box
    assert tuple(out[(y0 + y1) // 2, x1 - 1]) == (40, 220, 240)  # the box's right side, yellow
    c = np.round(area.quad.mean(axis=0)).astype(int)
    assert np.array_equal(out[c[1], c[0]], full[c[1], c[0]])  # the card itself is left as it is
    assert (out[5:20] != full[5:20]).any()  # the meters' text
