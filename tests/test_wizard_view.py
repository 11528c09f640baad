"""What the wizard's page shows of a step (calibration/wizard_view.py), the simulated table's
pace (wizard.Pacer), and the buttons step's simulated players answering through `say`."""

from __future__ import annotations

from dataclasses import dataclass, replace

import cv2
import numpy as np
import pytest

from calibration.camera_check import PileArea, meters, verdict
from calibration.sim_buttons import drive_buttons_sim
from calibration.steps import Prompt
from calibration.steps_buttons import ButtonsStep
from calibration.steps_camera import CameraStep
from calibration.wizard import CATCH_UP_S, PacedClock, Pacer
from calibration.wizard_view import choices, cue_lights, jpeg, preview_image, prompt_view
from referee.cards import parse_card
from referee.errors import UserError
from referee.live.wiring import default_wiring


@dataclass(frozen=True)
class ChoicePrompt(Prompt):
    """`steps.Prompt` as it will be with its `choices` field (answers taken while frames are awaited)."""

    choices: tuple[str, ...] = ()


def test_a_seats_or_deck_prompt_is_its_text_what_it_waits_for_and_its_progress():
    card = Prompt("Lay the 7 of hearts face up on the pile (18 of 52).", "card", (18, 52), parse_card("7H"))
    assert prompt_view(card) == {
        "text": "Lay the 7 of hearts face up on the pile (18 of 52).",
        "note": "",
        "waits": "card",
        "progress": [18, 52],
        "choices": [],
        "phase": None,
        "lights": None,
    }
    check = Prompt(
        "Self-check: lay the king of spades face up on the pile (3 of 10).", "card", (3, 10), check=True
    )
    assert prompt_view(check)["phase"] == "self-check"


def test_a_question_offers_yes_and_no_and_the_page_drops_the_y_n():
    asked = Prompt("Is it the 7 of hearts? (y/n)", "answer", (18, 52))
    view = prompt_view(asked)
    assert view["choices"] == ["yes", "no"] and view["text"] == "Is it the 7 of hearts?"
    assert prompt_view(Prompt("Done: 16 cards learnt.", "nothing"))["choices"] == []


def test_a_prompts_own_choices_are_offered_even_while_it_waits_for_a_card():
    missing = ChoicePrompt(
        "Lay the 7 of hearts face up on the pile (18 of 52).", "card", (18, 52), choices=("missing",)
    )
    assert choices(missing) == ("missing",) and prompt_view(missing)["waits"] == "card"


def test_the_camera_steps_prompts():
    step = CameraStep()
    view = prompt_view(step.prompt())
    assert (view["phase"], view["waits"], view["choices"], view["progress"]) == ("light", "frames", [], None)


def test_the_buttons_steps_prompts_carry_their_choices_progress_note_and_lights():
    step = ButtonsStep(default_wiring(3))
    first = prompt_view(step.prompt())
    assert first["choices"] == ["skip"] and first["progress"] == [1, 3] and first["waits"] == "press"
    assert first["lights"] is None
    for _ in range(3):
        step.answer("skip")  # each seat skipped: its pin kept from the wiring file
    leds = step.prompt()
    assert leds.phase == "leds"
    assert prompt_view(leds)["lights"] == {"seats": [1.0, 0.0, 0.0], "tune": False}
    for _ in range(3):
        step.answer("skip")
    buzzer = prompt_view(step.prompt())
    assert buzzer["choices"] == ["yes", "no", "again"] and buzzer["progress"] is None  # not "1 of 1"
    assert buzzer["lights"] == {"seats": [0.0, 0.0, 0.0], "tune": True}


def test_cue_lights_are_none_when_all_is_off():
    assert cue_lights(()) is None
    assert cue_lights(((0, ("seat", 0), 0.0), (0, "buzzer", None))) is None
    assert cue_lights(((0, ("seat", 1), 1.0), (5, ("seat", 1), 0.25))) == {
        "seats": [0.0, 0.25],
        "tune": False,
    }


def frame(w: int = 640, h: int = 480) -> np.ndarray:
    image = np.full((h, w, 3), (40, 110, 45), np.uint8)
    cv2.rectangle(image, (250, 150), (390, 345), (245, 245, 245), -1)  # a card
    return image


