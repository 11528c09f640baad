"""The simulator's camera: cards, tables, light and lens, the hand and the lay clip."""

import cv2
import numpy as np
import pytest

from referee.cards import JOKER, deck, parse_card
from referee.sim.render import (
    ASPECT,
    STYLES,
    TABLE_KINDS,
    Placement,
    draw_back,
    draw_card,
    draw_hand,
    load_card_images,
    render_lay_sequence,
    render_pile,
    rotate_sprite,
    table_surface,
)

ALL_CODES = [c.code for c in deck(52)] + [JOKER.code]
SIZE = (320, 240)


def rng(seed: int = 7) -> np.random.Generator:
    return np.random.default_rng(seed)


def ink_pixels(img: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The card's printed pixels: on the card and clearly darker than the face."""
    return img[(mask == 255) & (img.astype(int).sum(axis=2) < 450)]


# Cards -------------------------------------------------------------------------------------


@pytest.mark.parametrize("width", [120, 250, 400])
def test_card_has_poker_aspect_and_a_mask_with_rounded_corners(width):
    img, mask = draw_card(parse_card("QS"), width)
    assert img.shape == (round(width * ASPECT), width, 3)
    assert img.dtype == np.uint8
    assert mask.shape == img.shape[:2]
    assert mask[0, 0] == 0 and mask[-1, -1] == 0  # corners are cut off
    assert mask[mask.shape[0] // 2, width // 2] == 255
    assert mask[0, width // 2] == 255  # the edges themselves are on the card


@pytest.mark.parametrize("style", sorted(STYLES))
@pytest.mark.parametrize("code", ALL_CODES)
def test_every_card_renders_in_every_style(code, style):
    img, mask = draw_card(parse_card(code), 120, STYLES[style])
    assert img.shape == (round(120 * ASPECT), 120, 3)
    assert len(ink_pixels(img, mask)) > 100


def test_red_suits_print_red_and_black_suits_print_black():
    for code, red in [("7H", True), ("7D", True), ("7S", False), ("7C", False)]:
        img, mask = draw_card(parse_card(code), 200)
        b, g, r = ink_pixels(img, mask).astype(int).mean(axis=0)
        assert bool(r - max(b, g) > 80) is red, code


def test_cards_are_cached_but_callers_get_their_own_copy():
    img, _ = draw_card(parse_card("5C"), 150)
    img[:] = 0
    again, _ = draw_card(parse_card("5C"), 150)
    assert again.max() > 0


def test_the_top_left_corner_carries_the_index():
    h = round(200 * ASPECT)
    corner = (slice(0, h // 6), slice(0, 200 // 5))
    seven, _ = draw_card(parse_card("7H"), 200)
    eight, _ = draw_card(parse_card("8H"), 200)
    assert np.abs(seven[corner].astype(int) - eight[corner]).sum() > 1000


def test_the_bottom_right_corner_is_the_top_left_turned_round():
    img, _ = draw_card(parse_card("9S"), 200)
    h = img.shape[0]
    top_left = img[: h // 6, : 200 // 5].astype(int)
    bottom_right = img[h - h // 6 :, 200 - 200 // 5 :][::-1, ::-1].astype(int)
    assert np.abs(top_left - bottom_right).mean() < 8


def test_styles_look_different():
    faces = [draw_card(parse_card("KH"), 200, s)[0] for s in STYLES.values()]
    for i in range(len(faces)):
        for j in range(i + 1, len(faces)):
            assert not np.array_equal(faces[i], faces[j])


def test_card_back_is_not_a_face():
    back, mask = draw_back(150)
    face, _ = draw_card(parse_card("AS"), 150)
    assert back.shape == face.shape and mask.shape == face.shape[:2]
    assert not np.array_equal(back, face)


# Rotation ----------------------------------------------------------------------------------


@pytest.mark.parametrize("k", [1, 2, 3])
def test_a_card_at_quarter_turns_is_the_upright_card_turned(k):
    img, mask = draw_card(parse_card("JD"), 150)
    turned, turned_mask = rotate_sprite(img, mask, 90 * k)
    assert np.array_equal(turned, np.rot90(img, k))
    assert np.array_equal(turned_mask, np.rot90(mask, k))


def test_a_card_at_180_degrees_on_the_table_is_the_upright_frame_turned_round():
    table = np.full((241, 321, 3), 90, np.uint8)  # odd sizes: the centre is a pixel
    card = parse_card("QS")
    upright = render_pile([Placement(card, 160, 120, 0, 101)], table, rng(), shadow=0)  # 101 x 141
    turned = render_pile([Placement(card, 160, 120, 180, 101)], table, rng(), shadow=0)
    assert np.array_equal(turned, upright[::-1, ::-1])


def test_any_angle_keeps_the_card_area():
    img, mask = draw_card(parse_card("3C"), 150)
    for angle in (17, 45, -133.5, 271):
        _, turned = rotate_sprite(img, mask, angle)
        assert abs(int(turned.sum()) - int(mask.sum())) / mask.sum() < 0.02


# Tables ------------------------------------------------------------------------------------


def test_table_kinds_differ_and_light_is_bright_and_dark_is_dark():
    tables = {kind: table_surface(kind, SIZE, rng()) for kind in TABLE_KINDS}
    for kind, img in tables.items():
        assert img.shape == (SIZE[1], SIZE[0], 3) and img.dtype == np.uint8, kind
    means = {kind: img.mean(axis=(0, 1)) for kind, img in tables.items()}
    kinds = list(TABLE_KINDS)
    for i in range(len(kinds)):
        for j in range(i + 1, len(kinds)):
            assert np.abs(means[kinds[i]] - means[kinds[j]]).max() > 10, (kinds[i], kinds[j])
    assert tables["light"].mean() > 200
    assert tables["dark"].mean() < 60
    b, g, r = means["green_cloth"]
    assert g > r and g > b


def test_tables_are_seeded():
    for kind in TABLE_KINDS:
        assert np.array_equal(table_surface(kind, SIZE, rng(3)), table_surface(kind, SIZE, rng(3)))
        assert not np.array_equal(table_surface(kind, SIZE, rng(3)), table_surface(kind, SIZE, rng(4)))


def test_unknown_table_kind_is_refused():
    with pytest.raises(ValueError, match="unknown table kind"):
        table_surface("marble", SIZE, rng())


# Piles and the lens ------------------------------------------------------------------------

EFFECTS = {"lighting": 0.5, "glare": 0.7, "blur": 1.0, "noise": 5.0, "jpeg_quality": 60}


def pile() -> list[Placement]:
    return [Placement(parse_card("2S"), 150, 120, 10, 120), Placement(parse_card("KH"), 170, 125, -20, 120)]


def test_render_pile_is_seeded():
    a = render_pile(pile(), "wood", rng(5), size=SIZE, **EFFECTS)
    b = render_pile(pile(), "wood", rng(5), size=SIZE, **EFFECTS)
    c = render_pile(pile(), "wood", rng(6), size=SIZE, **EFFECTS)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


def test_the_last_placement_is_on_top():
    table = table_surface("green_cloth", SIZE, rng())
    under, over = parse_card("2S"), parse_card("KH")
    a = render_pile([Placement(under, 160, 120, 0, 120), Placement(over, 160, 120, 0, 120)], table, rng())
    b = render_pile([Placement(over, 160, 120, 0, 120), Placement(under, 160, 120, 0, 120)], table, rng())
    alone = render_pile([Placement(over, 160, 120, 0, 120)], table, rng())
    assert np.array_equal(a[70:170, 110:210], alone[70:170, 110:210])
    assert not np.array_equal(a, b)


def test_a_card_shows_on_every_table_including_a_light_one():
    for kind in TABLE_KINDS:
        table = table_surface(kind, SIZE, rng())
        frame = render_pile([Placement(parse_card("AS"), 160, 120, 30, 120)], table, rng())
        assert not np.array_equal(frame, table), kind
        assert frame[100:140, 140:180].min() < 60, kind  # the ace's big spade


@pytest.mark.parametrize("effect", sorted(EFFECTS))
def test_each_effect_changes_the_image_but_not_its_size(effect):
    table = table_surface("light", SIZE, rng())
    clean = render_pile(pile(), table, rng(2))
    changed = render_pile(pile(), table, rng(2), **{effect: EFFECTS[effect]})
    assert changed.shape == clean.shape and changed.dtype == np.uint8
    assert np.abs(changed.astype(int) - clean).mean() > 0.2


def test_lighting_darkens_and_glare_brightens():
    table = table_surface("dark", SIZE, rng())
    clean = render_pile([], table, rng(2))
    assert render_pile([], table, rng(2), lighting=0.6).mean() < clean.mean()
    assert render_pile([], table, rng(2), glare=0.8).max() > clean.max() + 50


def test_render_pile_draws_placements_partly_off_the_frame():
    frame = render_pile([Placement(parse_card("4D"), -20, 230, 45, 150)], "dark", rng(), size=SIZE)
    assert frame.shape == (SIZE[1], SIZE[0], 3)


# The hand ----------------------------------------------------------------------------------


@pytest.mark.parametrize("side", ["bottom", "top", "left", "right"])
def test_the_hand_comes_in_from_its_side_and_occludes(side):
    frame = np.full((240, 320, 3), 255, np.uint8)
    assert np.array_equal(draw_hand(frame, side, 0.0, rng()), frame)  # still outside
    half = draw_hand(frame, side, 0.5, rng())
    changed = np.any(half != frame, axis=2)
    ys, xs = np.nonzero(changed)
    edge = {"bottom": ys.max() == 239, "top": ys.min() == 0, "left": xs.min() == 0, "right": xs.max() == 319}
    assert edge[side]
    full = draw_hand(frame, side, 1.0, rng())
    assert np.any(full[115:125, 155:165] != 255)  # the fingertips reach the centre
    assert frame.min() == 255  # the input is untouched


def test_the_hand_is_seeded_and_rejects_unknown_sides():
    frame = np.zeros((240, 320, 3), np.uint8)
    assert np.array_equal(draw_hand(frame, "left", 0.7, rng(1)), draw_hand(frame, "left", 0.7, rng(1)))
    with pytest.raises(ValueError, match="unknown side"):
        draw_hand(frame, "under", 0.5, rng())


# The lay clip ------------------------------------------------------------------------------

SIDES = {0: "bottom", 1: "left", 2: "top", 3: "right"}


def clip(seed: int = 11, **kwargs):
    cards = [parse_card(c) for c in ("QS", "7H", "10D", "JOKER")]
    return cards, render_lay_sequence(
        cards, [0, 1, 2, 3], SIDES, rng(seed), size=SIZE, card_width=80, **kwargs
    )


def test_lay_sequence_timestamps_and_ground_truth():
    cards, (frames, truth) = clip()
    times = [t for t, _ in frames]
    assert times == [round(k * 1e6 / 30) for k in range(len(frames))]
    assert all(img.shape == (SIZE[1], SIZE[0], 3) for _, img in frames)
    assert [(c, s) for _, c, s in truth] == list(zip(cards, [0, 1, 2, 3], strict=True))
    rests = [t for t, _, _ in truth]
    assert rests == sorted(rests) and len(set(rests)) == len(rests)
    assert set(rests) <= set(times)


def test_lay_sequence_rest_frames_show_the_pile_without_the_hand():
    # Without noise or compression a resting pile is the same picture frame after frame.
    _, (frames, truth) = clip(noise=0, jpeg_quality=None)
    index = {t: k for k, (t, _) in enumerate(frames)}
    for t_rest, _, _ in truth:
        k = index[t_rest]
        assert not np.array_equal(frames[k - 1][1], frames[k][1])  # the hand was still in the frame before
        if k + 1 < len(frames):
            assert np.array_equal(frames[k][1], frames[k + 1][1])


def test_lay_sequence_is_seeded():
    _, (a, ta) = clip(3)
    _, (b, tb) = clip(3)
    assert ta == tb
    assert all(np.array_equal(x, y) for (_, x), (_, y) in zip(a, b, strict=True))


def test_lay_sequence_needs_a_seat_per_card():
    with pytest.raises(ValueError, match="one seat per card"):
        render_lay_sequence([parse_card("QS")], [], SIDES, rng())


# Card images from a folder -----------------------------------------------------------------


def test_load_card_images_reads_card_codes_and_skips_other_names(tmp_path):
    red = np.zeros((88, 63, 3), np.uint8)
    red[:] = (0, 0, 255)
    for name in ("QS.png", "10h.PNG", "TD.png", "joker.png", "back.png", "ZZ.png"):
        cv2.imwrite(str(tmp_path / name), red)
    (tmp_path / "notes.txt").write_text("not an image")
    (tmp_path / "KS.png").write_bytes(b"not a png")
    faces = load_card_images(tmp_path)
    assert sorted(faces) == ["10D", "10H", "JOKER", "QS"]
    assert faces["QS"].shape == (88, 63, 3)

    frame = render_pile(
        [Placement(parse_card("QS"), 160, 120, 0, 100)], "dark", rng(), size=SIZE, faces=faces
    )
    b, g, r = frame[120, 160]
    assert r > 200 and g < 30 and b < 30  # the folder's face, not the built-in one
