"""`referee recognize`, `referee watch` and `referee calibrate deck`, end to end."""

import json

import cv2
import numpy as np
import pytest

from referee.cards import SUITED, parse_card
from referee.cli.main import main
from referee.rules.script import adjudicate
from referee.sim.card_themes import available_themes, theme_cards
from referee.sim.render import STYLES, Placement, render_lay_sequence, render_pile

CARDS = ["7H", "QS", "2D", "9C", "KH"]
SEATS = [0, 1, 2, 0, 1]
SIDES = {0: "bottom", 1: "left", 2: "top"}


@pytest.fixture(scope="module")
def clip(tmp_path_factory):
    """A rendered clip of five lays, as an image folder, with its ground truth."""
    folder = tmp_path_factory.mktemp("clip")
    frames, truth = render_lay_sequence(
        [parse_card(c) for c in CARDS], SEATS, SIDES, np.random.default_rng(3)
    )
    for i, (_, image) in enumerate(frames):
        cv2.imwrite(str(folder / f"frame{i}.png"), image)
    return folder, truth


def run(capsys, *argv):
    capsys.readouterr()
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_watch_prints_one_lay_per_card_at_rest_with_its_seat(clip, capsys):
    folder, truth = clip
    status, out, _ = run(capsys, "watch", str(folder), "--seats", "bottom=0,left=1,top=2")
    lays = [json.loads(line) for line in out.splitlines()]
    assert status == 0
    assert [(lay["t"], lay["lay"], lay["seat"]) for lay in lays] == [(t, c.code, s) for t, c, s in truth]
    assert all(0 < lay["confidence"] <= 1 for lay in lays)


def test_watch_output_with_a_game_line_is_a_script_adjudicate_rules_on(clip, capsys):
    folder, _ = clip
    game = '{"game": {"players": ["Ann", "Bob", "Cy"]}}'
    status, out, _ = run(capsys, "watch", str(folder), "--game", game, "--seats", "bottom=0,left=1,top=2")
    rulings = [r.to_json() for r in adjudicate(out.splitlines(), "watch")]
    assert status == 0
    assert [r["card"] for r in rulings if r["event"] == "laid"] == CARDS


def test_a_cleared_line_from_the_camera_is_accepted_as_time_passing():
    lines = [
        '{"game": {"players": ["Ann", "Bob"]}}',
        '{"t": 1000, "lay": "7H"}',
        '{"t": 2000, "cleared": true}',
    ]
    assert [r.event for r in adjudicate(lines, "x")] == ["laid"]


def test_recognize_prints_the_top_card_of_each_frame_and_reports_bad_ones(tmp_path, capsys):
    image = render_pile(
        [Placement(parse_card("QS"), 320, 240, 30, 200)], "green_cloth", np.random.default_rng(1)
    )
    good = tmp_path / "qs.png"
    cv2.imwrite(str(good), image)
    bad = tmp_path / "broken.png"
    bad.write_bytes(b"not an image")
    status, out, err = run(capsys, "recognize", str(good), str(bad))
    assert status == 2
    line = json.loads(out) | {"confidence": 1}
    assert line == {"frame": str(good), "card": "QS", "confidence": 1, "sure": True}
    assert err == f"{bad}: not a JPEG, PNG, WebP or BMP image\n"


def test_recognize_refuses_a_joker_in_a_52_card_deck(tmp_path, capsys):
    image = render_pile(
        [Placement(parse_card("JOKER"), 320, 240, 30, 200)], "green_cloth", np.random.default_rng(5)
    )
    path = tmp_path / "joker.png"
    cv2.imwrite(str(path), image)
    status, out, _ = run(capsys, "recognize", str(path))
    assert status == 0 and json.loads(out)["card"] == "JOKER"
    status, out, _ = run(capsys, "recognize", "--deck", "52", str(path))
    line = json.loads(out)
    assert status == 0 and line["card"] is None and line["sure"] is False