def test_the_preview_is_downscaled_with_the_pile_box_drawn():
    plain = preview_image(frame())
    assert plain.shape == (360, 480, 3)
    boxed = preview_image(frame(), None, (100, 40, 540, 440))
    assert boxed.shape == plain.shape
    drawn = np.argwhere(np.any(boxed != plain, axis=2))
    assert len(drawn) > 0
    (y0, x0), (y1, x1) = drawn.min(axis=0), drawn.max(axis=0)
    assert abs(x0 - 75) <= 2 and abs(y0 - 30) <= 2 and abs(x1 - 404) <= 2 and abs(y1 - 329) <= 2  # x 0.75
    small = frame(320, 240)
    assert preview_image(small).shape == small.shape  # never enlarged


def test_the_camera_steps_preview_has_its_meters_and_the_card_at_the_previews_scale():
    quad = np.array([[250, 150], [390, 150], [390, 345], [250, 345]], np.float32)
    area = PileArea(quad, 140.0, (320.0, 247.5), (110, 37, 530, 458))
    m = meters(frame(), quad)
    step_prompt = CameraStep().prompt()
    shown = replace(step_prompt, meters=m, verdict=verdict(m, 140.0), area=area)
    image = preview_image(frame(), shown)
    assert image.shape == (360, 480, 3)
    band = image[:20]
    assert band.mean() < frame()[:20].mean()  # the dark band behind the meters' text
    b, g, r = (image[:, :, i].astype(int) for i in range(3))
    green = (g > 180) & (r < 140) & (b < 140)  # the card's outline, at 0.75 of the frame
    _, xs = np.nonzero(green[45:])  # below the band of text (its verdict is green too)
    assert abs(xs.min() - 187) <= 3 and abs(xs.max() - 292) <= 3


def test_jpeg_round_trips():
    data = jpeg(preview_image(frame()))
    assert data[:2] == b"\xff\xd8" and len(data) < 60_000
    assert cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR).shape == (360, 480, 3)


# The pace ----------------------------------------------------------------------------------


class FakeTime:
    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(round(seconds, 6))
        self.now += seconds


def test_at_speed_0_the_table_never_waits():
    t = FakeTime()
    pacer = Pacer(0, t.sleep, t.clock)
    for us in (0, 1_000_000, 60_000_000):
        pacer.at(us)
    assert t.slept == []


@pytest.mark.parametrize("speed, seconds", [(1, 1.0), (10, 0.1), (0.5, 2.0)])
def test_the_table_is_held_to_the_wall_clock(speed, seconds):
    t = FakeTime()
    pacer = Pacer(speed, t.sleep, t.clock)
    pacer.at(5_000_000)  # the pace starts here
    pacer.at(5_000_000 + 500_000)
    pacer.at(6_000_000)
    assert sum(t.slept) == pytest.approx(seconds) and len(t.slept) == 2


def test_a_table_behind_starts_the_pace_afresh_and_a_new_tables_clock_too():
    t = FakeTime()
    pacer = Pacer(1, t.sleep, t.clock)
    pacer.at(0)
    t.now += 30.0  # the table waited for an answer from the page
    pacer.at(1_000_000)
    assert t.slept == []  # not rushed, not held: from here
    pacer.at(1_500_000)
    assert t.slept == [0.5]
    t.now += CATCH_UP_S / 2  # a little behind (rendering): caught up, not restarted
    pacer.at(2_500_000)
    assert t.slept == [0.5, 1.0 - CATCH_UP_S / 2]
    pacer.at(200_000)  # the next step's table, its clock from 0 again
    pacer.at(700_000)
    assert t.slept[-1] == 0.5


def test_a_negative_speed_is_a_one_line_error():
    with pytest.raises(UserError, match="--speed must be 0"):
        Pacer(-1)


def test_the_buttons_players_say_what_say_says_on_a_paced_clock():
    wiring = default_wiring(2)
    times: list[int] = []

    class Recording(Pacer):
        def at(self, t_us: int) -> None:
            times.append(t_us)

    heard: list[str] = []

    def say(prompt) -> str | None:
        if prompt.phase == "buttons" and prompt.progress == (2, 2) and "skip" not in heard:
            heard.append("skip")
            return "skip"  # given on the page while Bob's press is awaited
        if prompt.phase == "buzzer":
            heard.append("no")
            return "no"
        return None

    step = ButtonsStep(wiring)
    took = drive_buttons_sim(
        step, wiring, list(wiring.buttons), 1, lambda p: None, say, PacedClock(Recording(1), 7_000_000)
    )
    result = step.result()
    assert heard == ["skip", "no"]
    assert result.pressed == (True, False) and result.buzzer is False
    assert times == sorted(times) and times[0] >= 7_000_000 and times[-1] - 7_000_000 == took
