"""The wizard's seats step: each seat's side of the picture, from its hand reaching in."""

from __future__ import annotations

from calibration.sim_table import SimTable
from calibration.steps_seats import SeatsStep
from calibration.wizard import drive_sim
from referee.vision.recogniser import Recogniser

RECOGNISER = Recogniser()


def test_each_seat_is_found_on_its_side_and_a_reach_from_a_taken_side_is_asked_again():
    step = SeatsStep(["Ann", "Bob", "Cy", "Dee"], RECOGNISER)
    said: list[str] = []
    drive_sim(
        step, SimTable(4, slips={2: 0}), lambda prompt: said.append(prompt.text)
    )  # Cy reaches from Ann's side
    assert step.result() == {"bottom": 0, "left": 1, "top": 2, "right": 3}
    assert "That hand came from the bottom, where Ann sits. Take the card back." in said
    assert said[0] == "Ann (seat 1 of 4): reach in from where you sit and lay a card in the middle."
    assert said[-1] == "Done: Ann bottom, Bob left, Cy top, Dee right."


def test_with_more_than_four_seats_a_shared_side_names_neither_seat():
    step = SeatsStep(["Ann", "Bob", "Cy", "Dee", "Eve"], RECOGNISER)
    drive_sim(step, SimTable(4, slips={4: 0}), lambda prompt: None)  # Eve sits beside Ann
    assert step.result() == {"left": 1, "top": 2, "right": 3}
    assert step.prompt().text.endswith("; shared, so not told apart: bottom.")


def test_calibrate_seats_at_the_simulated_table_adds_the_seats_to_the_profile(tmp_path, capsys):
    from referee.cli.main import main
    from referee.vision.profile import TableProfile, load, save

    out = tmp_path / "table-profile.npz"
    save(TableProfile(deck_name="old deck").with_step("deck", deck_name="old deck"), out)
    status = main(["calibrate", "seats", "--sim", "--players", "Ann,Bob,Cy", "--out", str(out)])
    assert status == 0 and "seats: { bottom = 0, left = 1, top = 2 }" in capsys.readouterr().out
    profile = load(out)
    assert profile.done == ("deck", "seats") and profile.deck_name == "old deck"  # the deck part kept
    assert profile.seats == {"bottom": 0, "left": 1, "top": 2}
    assert main(["calibrate", "seats", "--sim", "--players", "Ann", "--out", str(out)]) == 2
