"""The buttons step's driver at a real table, through its doubles: SnapButtons and TableSignals
on gpiozero's MockFactory (`VirtualFactory`), a virtual clock, and scripted players who press
on the pins when asked and when they see their own light."""

from __future__ import annotations

import itertools
import queue
from typing import Any

import pytest

from calibration.buttons_live import (
    PinsUnavailable,
    buttons_drift,
    drive_buttons,
    queue_wait,
    run_buttons_at_table,
)
from calibration.steps_buttons import ANSWER, PRESS, PRESS_TIMEOUT_US, ButtonsStep, free_pins
from hardware.clock import VirtualClock
from hardware.pins import VirtualFactory, VirtualPWMPin
from hardware.signals import TableSignals
from referee.live.wiring import default_wiring

REACT_US = 700_000


class Players:
    """The players: each on the pin their button is really wired to (`pins`, seat order), who
    press when their seat is asked or their light is on, answer the questions, and sometimes
    never press at all (`silent`)."""

    def __init__(self, factory: VirtualFactory, clock: VirtualClock, wiring: Any, pins: list[int]) -> None:
        self.factory, self.clock, self.wiring, self.pins = factory, clock, wiring, pins
        self.silent: set[int] = set()
        self.answers: dict[str, str] = {}  # the start of a prompt's text -> the answer given
        self.todo: list[tuple[int, Any]] = []
        self.shown: list[Any] = []
        self.inbox: queue.Queue | None = None
        self.answer_us = REACT_US

    def show(self, prompt: Any) -> None:
        self.shown.append(prompt)
        self.todo = []  # a new prompt: what was about to be done is for the old one
        t = self.clock.now_us() + REACT_US
        if prompt.waits_for == ANSWER:
            said = next((a for start, a in self.answers.items() if prompt.text.startswith(start)), "yes")
            self.todo.append((self.clock.now_us() + self.answer_us, said))
        elif prompt.waits_for == PRESS and not prompt.note:
            self.todo.append((t, prompt))

    def make_wait(self, inbox: queue.Queue) -> Any:
        self.inbox = inbox
        return self.wait

    def wait(self, until: int) -> Any:
        assert self.inbox is not None
        if not self.inbox.empty():
            return self.inbox.get_nowait()
        if not self.todo or self.todo[0][0] > until:
            self.clock.sleep_until(until)
            return None
        t, what = self.todo.pop(0)
        self.clock.sleep_until(t)
        if isinstance(what, str):
            return what
        seat = self._who(what)
        if seat is not None and seat not in self.silent:
            pin = self.factory.pin(self.pins[seat])
            for dt, high in ((0, False), (400, True), (900, False), (80_000, True)):  # one bounce
                pin.edge(high, t + dt)
            self.clock.sleep_until(t + 80_000)
        return self.inbox.get_nowait() if not self.inbox.empty() else None

    def _who(self, prompt: Any) -> int | None:
        if prompt.phase == "leds":  # whoever sees their own light on
            lit = [s for s, seat in enumerate(self.wiring.seats) if self.factory.pin(seat.led).state > 0]
            return lit[0] if lit else None
        return prompt.progress[0] - 1


def _table(pins_swapped: bool = True) -> tuple[Any, VirtualClock, VirtualFactory, Players]:
    wiring = default_wiring(4)
    clock = VirtualClock(1_000_000)
    factory = VirtualFactory(clock)
    pins = list(wiring.buttons)
    if pins_swapped:
        pins[0], pins[2] = pins[2], pins[0]
    return wiring, clock, factory, Players(factory, clock, wiring, pins)


def test_each_seats_button_is_found_on_the_pin_it_is_really_wired_to_and_its_light_confirmed():
    wiring, clock, factory, players = _table()
    step = ButtonsStep(wiring, free_pins(wiring))
    warned: list[str] = []
    result = run_buttons_at_table(
        wiring, step, clock, players.show, players.make_wait, warned.append, pin_factory=factory
    )
    assert result.buttons == tuple(players.pins)  # seat 1's and seat 3's wires swapped, and found so
    assert result.leds == (True,) * 4 and result.buzzer is True
    assert result.problems == () and warned == []
    assert [stats.transitions for stats in result.bounce.values()] == [
        8
    ] * 4  # 3 presses and the light's, each with its release
    assert [p.text for p in players.shown][:2] == [
        f"{wiring.names[0]} (seat 1 of 4): press your button",
        f"{wiring.names[0]}: press your button again (2 of 3)",
    ]
    # The tune was played on the buzzer's own pin, and every light and the buzzer end off.
    buzzer = factory.pin(wiring.buzzer.pin)
    assert any(state.state > 0 for state in buzzer.states[1:])
    assert [factory.pin(seat.led).state for seat in wiring.seats] == [0, 0, 0, 0]
    # Every pin is released: the same pins can be claimed again.
    TableSignals.from_wiring(wiring, factory).close()


