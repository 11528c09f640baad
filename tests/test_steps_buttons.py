"""The calibration's buttons step, driven by edges on gpiozero mock pins on a virtual clock."""

from __future__ import annotations

import pytest

from calibration.bounce import LOCKOUT_US, NOISY_BOUNCE_US, bounce_stats
from calibration.steps_buttons import (
    ANSWER,
    AT_ONCE_US,
    NOTHING,
    PRESS,
    PRESS_TIMEOUT_US,
    PRESSES_PER_SEAT,
    TUNE,
    ButtonsIncomplete,
    ButtonsStep,
    free_pins,
)
from hardware.buttons import SnapButtons
from hardware.clock import VirtualClock
from hardware.pins import VirtualFactory
from hardware.signals import TableSignals
from referee.live.wiring import Wiring, default_wiring, parse_wiring

START = 1_000_000
CLEAN = (300, 700, 1_100, 1_400)  # a good microswitch: 4 extra edges, settled in 1.4 ms
CHATTER = (500, 2_000, 4_000, 7_000, 9_000, 12_000, 14_000, 15_000)  # still bouncing at 15 ms
HOLD_US = 120_000
WIRING = default_wiring(4)  # Ann 4, Bob 27, Cy 23, Dee 6


class Table:
    """The step with its candidate pins as SnapButtons on mock pins, as the wizard runs it."""

    def __init__(self, wiring: Wiring = WIRING, candidates: tuple[int, ...] | None = None) -> None:
        self.clock = VirtualClock(START)
        self.factory = VirtualFactory(self.clock)
        self.step = ButtonsStep(wiring, candidates)
        watched = self.step.candidates
        self.buttons = SnapButtons(
            watched,
            lambda e: self.step.feed_edge(watched[e.seat], not e.pressed, e.t),
            pin_factory=self.factory,
        )
        self.pins = {bcm: button.pin for bcm, button in zip(watched, self.buttons.buttons, strict=True)}
        self.step.tick(self.clock.now_us())

    def edges(self, bcm: int, t: int, bounce: tuple[int, ...], high: bool) -> None:
        """A contact change at `t` then its bounce: the level flips at each offset, ending at `high`."""
        level = high if len(bounce) % 2 == 0 else not high
        self.pins[bcm].edge(level, t)
        for offset in bounce:
            level = not level
            self.pins[bcm].edge(level, t + offset)
        assert level == high

    def press(self, *bcms: int, bounce: tuple[int, ...] = CLEAN, gap_us: int = 0) -> None:
        """Each pin pressed (`gap_us` apart), held, released; then time passes for the step to decide."""
        t = self.clock.now_us() + 1_000
        for i, bcm in enumerate(bcms):
            self.edges(bcm, t + i * gap_us, bounce, high=False)
        for i, bcm in enumerate(bcms):
            self.edges(bcm, t + i * gap_us + HOLD_US, bounce, high=True)
        self.wait(len(bcms) * gap_us + HOLD_US + AT_ONCE_US)

    def wait(self, us: int) -> None:
        self.clock.advance(us)
        self.step.tick(self.clock.now_us())

    def map_seat(self, bcm: int, bounce: tuple[int, ...] = CLEAN) -> None:
        for _ in range(PRESSES_PER_SEAT):
            self.press(bcm, bounce=bounce)

    def to_leds(self, order: tuple[int, ...] = (4, 27, 23, 6)) -> None:
        for bcm in order:
            self.map_seat(bcm)
        assert self.step.prompt().phase == "leds"

    def to_buzzer(self, order: tuple[int, ...] = (4, 27, 23, 6)) -> None:
        self.to_leds(order)
        for bcm in order:
            self.press(bcm)
        assert self.step.prompt().phase == "buzzer"


