"""The built-in index model: the shipped network, its features, and how glyphs are cut out."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from referee.cards import JOKER_CODE, RANKS, SUITS, parse_card
from referee.sim import glyphs
from referee.sim.render import STYLES, card_sprite, draw_pip
from referee.vision import index as card_index
from referee.vision.index import (
    BODY_CAP,
    Body,
    _index_parts,
    _read_corner,
    _scores,
    corner_regions,
    in_doubt,
    most_pips,
    read_body,
    weigh_body,
)
from referee.vision.index_model import FEATURES, MODEL_PATH, UNKNOWN, GlyphNet, glyph_features, load_model
from referee.vision.recogniser import Recogniser

HELD_OUT = ("anglo", "tango", "simplistic", "paris", "bellot", "neoclassical")


def test_the_model_ships_with_the_package_and_was_never_shown_the_held_out_themes():
    rank, suit = load_model()
    # Each with its class for glyphs that are none of its own (a Dutch B, the O of JOKER).
    assert rank.classes == (*RANKS, UNKNOWN) and suit.classes == (*SUITS, UNKNOWN)
    with np.load(MODEL_PATH) as data:
        trained = {str(t) for t in data["trained_themes"]}
    assert trained and not trained & set(HELD_OUT)
    assert not any(t.startswith(("anglo", "gnomangelo", "tango", "neoclassical")) for t in trained)


def _net(seed: int, classes: tuple[str, ...] = ("A", "B", UNKNOWN), d: int = 6, hidden: int = 5) -> GlyphNet:
    rng = np.random.default_rng(seed)
    k = len(classes)
    return GlyphNet(
        classes, rng.normal(0, 1, d), rng.uniform(0.5, 2, d), rng.normal(0, 1, (d, hidden)),
        rng.normal(0, 1, hidden), rng.normal(0, 3, (hidden, k)), rng.normal(0, 1, k),
    )  # fmt: skip


def test_a_stack_of_members_reads_with_their_mean_probability():
    members = [_net(seed) for seed in (1, 2, 3)]
    x = np.random.default_rng(4).normal(0, 1, (7, 6))
    stack = GlyphNet.stacked(members)
    mean = np.mean([np.exp(m.log_probs(x)) for m in members], axis=0)
    assert stack.log_probs(x) == pytest.approx(np.log(mean), abs=1e-5)
    # Never surer than its surest member: one member sure alone does not make the stack sure.
    surest = np.max([np.exp(m.log_probs(x)).max(axis=1) for m in members], axis=0)
    assert np.all(np.exp(stack.log_probs(x)).max(axis=1) <= surest + 1e-6)
    assert stack.classes == members[0].classes


def test_a_single_networks_file_and_a_stacks_file_both_load(tmp_path):
    one, stack = _net(1), GlyphNet.stacked([_net(1), _net(2)])
    x = np.random.default_rng(5).normal(0, 1, (3, 6))
    for net in (one, stack):
        with np.load(_saved(tmp_path, net), allow_pickle=False) as data:
            again = GlyphNet.from_arrays(data, "rank")
        assert again.log_probs(x) == pytest.approx(net.log_probs(x), abs=1e-6)
    # A file written before stacks (2-D weights) reads as a stack of one.
    arrays = {k: (v if k == "rank_classes" else v[0]) for k, v in one.arrays("rank").items()}
    assert arrays["rank_w1"].ndim == 2
    old = GlyphNet.from_arrays(arrays, "rank")
    assert old.log_probs(x) == pytest.approx(one.log_probs(x), abs=1e-6)


def _saved(tmp_path, net: GlyphNet):
    path = tmp_path / f"net{id(net)}.npz"
    np.savez(path, **net.arrays("rank"))
    return path


def _text(text: str, font: int = cv2.FONT_HERSHEY_DUPLEX, thickness: int = 3) -> np.ndarray:
    img = np.zeros((80, 120), np.uint8)
    glyphs.put_text(img, text, (8, 62), font, 2.0, 255, thickness)
    return (img > 110).astype(np.uint8) * 255


def test_features_have_a_fixed_length_and_an_empty_glyph_has_none():
    assert glyph_features(_text("7")).shape == (FEATURES,)
    assert glyph_features(np.zeros((30, 20), np.uint8)) is None


@pytest.mark.parametrize("rank", RANKS)
def test_each_rank_drawn_in_a_plain_font_is_named(rank):
    net, _ = load_model()
    log_probs = net.log_probs(glyph_features(_text(rank)))[0]
    assert net.classes[int(np.argmax(log_probs))] == rank


@pytest.mark.parametrize("suit", SUITS)
def test_each_pip_is_named(suit):
    _, net = load_model()
    img = np.zeros((60, 60), np.uint8)
    draw_pip(img, suit, (30, 30), 44, 255)
    assert net.classes[int(np.argmax(net.log_probs(glyph_features(img))[0]))] == suit


def _corner(rank: str, touching_pip: bool) -> np.ndarray:
    """An upright card with a J in the corner and a court card's big spade right beside it."""
    card = np.full((280, 200, 3), 245, np.uint8)
    glyphs.put_text(card, rank, (8, 40), cv2.FONT_HERSHEY_COMPLEX, 1.1, (20, 20, 20), 2)
    draw_pip(card, "S", (18, 58), 16, (20, 20, 20))
    (w, _), _ = glyphs.text_size(rank, cv2.FONT_HERSHEY_COMPLEX, 1.1, 2)
    draw_pip(card, "S", (8 + w + (14 if touching_pip else 17), 26), 30, (20, 20, 20))
    return card