def test_calibrate_deck_learns_a_profile_that_recognize_uses(tmp_path, capsys):
    rng = np.random.default_rng(2)
    images = tmp_path / "deck"
    images.mkdir()
    for code in ("7H", "QS", "2D", "9C", "KH", "AS"):
        frame = render_pile(
            [Placement(parse_card(code), 320, 240, 0, 220)], "wood", rng, style=STYLES["thin"]
        )
        cv2.imwrite(str(images / f"{code}.png"), frame)
    # A photo with no card in it: learnt without it, and said so on one line.
    cv2.imwrite(str(images / "3C.png"), render_pile([], "wood", rng))
    # A photo cut off in the copy: named, and the card left to its corner.
    cut = images / "5D.png"
    cut.write_bytes((images / "7H.png").read_bytes()[:5000])
    profile = tmp_path / "thin.npz"
    status, out, err = run(capsys, "calibrate", "deck", "--images", str(images), "--out", str(profile))
    assert status == 0 and profile.is_file() and "learned 6 of 7 card images" in out
    said = f"{images}: 3C: no card found in its image; it will be read by its corner alone"
    cut_off = (
        f"{cut}: a PNG cut off before its end (a partial copy or download?); 5D will be read by its corner"
    )
    cut_off += " alone"
    assert err.strip().splitlines() == [cut_off, said]
    probe = tmp_path / "probe.png"
    cv2.imwrite(
        str(probe),
        render_pile([Placement(parse_card("KH"), 300, 250, 140, 180)], "dark", rng, style=STYLES["thin"]),
    )
    status, out, _ = run(capsys, "recognize", "--profile", str(profile), str(probe))
    assert status == 0 and json.loads(out)["card"] == "KH"


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["watch", "/no/such/source"], "no such file, folder or camera"),
        (["watch", ".", "--seats", "middle=1"], "--seats: 'middle=1'"),
        (["watch", ".", "--game", '{"game": {"players": ["Ann"]}}'], "--game:1: a game has 2 to 8 players"),
        (["recognize", "--profile", "/no/such.npz", "x.png"], "/no/such.npz"),
        (["calibrate", "deck", "--images", "/no/such/dir", "--out", "p.npz"], "no such folder"),
    ],
    ids=["missing-source", "bad-seats", "bad-game", "missing-profile", "missing-images"],
)
def test_mistakes_get_one_line_and_exit_status_2(capsys, argv, words):
    status, _, err = run(capsys, *argv)
    assert status == 2 and err.count("\n") == 1 and words in err and "Traceback" not in err


@pytest.mark.skipif(
    not {"anglo", "paris"} <= set(available_themes()), reason="apt install gnome-cards-data librsvg2-bin"
)
def test_a_profile_of_another_deck_is_one_line_and_exit_2_once_enough_cards_say_so(tmp_path, capsys):
    rng = np.random.default_rng(5)
    anglo, paris = theme_cards("anglo", 250), theme_cards("paris", 250)
    images = tmp_path / "anglo"
    images.mkdir()
    for card in SUITED:
        photo = render_pile([Placement(card, 320, 240, 0, 200)], "wood", rng, faces=anglo)
        cv2.imwrite(str(images / f"{card.code}.png"), photo)
    profile = tmp_path / "anglo.npz"
    assert run(capsys, "calibrate", "deck", "--images", str(images), "--out", str(profile))[0] == 0

    def photos(faces, folder):
        folder.mkdir()
        for i in range(10):
            card = SUITED[int(rng.integers(52))]
            pile = [Placement(card, 320, 240, float(rng.uniform(0, 360)), 200)]
            cv2.imwrite(str(folder / f"{i}.png"), render_pile(pile, "green_cloth", rng, faces=faces))
        return sorted(str(p) for p in folder.iterdir())

    status, out, err = run(capsys, "recognize", "--profile", str(profile), *photos(anglo, tmp_path / "a"))
    assert status == 0 and err == ""
    status, out, err = run(capsys, "recognize", "--profile", str(profile), *photos(paris, tmp_path / "p"))
    assert status == 2 and len(out.splitlines()) == 10  # every photo's line stands
    assert err.startswith(f"{profile}: its pictures match ") and "a profile of another deck?" in err
    assert err.count("\n") == 1