def test_four_seats_map_in_turn_past_a_taken_button_and_two_at_once():
    table = Table()
    step = table.step
    assert step.prompt().text == "Ann (seat 1 of 4): press your button"
    assert step.prompt().waits_for == PRESS and step.prompt().progress == (1, 4)
    table.map_seat(27)  # Ann's button is on Bob's configured pin: found by the press
    assert step.prompt().text == "Bob (seat 2 of 4): press your button"

    table.press(27)
    assert step.prompt().note == "that button (BCM 27) is already Ann's: Bob, press yours"
    assert step.prompt().text == "Bob (seat 2 of 4): press your button"
    table.map_seat(4)

    table.press(23, 6, gap_us=30_000)  # Cy leans on two buttons
    assert step.prompt().note.startswith("two buttons at once (BCM 23 and BCM 6)")
    assert step.prompt().text == "Cy (seat 3 of 4): press your button"
    table.press(23)
    assert step.prompt().note == "" and step.prompt().text == "Cy: press your button again (2 of 3)"
    table.press(6)  # not Cy's button: Cy has one already
    assert step.prompt().note == "that was another button (BCM 6), not yours (BCM 23): Cy, again"
    table.press(23)
    table.press(23)
    table.map_seat(6)

    assert step.prompt().phase == "leds"
    assert step.prompt().text == "Ann: press your button if your light is on"
    assert step._pins == [27, 4, 23, 6]


def test_two_presses_further_apart_than_at_once_are_two_presses():
    table = Table()
    table.press(4, 27, gap_us=AT_ONCE_US + 20_000)
    assert table.step.prompt().note == "that was another button (BCM 27), not yours (BCM 4): Ann, again"
    assert table.step.prompt().text == "Ann: press your button again (2 of 3)"


def test_a_held_button_counts_once_and_its_bounce_is_no_press():
    table = Table()
    table.press(4, bounce=CLEAN)
    assert table.step.prompt().text == "Ann: press your button again (2 of 3)"


def test_bounce_of_a_clean_switch_and_of_a_chattering_one():
    def presses(bounce: tuple[int, ...], n: int = 3) -> list[int]:
        times = []
        for k in range(n):
            for lead in (k * 500_000, k * 500_000 + HOLD_US):  # press, then release
                times += [lead] + [lead + b for b in bounce]
        return times

    clean = bounce_stats(4, presses(CLEAN))
    assert (clean.transitions, clean.extra_edges_max, clean.bounce_us_max, clean.late_edges) == (
        6,
        4,
        1_400,
        0,
    )
    assert not clean.noisy and clean.describe().endswith(": clean")

    chatter = bounce_stats(27, presses(CHATTER))
    assert chatter.bounce_us_max == 15_000 > NOISY_BOUNCE_US and chatter.extra_edges_max == 8
    assert chatter.noisy and "NOISY" in chatter.describe()

    # Bounce that outlasts the lockout: the Debouncer would count a second press.
    late = bounce_stats(6, [0, 1_000, 2_000, LOCKOUT_US + 5_000, LOCKOUT_US + 5_500, 200_000])
    assert late.late_edges == 1 and late.bounce_us_max == 2_000 and late.noisy
    assert "edges after the 20 ms lockout" in late.describe()

    assert bounce_stats(5, []).transitions == 0 and not bounce_stats(5, []).noisy


def test_the_step_measures_each_seats_bounce_and_flags_the_noisy_switch():
    table = Table()
    table.map_seat(4)
    table.map_seat(27, bounce=CHATTER)
    table.map_seat(23)
    table.map_seat(6)
    for bcm in (4, 27, 23, 6):
        table.press(bcm)
    table.step.answer("y")
    result = table.step.result()
    assert result.noisy == (1,)
    assert result.bounce[0].transitions == 2 * (PRESSES_PER_SEAT + 1)  # the LED press counts too
    assert result.bounce[0].bounce_us_max == 1_400
    assert result.bounce[1].bounce_us_max == 15_000
    assert any(p.startswith("Bob's button: BCM 27:") and "NOISY" in p for p in result.problems)
    assert "Bob: button BCM 27 (NOISY, bounce up to 15.0 ms), light confirmed" in table.step.prompt().text


def test_each_led_lights_alone_and_a_wrong_button_is_named_then_the_right_one_confirms():
    table = Table()
    table.to_leds()
    step = table.step
    signals = TableSignals.from_wiring(WIRING, table.factory)
    prompt = step.prompt()
    assert prompt.cues == tuple((0, ("seat", i), 1.0 if i == 0 else 0.0) for i in range(4))
    for _, target, value in prompt.cues:
        signals.apply(target, value)
    assert [led.value for led in signals.seats] == [1.0, 0.0, 0.0, 0.0]

    table.press(27)  # Bob's button
    assert step.prompt().note == "that is Bob's button: is Ann's light on? Ann, press yours"
    assert step.prompt().serial == prompt.serial and step.prompt().phase == "leds"
    table.press(4)
    prompt = step.prompt()
    assert prompt.text == "Bob: press your button if your light is on" and prompt.progress == (2, 4)
    assert prompt.cues == tuple((0, ("seat", i), 1.0 if i == 1 else 0.0) for i in range(4))
    signals.close()