@pytest.mark.parametrize("touching", [False, True])
def test_a_big_pip_beside_the_rank_is_not_part_of_it(touching):
    card = _corner("J", touching)
    rank = _index_parts(card)[0]
    assert cv2.boundingRect(cv2.findNonZero(rank))[2] < 30  # the J alone, not J and spade
    scores = _read_corner(card)
    assert max(scores, key=scores.get) == "JS"


def test_a_ten_stays_whole():
    card = _corner("10", False)
    scores = _read_corner(card)
    assert max(scores, key=scores.get) == "10S"


@pytest.mark.parametrize("letter", ["B", "V", "H", "D", "O", "R"])
def test_a_letter_that_is_no_rank_is_named_as_none(letter):
    # Court letters of other decks (Dutch B V H, German D, an O or R): none of the 13 ranks.
    net, _ = load_model()
    log_probs = net.log_probs(glyph_features(_text(letter, cv2.FONT_HERSHEY_COMPLEX)))[0]
    assert net.classes[int(np.argmax(log_probs))] == UNKNOWN


def _blurred_thin(code: str, width: int, blur: float) -> np.ndarray:
    """An upright card of the thin style, blurred: its thin rank goes much fainter than the solid
    pips beside it."""
    face, _ = card_sprite(parse_card(code), width, STYLES["thin"])
    face = cv2.resize(face[:, :, :3], (200, 280), interpolation=cv2.INTER_LINEAR)
    return cv2.GaussianBlur(face, (0, 0), blur)


@pytest.mark.parametrize(
    ("code", "width", "blur"), [("9S", 110, 2.5), ("8C", 120, 2.75), ("3D", 110, 2.25), ("5H", 110, 2.0)]
)
def test_a_faint_thin_rank_beside_dark_pips_is_read_with_the_threshold_lifted(code, width, blur):
    card = _blurred_thin(code, width, blur)
    # Otsu's threshold, between the paper and the pips' dark ink, keeps only a piece of the rank,
    # which reads as no rank or another.
    first = _scores(*_index_parts(card))
    assert max(first, key=first.get) != code
    scores = _read_corner(card)
    assert max(scores, key=scores.get) == code


@pytest.mark.parametrize(("letter", "blur"), [("B", 2.2), ("O", 1.5)])
def test_a_blurred_letter_of_no_rank_stays_refused_with_the_threshold_lifted(letter, blur):
    # Lifted, a whole letter only fattens by its soft edge, and a fat B or O looks like a 10 or
    # an 8: the second reading is not taken for a rank the first threshold kept whole.
    card = np.full((280, 200, 3), 245, np.uint8)
    glyphs.put_text(card, letter, (8, 40), cv2.FONT_HERSHEY_COMPLEX, 1.1, (20, 20, 20), 2)
    draw_pip(card, "S", (18, 58), 16, (20, 20, 20))
    scores = _read_corner(cv2.GaussianBlur(card, (0, 0), blur))
    assert max(scores, key=scores.get) == UNKNOWN