def test_a_button_that_never_goes_low_times_out_and_skipping_keeps_its_wiring_pin():
    wiring, clock, factory, players = _table(pins_swapped=False)
    players.silent = {1}
    players.answers = {"No button went low": "skip", "No press from": "skip"}
    step = ButtonsStep(wiring, free_pins(wiring))
    started = clock.now_us()
    result = run_buttons_at_table(wiring, step, clock, players.show, players.make_wait, print, factory)
    texts = [p.text for p in players.shown]
    silent = f"No button went low for {wiring.names[1]} in 20 s."
    assert any(t.startswith(silent) for t in texts)
    assert result.buttons[1] == wiring.buttons[1] and result.pressed[1] is False
    assert any("no press seen; kept BCM" in problem for problem in result.problems)
    assert clock.now_us() - started >= PRESS_TIMEOUT_US
    assert buttons_drift(wiring, result)[0].startswith(f"buttons: no press from {wiring.names[1]}")


class _TouchingGround(VirtualPWMPin):
    """A pin with a wire touching GND: the pull-up cannot lift it."""

    def drive_high(self) -> None:
        pass


def test_a_pin_already_low_at_the_start_is_named():
    wiring, clock, factory, players = _table(pins_swapped=False)
    step = ButtonsStep(wiring, presses=1)
    factory.pin(wiring.buttons[3], pin_class=_TouchingGround)
    warned: list[str] = []
    players.answers = {"No button went low": "skip"}
    run_buttons_at_table(wiring, step, clock, players.show, players.make_wait, warned.append, factory)
    assert warned == [f"BCM {wiring.buttons[3]} is low already: a button held down, or a wire touching GND"]


def test_pins_that_cannot_be_claimed_are_one_line():
    wiring, clock, _, players = _table()

    class NoPins:
        """A pin factory of a machine without GPIO."""

        def __getattr__(self, name: str) -> Any:
            raise OSError("no /dev/gpiochip0")

    with pytest.raises(
        PinsUnavailable, match=r"^buttons: cannot watch the GPIO pins \(OSError: no /dev/gpio"
    ):
        run_buttons_at_table(
            wiring, ButtonsStep(wiring), clock, players.show, players.make_wait, print, NoPins()
        )


def test_ctrl_c_leaves_the_lights_off_and_the_pins_free():
    wiring, clock, factory, players = _table()
    step = ButtonsStep(wiring)

    def interrupted(inbox: queue.Queue) -> Any:
        def wait(until: int) -> Any:
            if any(factory.pin(seat.led).state > 0 for seat in wiring.seats) or clock.now_us() > 3e6:
                raise KeyboardInterrupt
            clock.sleep_until(until)
            return None

        return wait

    step._phase = "leds"  # straight to the lights, so one is on when the person presses Ctrl-C
    with pytest.raises(KeyboardInterrupt):
        run_buttons_at_table(wiring, step, clock, players.show, interrupted, print, factory)
    assert [factory.pin(seat.led).state for seat in wiring.seats] == [0, 0, 0, 0]
    TableSignals.from_wiring(wiring, factory).close()  # released: claimable again


def test_a_check_finds_a_moved_wire():
    wiring, clock, factory, players = _table()  # seat 1's and 3's wires swapped since calibration
    step = ButtonsStep(wiring, free_pins(wiring), presses=1)
    result = run_buttons_at_table(wiring, step, clock, players.show, players.make_wait, print, factory)
    problems = buttons_drift(wiring, result)
    assert problems == [
        f"buttons: {wiring.names[0]}'s button is on BCM {players.pins[0]}, was BCM {wiring.buttons[0]} "
        "(referee calibrate buttons)",
        f"buttons: {wiring.names[2]}'s button is on BCM {players.pins[2]}, was BCM {wiring.buttons[2]} "
        "(referee calibrate buttons)",
    ]


def test_the_table_wait_takes_an_answer_typed_while_no_pin_moves():
    clock = VirtualClock(0)
    inbox: queue.Queue = queue.Queue()
    typed = iter(["", "  skip\n"])
    wait = queue_wait(inbox, clock, lambda: next(typed, None))
    assert wait(0) is None  # nothing in the inbox, nothing typed, the time is up
    assert wait(10**12) == "skip"
    inbox.put("yes")
    assert wait(10**12) == "yes"


def test_the_driver_plays_each_prompts_cues_at_their_offsets():
    wiring, clock, factory, players = _table(pins_swapped=False)
    signals = TableSignals.from_wiring(wiring, factory)
    step = ButtonsStep(wiring)
    step._phase = "buzzer"
    played: list[tuple[int, Any]] = []
    apply = signals.apply
    signals.apply = lambda target, value: (
        played.append((clock.now_us(), target, value)),
        apply(target, value),
    )  # type: ignore[method-assign]
    players.answers = {"Did you hear": "yes"}
    players.answer_us = 2_000_000  # once the tune is over
    players.inbox = queue.Queue()
    drive_buttons(step, signals, clock, players.wait, players.show)
    notes = [(t, value) for t, target, value in played if target == "buzzer" and value]
    assert [hz for _, hz in notes] == [523.0, 659.0, 784.0, 1047.0]
    gaps = [b - a for (a, _), (b, _) in itertools.pairwise(notes)]
    assert gaps == [350_000, 350_000, 350_000]  # each note 200 ms, then 150 ms of silence
    signals.close()