def test_a_light_nobody_sees_is_left_unconfirmed_with_what_to_check():
    table = Table()
    table.to_leds()
    table.wait(PRESS_TIMEOUT_US)
    prompt = table.step.prompt()
    assert prompt.text == "No press from Ann in 20 s: is the light on?" and prompt.choices == (
        "retry",
        "skip",
    )
    table.step.answer("skip")
    assert table.step.prompt().text == "Bob: press your button if your light is on"
    for bcm in (27, 23, 6):
        table.press(bcm)
    table.step.answer("yes")
    result = table.step.result()
    assert result.leds == (False, True, True, True)
    assert "Ann's light not confirmed: check the LED on BCM 17 (header pin 11)" in result.problems[0]


def test_a_pin_that_never_changes_times_out_naming_the_seat_and_retry_works():
    table = Table()
    table.map_seat(4)
    table.wait(PRESS_TIMEOUT_US - 1)
    assert table.step.prompt().waits_for == PRESS
    table.wait(1)
    prompt = table.step.prompt()
    assert prompt.waits_for == ANSWER and prompt.choices == ("retry", "skip")
    assert prompt.text.startswith("No button went low for Bob in 20 s.")
    assert "one to BCM 27 (header pin 13), the other to any GND pin" in prompt.text
    assert "Watching BCM 4, 27, 23, 6." in prompt.text

    table.step.answer("Retry")
    assert table.step.prompt().text == "Bob (seat 2 of 4): press your button"
    table.wait(PRESS_TIMEOUT_US // 2)  # the wait starts again from the retry
    assert table.step.prompt().waits_for == PRESS
    table.map_seat(27)
    assert table.step.prompt().text == "Cy (seat 3 of 4): press your button"


def test_a_skipped_seat_keeps_its_configured_pin_if_free_and_has_none_if_taken():
    table = Table()
    table.map_seat(27)  # Ann on Bob's pin
    table.wait(PRESS_TIMEOUT_US)
    table.step.answer("s")  # Bob: nothing; his configured 27 is Ann's
    table.step.answer("skip")  # Cy, before any timeout: keeps 23
    table.map_seat(6)
    assert table.step.prompt().phase == "leds"
    assert table.step.prompt().text == "Ann: press your button if your light is on"
    table.press(27)
    assert table.step.prompt().text == "Is Bob's light on?" and table.step.prompt().choices == ("yes", "no")
    table.step.answer("n")
    table.press(23)
    table.press(6)
    table.step.answer("yes")
    result = table.step.result()
    assert result.buttons == (27, None, 23, 6) and result.pressed == (True, False, False, True)
    assert "Bob: no button found" in result.problems
    assert "Cy: no press seen; kept BCM 23 from the wiring file" in result.problems
    with pytest.raises(
        ButtonsIncomplete, match=r"^seat 2 \(Bob\) has no button: run the buttons step again$"
    ):
        result.to_wiring()


def test_the_buzzer_plays_its_tune_and_asks_whether_it_was_heard():
    table = Table()
    table.to_buzzer()
    prompt = table.step.prompt()
    assert prompt.text == "Did you hear the test tune?" and prompt.choices == ("yes", "no", "again")
    tones = [(t, hz) for t, target, hz in prompt.cues if target == "buzzer"]
    assert [hz for _, hz in tones] == [v for hz, _ in TUNE for v in (hz, None)]
    assert [t for t, _ in tones] == sorted(t for t, _ in tones)
    assert all(value == 0.0 for _, target, value in prompt.cues if target != "buzzer")  # lights off

    signals = TableSignals.from_wiring(WIRING, table.factory)
    buzzer = next(p for info, p in table.factory.pins.items() if info.name == "GPIO18")
    before = len(buzzer.frequencies)  # the TonalBuzzer's own setup
    start = table.clock.now_us()
    for t, target, value in prompt.cues:  # as a driver plays them
        table.clock.sleep_until(start + t)
        signals.apply(target, value)
    played = [(t - start, hz) for t, hz in buzzer.frequencies[before:]]
    assert played == [(t, None if hz is None else pytest.approx(hz)) for t, hz in tones]
    signals.close()

    table.step.answer("maybe")
    assert table.step.prompt().note == "answer yes or no or again"
    table.step.answer("again")
    assert table.step.prompt().serial == prompt.serial + 1 and table.step.prompt().cues == prompt.cues
    table.step.answer("no")
    assert table.step.done
    result = table.step.result()
    assert result.buzzer is False
    assert "buzzer not heard: check the tonal buzzer on BCM 18 (header pin 12)" in result.problems[-1]


def test_without_a_buzzer_the_step_ends_after_the_lights():
    wiring = Wiring(WIRING.seats, buzzer=None, status=WIRING.status)
    table = Table(wiring)
    table.to_leds()
    for bcm in (4, 27, 23, 6):
        table.press(bcm)
    assert table.step.done and table.step.result().buzzer is None


def test_the_result_is_a_valid_wiring_with_the_buttons_where_they_were_found():
    table = Table()
    order = (27, 4, 6, 23)
    table.to_buzzer(order)
    table.step.answer("yes")
    prompt = table.step.prompt()
    assert prompt.phase == "done" and prompt.waits_for == NOTHING
    assert prompt.cues == (*((0, ("seat", i), 0.0) for i in range(4)), (0, "buzzer", None))
    assert prompt.text.splitlines()[0] == "Ann: button BCM 27 (clean, bounce up to 1.4 ms), light confirmed"
    assert prompt.text.splitlines()[-1] == "buzzer: heard"

    result = table.step.result()
    assert result.buttons == order and result.pressed == (True,) * 4
    assert (
        result.leds == (True,) * 4 and result.buzzer is True and result.problems == () and result.noisy == ()
    )
    wiring = result.to_wiring()
    assert wiring.buttons == order and wiring.leds == WIRING.leds and wiring.names == WIRING.names
    assert parse_wiring(wiring.to_dict(), "profile") == wiring  # what the wizard saves reads back


def test_buttons_wired_to_any_free_pin_are_found():
    candidates = free_pins(WIRING)
    assert 4 in candidates and 5 in candidates and 17 not in candidates and 18 not in candidates
    table = Table(candidates=candidates)
    table.to_buzzer((5, 4, 25, 27))
    table.step.answer("y")
    wiring = table.step.result().to_wiring()
    assert wiring.buttons == (5, 4, 25, 27)
    assert parse_wiring(wiring.to_dict(), "profile") == wiring


def test_a_press_still_being_decided_when_the_seat_is_skipped_is_not_the_next_seats():
    table = Table()
    t = table.clock.now_us() + 1_000
    table.edges(27, t, CLEAN, high=False)
    table.step.answer("skip")  # Ann skipped within AT_ONCE_US of the press
    table.edges(27, t + HOLD_US, CLEAN, high=True)
    table.wait(HOLD_US + AT_ONCE_US)
    assert table.step.prompt().text == "Bob (seat 2 of 4): press your button"


def test_a_button_held_down_is_reported_as_stuck():
    table = Table()
    table.pins[4].edge(False, table.clock.now_us() + 1_000)
    table.wait(6_000_000)
    assert (
        table.step.prompt().note == "BCM 4 has been low for 5 s: a button held down, or a wire touching GND"
    )


def test_the_result_is_only_for_a_finished_step():
    with pytest.raises(RuntimeError):
        ButtonsStep(WIRING).result()


def test_calibrate_buttons_at_the_simulated_table_finds_swapped_wires_and_saves_the_wiring(tmp_path, capsys):
    from referee.cli.main import main
    from referee.live.wiring import default_wiring, parse_wiring
    from referee.vision.profile import load

    out = tmp_path / "table-profile.npz"
    status = main(["calibrate", "buttons", "--sim", "--players", "3", "--out", str(out)])
    text = capsys.readouterr().out
    assert status == 0 and "buzzer: heard" in text and "light confirmed" in text
    profile = load(out)
    wiring = parse_wiring(profile.buttons, "profile")  # type: ignore[arg-type]
    built_in = default_wiring(3).buttons
    assert wiring.buttons == (built_in[2], built_in[1], built_in[0])  # the swapped wires found