@pytest.mark.parametrize(("style", "width", "contrast"), [("classic", 120, 0.4), ("thin", 160, 0.6)])
def test_a_faint_jokers_lettering_is_not_read_as_a_card_with_the_threshold_lifted(style, width, contrast):
    # Lifted, JOKER down the corner shows more rows than a rank over its pip: no plain index,
    # so the second reading is not taken (it read the J over the O as an 8 of clubs).
    face, _ = card_sprite(parse_card(JOKER_CODE), width, STYLES[style])
    face = cv2.resize(face[:, :, :3], (200, 280), interpolation=cv2.INTER_LINEAR).astype(np.float32)
    faint = (255 - (255 - face) * contrast).astype(np.uint8)
    scores = _read_corner(cv2.GaussianBlur(faint, (0, 0), 2.2))
    assert max(scores, key=scores.get) in (UNKNOWN, JOKER_CODE)


@pytest.mark.parametrize(("style", "width"), [("classic", 100), ("bold", 100), ("serif", 100), ("thin", 120)])
def test_a_jokers_word_down_the_corner_reads_as_the_joker_whatever_its_o_looks_like(style, width):
    # Small and blurred, the O under the J is a blob the suit model reads as a club: JOKER's
    # letters stacked down the corner, each the J's size, say it is no rank over its pip.
    face, _ = card_sprite(parse_card(JOKER_CODE), width, STYLES[style])
    face = cv2.resize(face[:, :, :3], (200, 280), interpolation=cv2.INTER_LINEAR)
    card = cv2.GaussianBlur(face, (0, 0), 2.0)
    assert _index_parts(card)[4] >= 4
    scores = _read_corner(card)
    assert max(scores, key=scores.get) == JOKER_CODE


@pytest.mark.parametrize("style", ["classic", "bold", "serif", "thin"])
def test_an_index_is_no_word(style):
    for code in ("10H", "AS", "QD", "8C", "JC", "KS"):
        face, _ = card_sprite(parse_card(code), 120, STYLES[style])
        card = cv2.resize(face[:, :, :3], (200, 280), interpolation=cv2.INTER_LINEAR)
        assert _index_parts(card)[4] < 4, code


def _own_card(code: str, width: int, style: str = "classic") -> np.ndarray:
    face, _ = card_sprite(parse_card(code), width, STYLES[style])
    return cv2.resize(face[:, :, :3], (200, 280), interpolation=cv2.INTER_LINEAR)


@pytest.mark.parametrize("style", ["classic", "bold", "serif", "thin"])
def test_the_body_pips_name_a_cards_suit_either_way_up_or_say_nothing(style):
    named = 0
    for code in ("3D", "4H", "5C", "6S", "7S", "8H", "9C", "10S", "2C", "AH", "JC", "QH", "KD"):
        card = cv2.GaussianBlur(_own_card(code, 110, style), (0, 0), 1.2)
        for view in (card, cv2.flip(card, -1)):
            suits = read_body(view).suits
            if suits is not None:
                assert max(suits, key=suits.get) == code[-1], code
                named += 1
    # The nine number cards, both ways up (a 3 by its two pips off the middle), and no more
    # than the ace's pip and a court's own pips besides.
    assert 18 <= named <= 22


@pytest.mark.parametrize("style", ["classic", "bold", "serif", "thin"])
def test_the_body_pips_of_a_two_or_a_three_name_its_suit(style):
    # Two pips of one size at a 2's places (a 3's middle pip is upright either way up, so
    # unread); a court's two pieces of picture are not in those places alone.
    for code in ("2S", "2H", "2C", "3S", "3D"):
        for blur in (0.0, 1.2):
            card = _own_card(code, 120, style)
            body = read_body(cv2.GaussianBlur(card, (0, 0), blur) if blur else card)
            assert body.suits is not None and max(body.suits, key=body.suits.get) == code[-1], (code, blur)


def _read_index_blurred(card: np.ndarray, blur: float, monkeypatch) -> tuple[str, str]:
    """The code read from `card` with its index corners blurred (the big body pips sharp), with
    the body pips heard, then unheard."""
    blurred = cv2.GaussianBlur(card, (0, 0), blur)
    for x0, y0, x1, y1 in corner_regions((200, 280)):
        card[y0:y1, x0:x1] = blurred[y0:y1, x0:x1]
    reader = Recogniser(jokers=False)
    scores = reader.read_warped(card)
    with_body = max(scores, key=scores.get)
    monkeypatch.setattr(card_index, "BODY_CAP", 0.0)
    scores = reader.read_warped(card)
    return with_body, max(scores, key=scores.get)


