"""`referee calibrate`: the whole wizard at the simulated table, interrupted and resumed."""

from __future__ import annotations

from pathlib import Path

import pytest

from calibration.profile import TableProfile, load, partial_path, save
from referee.cli import main


def test_the_wizard_interrupted_keeps_the_old_profile_and_resumes_where_it_stopped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "table-profile.npz"
    save(TableProfile(deck_name="last year's deck").with_step("deck", deck_name="last year's deck"), out)
    before = out.read_bytes()
    argv = ["calibrate", "--sim", "--quick", "--players", "Ann,Bob,Cy", "--out", str(out)]

    import calibration.steps_deck as steps_deck

    class CtrlC(steps_deck.DeckStep):
        def __post_init__(self) -> None:
            raise KeyboardInterrupt  # the host gives up during the deck step

    monkeypatch.setattr(steps_deck, "DeckStep", CtrlC)
    assert main(argv) == 130
    assert out.read_bytes() == before  # the profile in use is untouched
    assert load(partial_path(out)).done == ("camera", "seats")  # what was finished is kept
    monkeypatch.undo()

    capsys.readouterr()
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "1. camera: done before, kept" in text and "2. seats: done before, kept" in text
    assert "3. deck" in text and "4. buttons" in text
    profile = load(out)
    assert profile.done == ("camera", "seats", "deck", "buttons")
    assert profile.seats == {"bottom": 0, "left": 1, "top": 2} and profile.deck_name == "my deck"
    assert not partial_path(out).exists()


def test_the_wizard_needs_a_camera_or_the_simulated_table(tmp_path: Path, capsys) -> None:
    assert main(["calibrate", "--out", str(tmp_path / "p.npz")]) == 2
    assert "give --camera SOURCE" in capsys.readouterr().err
