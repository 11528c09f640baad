"""The wizard's deck step, driven through the simulated table's frames, and `calibrate deck`."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from calibration.sim_table import SimTable
from calibration.steps_deck import DeckMissing, DeckStep, card_words
from calibration.wizard import drive_live, drive_sim
from hardware.frames import CameraLost
from referee.cards import parse_card
from referee.cli.main import main
from referee.errors import UserError
from referee.vision.profile import load
from referee.vision.recogniser import Reading, Recogniser


@pytest.fixture(scope="module")
def recogniser() -> Recogniser:
    return Recogniser()


def test_a_wrong_card_is_named_and_the_right_one_asked_again_then_the_deck_is_learnt_and_checked(recogniser):
    step = DeckStep(recogniser, random.Random(1), quick=True)
    table = SimTable(5, wrong=0.25)
    said: list[str] = []
    drive_sim(step, table, lambda prompt: said.append(prompt.text))
    result = step.result()
    assert table.wrong_cards > 0
    # Each wrong card is named, or (read doubtfully: the index model may call a glyph no rank)
    # taken off and laid again; never taken for the card asked.
    named = sum(text.startswith("That is the ") for text in said)
    again = sum(text.startswith("I could not read it well") for text in said)
    assert named >= table.wrong_cards - again and named >= table.wrong_cards - 1
    assert sorted(result.learnt) == sorted(c + s for c in ("A", "J", "Q", "K") for s in "SHDC")
    assert len(result.checked) == 10 and result.accuracy == 1.0
    assert said[0] == "Lay the ace of spades face up in the middle (1 of 16)."
    assert said[-1] == "Done: 16 cards learnt; the self-check read 10 of 10 right."


class _Unsure:
    """A recogniser that reads the card laid but is never sure of it (a deck it has not seen)."""

    def __init__(self, inner: Recogniser) -> None:
        self.inner = inner

    def recognise(self, image, mask=None, seen=frozenset()):
        reading = self.inner.recognise(image, mask, seen)
        return Reading(reading.card, 0.3, reading.quad, reading.ranked)


def test_a_doubtful_reading_is_laid_again_then_the_person_is_asked(recogniser):
    step = DeckStep(_Unsure(recogniser), random.Random(1), quick=True, checks=2)  # type: ignore[arg-type]
    said: list[str] = []
    drive_sim(step, SimTable(2, wrong=0.0), lambda prompt: said.append(prompt.text))
    assert said[1] == "I could not read it well. Take it off and lay it again."
    assert said[3] == "Is it the ace of spades? (y/n)"
    assert said[4] == "Good: the ace of spades. Lay the jack of spades face up on the pile (2 of 16)."
    assert len(step.result().learnt) == 16


def test_the_camera_lost_mid_step_stops_it_with_one_line(recogniser):
    step = DeckStep(recogniser, random.Random(1), quick=True)

    def frames():
        table = SimTable(1)
        yield from table.act(step.prompt())
        raise CameraLost("camera: no frame for 2 s (unplugged?)")

    with pytest.raises(UserError, match=r"unplugged\?\): calibration stopped; what was finished is saved"):
        drive_live(step, frames(), lambda question: "y", lambda prompt: None)
    assert not step.done


def test_a_card_the_deck_lacks_is_answered_missing_and_left_out(recogniser):
    step = DeckStep(recogniser, random.Random(1), quick=True)
    prompts: list = []
    drive_sim(step, SimTable(3, wrong=0.0, missing=frozenset({"QH"})), prompts.append)
    result = step.result()
    assert result.missing == ("QH",) and "QH" not in result.learnt and len(result.learnt) == 15
    assert "QH" not in {laid for laid, _ in result.checked}  # the self-check draws from the cards learnt
    asked = [p for p in prompts if p.waits == "card" and not p.check]
    assert all(p.choices == ("missing",) for p in asked)  # the kiosk shows it as a button
    assert any(p.text.startswith("Left out: the queen of hearts. Lay the king of hearts") for p in prompts)
    assert prompts[-1].text.startswith("Done: 15 cards learnt (1 missing: queen of hearts);")
    assert [p.text for p in prompts].count("Lay the ace of spades face up in the middle (1 of 16).") == 1


def test_a_deck_with_most_cards_missing_stops_with_one_line_and_learns_nothing(recogniser):
    step = DeckStep(recogniser, random.Random(1), quick=True)
    gone = frozenset({"AS", "JS", "QS", "KS", "AH"})  # 5 of 16: more than a quarter
    with pytest.raises(DeckMissing, match=r"^deck: 5 of the 16 cards asked are missing; this does not look"):
        drive_sim(step, SimTable(3, wrong=0.0, missing=gone), lambda prompt: None)
    assert not step.done


def test_missing_typed_at_the_terminal_while_the_camera_runs(recogniser):
    import io

    from calibration.terminal import Terminal
    from calibration.wizard import Pacer
    from referee.cli.calibrate_run import _watched

    step = DeckStep(recogniser, random.Random(1), quick=True)
    typed = iter([None, "missing\n"])  # nothing typed at the first frame, then "missing"
    out = io.StringIO()
    front = Terminal(out, sim=False, pacer=Pacer(0), typed=lambda: next(typed, None))
    frames = SimTable(1).camera.frames_until(1_000_000)  # the bare table: the ace of spades never laid
    with pytest.raises(UserError, match="frames ended before the step was done"):
        drive_live(step, _watched(frames, step, front), input, front.show)
    assert step.missing == ["AS"]
    assert out.getvalue().splitlines() == [
        "Lay the ace of spades face up in the middle (1 of 16).  [type missing and Enter]",
        "Left out: the ace of spades. Lay the jack of spades face up in the middle (2 of 16).  "
        "[type missing and Enter]",
    ]


def test_card_words():
    assert card_words(parse_card("10H")) == "10 of hearts"
    assert card_words(parse_card("QS")) == "queen of spades"


def test_calibrate_deck_at_the_simulated_table_writes_the_table_profile(tmp_path: Path, capsys):
    out = tmp_path / "table-profile.npz"
    status = main(["calibrate", "deck", "--sim", "--quick", "--name", "club deck", "--out", str(out)])
    text = capsys.readouterr().out
    import re

    # The self-check: at least 9 of 10, what `calibrate check` asks (OpenCV builds differ by a card).
    got = re.search(r"deck 'club deck': 16 cards learnt, self-check (\d+)% \(10 cards\)", text)
    assert status == 0 and got is not None and int(got.group(1)) >= 90
    profile = load(out)
    assert profile.done == ("deck",) and profile.deck_name == "club deck" and profile.deck is not None
    assert len(set(profile.deck.face_codes.tolist())) == 16


def test_calibrate_deck_from_images_still_needs_its_out(tmp_path: Path, capsys):
    status = main(["calibrate", "deck", "--images", str(tmp_path)])
    assert status == 2 and "--images needs --out PROFILE" in capsys.readouterr().err