@pytest.mark.parametrize(
    ("code", "width", "blur", "style"),
    [("6C", 110, 3.5, "classic"), ("9C", 100, 3.0, "bold"), ("5C", 90, 3.0, "serif")],
)
def test_an_index_pip_too_blurred_to_tell_is_settled_by_the_body_pips(code, width, blur, style, monkeypatch):
    with_body, without = _read_index_blurred(_own_card(code, width, style), blur, monkeypatch)
    assert with_body == code
    assert without != code  # a blurred club is read as a spade, or as no suit


def test_the_body_pips_weigh_only_a_suit_and_at_most_their_cap():
    scores = {"8S": -0.1, "8C": -2.5, "3S": -4.0, UNKNOWN: -5.0}
    suits = {"S": np.log(0.01), "H": -30.0, "D": -30.0, "C": np.log(0.99)}
    assert in_doubt(scores)
    weighed = weigh_body(scores, Body(suits, 0))
    assert max(weighed, key=weighed.get) == "8C"
    assert weighed[UNKNOWN] == scores[UNKNOWN] and weighed["8C"] == scores["8C"]
    assert weighed["3S"] == pytest.approx(scores["3S"] + np.log(0.01) - np.log(0.99))
    assert weigh_body({"8S": 0.0}, Body({**suits, "S": -50.0}, 0))["8S"] == -BODY_CAP
    assert not in_doubt({"8S": -0.01, "8C": -9.0, UNKNOWN: -7.0})
    assert in_doubt({"8S": -0.01, "8C": -9.0, "9S": -1.0})
    assert in_doubt({UNKNOWN: -0.01, "8S": -3.0})  # no card of the deck, or the 8 its body may show


def test_a_court_or_a_lower_number_is_out_when_more_pips_are_counted_and_a_higher_one_loses_a_little():
    scores = {"QD": -0.1, "8D": -1.0, "7D": -2.0, "9D": -3.0, "10D": -3.5, "AD": -4.0, UNKNOWN: -5.0}
    weighed = weigh_body(scores, Body(None, 8))
    assert max(weighed, key=weighed.get) == "8D"
    for out in ("QD", "7D", "AD", UNKNOWN):  # pips are lost, never added; no picture makes eight
        assert weighed[out] == scores[out] - BODY_CAP
    assert weighed["8D"] == scores["8D"]
    for higher in ("9D", "10D"):  # a pip may be lost to a glare or a shadow
        assert scores[higher] - BODY_CAP < weighed[higher] < scores[higher]
    # Fewer than three pips, or more than a ten has: no count at all.
    assert weigh_body(scores, Body(None, 2)) == scores
    assert weigh_body(scores, Body(None, 11)) == scores
    # A court's picture may make up to six pips of one size, rarely a suit's pips.
    assert weigh_body(scores, Body(None, 6))["QD"] == scores["QD"]
    suits = {"S": -30.0, "H": -30.0, "D": 0.0, "C": -30.0}
    court, none = (weigh_body(scores, Body(suits, 6))[k] for k in ("QD", UNKNOWN))
    assert scores["QD"] - BODY_CAP < court < scores["QD"]
    assert scores[UNKNOWN] - BODY_CAP < none < scores[UNKNOWN]
    assert [most_pips(r) for r in RANKS] == [1, *range(2, 11), 6, 6, 6]


@pytest.mark.parametrize("style", ["classic", "bold", "serif", "thin"])
def test_the_body_pips_of_a_number_card_are_counted_either_way_up(style):
    for rank in ("3", "4", "5", "6", "7", "8", "9", "10"):
        card = cv2.GaussianBlur(_own_card(rank + "H", 110, style), (0, 0), 1.2)
        for view in (card, cv2.flip(card, -1)):
            assert read_body(view).count == int(rank), rank
    for court in ("JS", "QS", "KS"):
        assert read_body(_own_card(court, 110, style)).count <= most_pips(court[0])


@pytest.mark.parametrize(("code", "width", "blur"), [("8D", 90, 3.5), ("8C", 100, 3.5)])
def test_an_index_too_blurred_to_read_an_eight_is_settled_by_the_pips_counted(code, width, blur, monkeypatch):
    with_body, without = _read_index_blurred(_own_card(code, width, "thin"), blur, monkeypatch)
    assert with_body == code
    assert without in ("10" + code[-1], UNKNOWN)  # the blurred 8 is a 10's blob, or no rank's


