"""`referee calibrate`: the whole wizard at the simulated table, interrupted and resumed."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.cli.main import main
from referee.vision.profile import TableProfile, load, partial_path, save


def test_the_wizard_interrupted_keeps_the_old_profile_and_resumes_where_it_stopped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "table-profile.npz"
    save(TableProfile(deck_name="last year's deck").with_step("deck", deck_name="last year's deck"), out)
    before = out.read_bytes()
    argv = ["calibrate", "--sim", "--quick", "--players", "Ann,Bob,Cy", "--out", str(out)]

    import referee.cli.calibrate_run as calibrate_run  # where the command finds the deck step

    class CtrlC(calibrate_run.DeckStep):
        def __post_init__(self) -> None:
            raise KeyboardInterrupt  # the host gives up during the deck step

    monkeypatch.setattr(calibrate_run, "DeckStep", CtrlC)
    assert main(argv) == 130
    said = capsys.readouterr().err
    assert said == (
        f"calibration stopped in the deck step: steps done (camera, seats) kept in {partial_path(out)}; "
        "the same command goes on from there\n"
    )
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


def test_check_finds_the_table_as_calibrated_and_names_what_has_moved(tmp_path: Path, capsys) -> None:
    from dataclasses import replace

    out = tmp_path / "table-profile.npz"
    argv = ["calibrate", "--sim", "--quick", "--players", "Ann,Bob,Cy", "--out", str(out)]
    assert main(argv) == 0
    capsys.readouterr()
    assert main(["calibrate", "check", "--sim", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "Done: the self-check read 10 of 10 right." in text and "all as calibrated" in text
    profile = load(out)
    assert profile.camera is not None
    save(replace(profile, camera={**profile.camera, "card_px": 200.0}), out)  # the camera was higher then
    assert main(["calibrate", "check", "--sim", "--out", str(out)]) == 1
    text = capsys.readouterr().out
    assert "to do: camera: the card is 140 px, was 200 (referee calibrate camera)" in text
    assert "buttons: as calibrated" in text


def test_check_names_a_button_whose_wire_moved(tmp_path: Path, capsys) -> None:
    from dataclasses import replace

    out = tmp_path / "table-profile.npz"
    assert main(["calibrate", "--sim", "--quick", "--players", "Ann,Bob,Cy", "--out", str(out)]) == 0
    profile = load(out)
    assert profile.buttons is not None
    seats = [dict(seat) for seat in profile.buttons["seat"]]
    ann, bob = seats[0]["button"], seats[1]["button"]
    seats[0]["button"], seats[1]["button"] = bob, ann  # as if Ann's and Bob's wires were swapped since
    save(replace(profile, buttons={**profile.buttons, "seat": seats}), out)
    capsys.readouterr()
    assert main(["calibrate", "check", "--sim", "--out", str(out)]) == 1
    text = capsys.readouterr().out
    assert f"to do: buttons: Ann's button is on BCM {ann}, was BCM {bob} (referee calibrate buttons)" in text
    assert f"to do: buttons: Bob's button is on BCM {bob}, was BCM {ann} (referee calibrate buttons)" in text


def test_the_buttons_step_on_a_machine_without_gpio_is_one_line(
    tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpiozero import Device

    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "no-such-pin-library")
    monkeypatch.setattr(Device, "pin_factory", None)
    out = tmp_path / "table-profile.npz"
    assert main(["calibrate", "buttons", "--players", "3", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("buttons: cannot watch the GPIO pins (") and err.count("\n") == 1
    assert "Elsewhere: --sim" in err and not out.exists()


def test_camera_drift_names_a_size_change_and_a_move_but_not_jitter() -> None:
    from referee.cli.calibrate_run import camera_drift

    saved = {"card_px": 140.0, "pile_box": [100, 40, 520, 460]}
    assert camera_drift(saved, 145.0, (103, 42, 523, 462)) == []
    assert camera_drift(saved, 170.0, (100, 40, 520, 460))[0].startswith("camera: the card is 170 px")
    assert "moved 100 px" in camera_drift(saved, 140.0, (200, 40, 620, 460))[0]


def test_a_line_typed_is_read_without_waiting_and_nothing_typed_is_none():
    import os

    from calibration.wizard import typed_line

    read_end, write_end = os.pipe()
    with os.fdopen(read_end) as stream, os.fdopen(write_end, "w") as typing:
        assert typed_line(stream) is None  # nothing typed yet: no wait
        typing.write("missing\n")
        typing.flush()
        assert typed_line(stream) == "missing\n"
        assert typed_line(stream) is None
    assert typed_line(object()) is None  # not a file select can watch


def test_at_a_persons_terminal_each_prompt_has_its_progress_bar() -> None:
    import io

    from calibration.steps import Prompt
    from calibration.terminal import Terminal
    from calibration.wizard import Pacer

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Tty()
    front = Terminal(out, sim=False, pacer=Pacer(0), typed=lambda: None)
    front.show(Prompt("Lay the 7 of hearts face up on the pile (18 of 52).", "card", (18, 52)))
    front.show(Prompt("Is it the 7 of hearts? (y/n)", "answer"))
    lines = out.getvalue().splitlines()
    assert "━" in lines[0] and "18/52 Lay the 7 of hearts" in lines[0]
    assert lines[-1] == "Is it the 7 of hearts? (y/n)"  # no progress: the plain line
    piped = io.StringIO()
    Terminal(piped, sim=False, pacer=Pacer(0)).show(Prompt("Lay it (1 of 2).", "card", (1, 2)))
    assert piped.getvalue() == "Lay it (1 of 2).\n"  # a pipe or a log: plain lines