@pytest.mark.parametrize("style", ["classic", "bold", "serif", "thin"])
def test_an_aces_lone_pip_is_told_from_every_other_cards_body(style):
    for code in ("AS", "AH", "AD", "AC"):
        for width in (100, 250):
            body = read_body(_own_card(code, width, style))
            assert body.sparse == 1, (code, width)
            # Its suit, either way up: upright only when the card lies the right way up.
            for view in (_own_card(code, width, style), cv2.flip(_own_card(code, width, style), -1)):
                suits = read_body(view).suits
                assert suits is not None and max(suits, key=suits.get) == code[-1], code
    for code in ("2S", "3H", "5D", "9C", "10S", "JH", "QC", "KD"):
        assert read_body(_own_card(code, 110, style)).sparse != 1, code


def test_a_lone_pip_rules_out_every_rank_but_the_ace():
    scores = {"8H": -0.1, "AH": -1.5, "QH": -2.0, "3H": -2.5, UNKNOWN: -3.0}
    weighed = weigh_body(scores, Body(None, 0, sparse=1))
    assert max(weighed, key=weighed.get) == "AH" and weighed["AH"] == scores["AH"]
    assert weighed[UNKNOWN] == scores[UNKNOWN]  # a joker's picture may be one star
    for out in ("8H", "QH", "3H"):  # a number card prints two pips or more, a court a picture of many parts
        assert weighed[out] == scores[out] - BODY_CAP
    assert weigh_body(scores, Body(None, 1)) == scores  # one pip of one size alone says nothing


@pytest.mark.parametrize(
    ("code", "width", "blur", "style"),
    [
        ("AH", 100, 3.0, "thin"),
        ("AS", 110, 3.5, "classic"),
        ("3D", 110, 3.5, "classic"),
        ("3H", 90, 3.0, "thin"),
    ],
)
def test_an_ace_or_a_three_whose_index_blurs_into_another_card_is_settled_by_its_lone_pip_or_column(
    code, width, blur, style, monkeypatch
):
    # Blurred, an ace's corner reads as a 6, a three's as an 8.
    with_body, without = _read_index_blurred(_own_card(code, width, style), blur, monkeypatch)
    assert with_body == code
    assert without != code


@pytest.mark.parametrize("style", ["classic", "bold", "serif", "thin"])
@pytest.mark.parametrize(
    ("rank", "others"),
    [
        ("2", ("AS", "3H", "4D", "5C", "8S", "10H", "JD", "QS", "KH")),
        ("3", ("AS", "2H", "4D", "5C", "7S", "9H", "10D", "JC", "QS", "KH")),
    ],
)
def test_a_twos_pair_and_a_threes_column_of_pips_are_told_from_every_other_cards_body(style, rank, others):
    sparse = int(rank)
    for code in (rank + suit for suit in "SHDC"):
        for width in (100, 250):
            card = _own_card(code, width, style)
            assert read_body(card).sparse == sparse and read_body(cv2.flip(card, -1)).sparse == sparse, code
    for code in others:
        assert read_body(_own_card(code, 110, style)).sparse != sparse, code


def test_a_twos_pair_rules_out_every_rank_but_the_two_and_a_three_missing_its_middle_pip_loses_a_little():
    scores = {"8H": -0.1, "2H": -1.5, "3H": -2.0, "AH": -2.5, UNKNOWN: -3.0}
    weighed = weigh_body(scores, Body(None, 2, sparse=2))
    assert max(weighed, key=weighed.get) == "2H" and weighed["2H"] == scores["2H"]
    for out in ("8H", "AH", UNKNOWN):  # no joker's picture nor foreign court is a pair of pips
        assert weighed[out] == scores[out] - BODY_CAP
    assert scores["3H"] - BODY_CAP < weighed["3H"] < scores["3H"]


@pytest.mark.parametrize(
    ("code", "width", "blur", "style"), [("2H", 140, 3.0, "bold"), ("2D", 90, 3.0, "serif")]
)
def test_a_two_whose_index_blurs_into_an_eight_is_settled_by_its_pair_of_pips(
    code, width, blur, style, monkeypatch
):
    with_body, without = _read_index_blurred(_own_card(code, width, style), blur, monkeypatch)
    assert with_body == code
    assert without == "8" + code[-1]


@pytest.mark.parametrize("style", ["classic", "bold", "serif", "thin"])
def test_a_courts_picture_is_seen_and_no_number_card_or_ace_has_one(style):
    for code in ("JS", "QH", "KD"):
        assert read_body(_own_card(code, 110, style)).picture, code
    for code in ("AS", "2H", "3D", "5C", "7S", "8H", "10D"):
        for blur in (0.0, 2.0):
            card = _own_card(code, 110, style)
            assert not read_body(cv2.GaussianBlur(card, (0, 0), blur) if blur else card).picture, code


def test_a_picture_rules_out_the_number_cards_and_the_aces():
    scores = {"8H": -0.1, "QH": -1.5, "AH": -2.0, UNKNOWN: -3.0}
    weighed = weigh_body(scores, Body(None, 0, picture=True))
    assert max(weighed, key=weighed.get) == "QH"
    assert (
        weighed["QH"] == scores["QH"] and weighed[UNKNOWN] == scores[UNKNOWN]
    )  # a joker's, a foreign court's
    for out in ("8H", "AH"):
        assert weighed[out] == scores[out] - BODY_CAP


@pytest.mark.parametrize(
    ("code", "width", "blur", "style"), [("JS", 100, 3.5, "classic"), ("JD", 90, 3.0, "serif")]
)
def test_a_court_whose_index_blurs_into_a_number_is_settled_by_its_picture(
    code, width, blur, style, monkeypatch
):
    with_body, without = _read_index_blurred(_own_card(code, width, style), blur, monkeypatch)
    assert with_body == code
    assert without[:-1] in ("3", "10")


def test_a_threes_column_rules_out_every_other_rank():
    scores = {"8S": -0.1, "3S": -1.5, "QS": -2.0, UNKNOWN: -3.0}
    weighed = weigh_body(scores, Body(None, 0, sparse=3))
    assert max(weighed, key=weighed.get) == "3S" and weighed["3S"] == scores["3S"]
    for out in ("8S", "QS", UNKNOWN):
        assert weighed[out] == scores[out] - BODY_CAP


@pytest.mark.parametrize("style", ["classic", "bold", "serif", "thin"])
def test_a_number_cards_corner_pips_are_found_and_a_jokers_middle_picture_leaves_them_bare(style):
    for code in ("4S", "5H", "6D", "7C", "8S", "9H", "10D"):
        for blur, width in ((0.0, 110), (2.0, 110), (1.0, 60)):
            card = _own_card(code, width, style)
            for view in (card, cv2.flip(card, -1)):
                assert not read_body(cv2.GaussianBlur(view, (0, 0), blur) if blur else view).bare, code
    assert read_body(_own_card(JOKER_CODE, 110, style)).bare


def test_bare_pip_corners_count_against_the_cards_from_4_to_10_only():
    scores = {"8C": -0.2, "6C": -0.5, "JC": -2.0, "3C": -2.5, "AC": -3.0, UNKNOWN: -1.5}
    weighed = weigh_body(scores, Body(None, 0, bare=True))
    assert max(weighed, key=weighed.get) == UNKNOWN  # a joker in a 52-card game: refused
    for code in ("8C", "6C"):
        assert weighed[code] == scores[code] - 3.0
    # A court's picture may leave them bare; an ace, a 2 and a 3 print no pip there.
    for code in ("JC", "3C", "AC", UNKNOWN):
        assert weighed[code] == scores[code]


@pytest.mark.parametrize("style", ["classic", "bold", "serif", "thin"])
def test_a_four_or_six_leaves_its_middle_column_bare_and_a_five_seven_nine_or_ten_does_not(style):
    for code, inked in (
        ("4S", False),
        ("6D", False),
        ("5H", True),
        ("7C", True),
        ("9S", True),
        ("10D", True),
    ):
        for blur, width in ((0.0, 110), (2.0, 110), (1.0, 60)):
            card = _own_card(code, width, style)
            for view in (card, cv2.flip(card, -1)):
                assert read_body(cv2.GaussianBlur(view, (0, 0), blur) if blur else view).middle == inked, code
    assert read_body(_own_card(JOKER_CODE, 110, style)).middle


def test_an_inked_middle_column_counts_against_a_four_and_a_six_only():
    scores = {"4C": -0.2, "5C": -0.9, "6C": -1.0, "9C": -2.0, "QC": -2.5, UNKNOWN: -3.0}
    weighed = weigh_body(scores, Body(None, 0, middle=True))
    assert max(weighed, key=weighed.get) == "5C"  # a 5 of clubs whose blurred corner read as a 4
    for code in ("4C", "6C"):
        assert weighed[code] == scores[code] - 3.0
    for code in ("5C", "9C", "QC", UNKNOWN):
        assert weighed[code] == scores[code]
