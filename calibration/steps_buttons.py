"""The wizard's buttons step: which pin is whose button, how each one bounces, the LEDs, the buzzer.

The step is a state machine with no I/O of its own: no pins, no clock, no terminal. A driver
(the terminal wizard, the kiosk page, a test) shows `prompt()`, plays the prompt's cues on the
table's signals, and feeds the step what happens:

- `feed_edge(pin, high, t_us)`: every edge of every candidate pin, with its own (kernel)
  timestamp, in the order lgpio gave it for that pin. Pins are pulled up: a press pulls low.
- `tick(now_us)`: time passes (same clock as the edges: CLOCK_MONOTONIC). Call it right after
  showing a new prompt, since the step times each wait from its first tick, and at least a
  few times a second: it decides presses (after `AT_ONCE_US`) and timeouts (`PRESS_TIMEOUT_US`).
- `answer(text)`: what the user typed or tapped, for the prompt's `choices` ("y", "retry"...).
- `done`, then `result()`: a `ButtonsResult`.

`Prompt.serial` changes whenever the driver is to play the prompt's `cues` (a new seat, a new
phase, "again"); a prompt whose only change is its `note` keeps its serial. Cues are
`(offset_us, target, value)` as `hardware.signals.TableSignals.apply` takes them, the offset
counted from when the prompt is shown. Ctrl-C is the driver's business: the step holds no
resources, so dropping it leaves nothing behind (the driver turns the signals off).

Phases, in order:

1. **buttons**: for each seat, "NAME (seat 2 of 4): press your button", then twice more (the
   presses give the bounce statistics). The first candidate pin to go low that nobody owns
   becomes the seat's button. A pin already mapped: "that button (BCM 27) is already Bob's".
   Two pins low within `AT_ONCE_US`: neither counts, "two buttons at once". No press in 20 s:
   "no button went low for NAME", with what to check, then retry or skip (a skipped seat keeps
   its pin from the wiring file if nobody took it).
2. **leds**: each seat's LED alone on, "NAME: press your button if your light is on". The
   right button confirms; another seat's: "that is Bob's button: is Ann's light on?"; "skip"
   (or no press in 20 s, then skip) leaves it unconfirmed, with what to check.
3. **buzzer** (when the wiring has one): a test tune, "did you hear it?" yes / no / again.

Bounce is measured as the Debouncer will live with it (calibration/bounce.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from hardware.presses import ButtonTrouble, Debouncer, Edge, Press
from hardware.usb_buttons import key_name
from referee.errors import UserError
from referee.live.wiring import GPIO_PINS, PHYSICAL_PIN, SeatWiring, Wiring

from .bounce import BounceStats, bounce_stats

PRESSES_PER_SEAT = 3  # the first maps the button; all three give its bounce statistics
PRESS_TIMEOUT_US = 20_000_000
AT_ONCE_US = 100_000  # two different buttons pressed this close together: nobody's press
DELIVERY_US = 10_000  # an edge reaches the driver at most this long after its stamp
NOTE_GAP_US = 150_000  # silence between the tune's notes, so that an active buzzer beeps each
# The test tune: C5 E5 G5 C6, (Hz, us) each; all within the TonalBuzzer's range (hardware/signals.py).
TUNE: tuple[tuple[float, int], ...] = (
    (523.0, 200_000),
    (659.0, 200_000),
    (784.0, 200_000),
    (1047.0, 400_000),
)

PRESS, ANSWER, NOTHING = "press", "answer", "nothing"

Cue = tuple[int, Any, Any]  # (offset us, target, value), for TableSignals.apply(target, value)


class ButtonsIncomplete(UserError):
    """The step's result cannot make a wiring: a seat has no button."""


@dataclass(frozen=True)
class Prompt:
    """What to show now and what the step waits for."""

    phase: str  # "buttons", "leds", "buzzer" or "done"
    text: str
    waits_for: str  # PRESS (a button; `choices` may still be answered), ANSWER, or NOTHING
    choices: tuple[str, ...] = ()  # answers accepted; the first letter is enough
    progress: tuple[int, int] = (0, 0)  # (this one, of how many) within the phase: "2 of 4"
    note: str = ""  # what just went wrong, shown above `text`
    cues: tuple[Cue, ...] = ()
    serial: int = 0


@dataclass(frozen=True)
class ButtonsResult:
    """What the step found. Seats are numbered from 0, in the wiring's order."""

    wiring: Wiring  # the wiring the step started from
    buttons: tuple[ButtonId | None, ...]  # seat -> its button's pin or USB key (None: none found, none kept)
    pressed: tuple[bool, ...]  # seat -> the pin was found by a press (not kept after a skip)
    bounce: dict[int, BounceStats]  # seat -> its button's bounce, for seats with a button
    leds: tuple[bool, ...]  # seat -> its player saw the light and pressed
    buzzer: bool | None  # the tune was heard; None: no buzzer wired
    problems: tuple[str, ...]  # one line each: what is wrong and what to check

    @property
    def noisy(self) -> tuple[int, ...]:
        """Seats whose switch bounces too much."""
        return tuple(seat for seat, stats in self.bounce.items() if stats.noisy)

    def to_wiring(self) -> Wiring:
        """The wiring with each seat's button where it was found (for the profile and the file)."""
        seats = []
        for i, (seat, pin) in enumerate(zip(self.wiring.seats, self.buttons, strict=True)):
            if pin is None:
                raise ButtonsIncomplete(
                    f"seat {i + 1} ({seat.name}) has no button: run the buttons step again"
                )
            if isinstance(pin, UsbKey):
                seats.append(SeatWiring(seat.name, None, seat.led, pin.code, pin.usb))
            else:
                seats.append(SeatWiring(seat.name, pin, seat.led))
        return Wiring(tuple(seats), self.wiring.buzzer, self.wiring.status, self.wiring.usb)


def free_pins(wiring: Wiring) -> tuple[int, ...]:
    """Every GPIO a button could be on: all but the LEDs', the buzzer's and the status LED's."""
    taken = set(wiring.pins()) - set(wiring.buttons)
    return tuple(pin for pin in GPIO_PINS if pin not in taken)


class UsbKey(NamedTuple):
    """A button on a USB encoder or keyboard: its device (the wiring's usb.LABEL) and key code."""

    usb: str
    code: int

    def __str__(self) -> str:
        return f"{key_name(self.code)} on usb.{self.usb}"


ButtonId = int | UsbKey  # a GPIO button's BCM pin, or a USB key


def seat_buttons(wiring: Wiring) -> tuple[ButtonId | None, ...]:
    """Each seat's button as the wiring has it: its pin, or its USB key."""
    return tuple(
        s.button if s.button is not None else UsbKey(s.usb, s.key) if s.usb and s.key else None
        for s in wiring.seats
    )


def usb_candidates(wiring: Wiring, keys: Mapping[str, Iterable[int]]) -> tuple[UsbKey, ...]:
    """Every key of the wiring's USB devices (`keys`: label -> the codes it can send), seats' first."""
    out = [b for b in seat_buttons(wiring) if isinstance(b, UsbKey)]
    for label, codes in keys.items():
        out += [UsbKey(label, c) for c in sorted(codes) if UsbKey(label, c) not in out]
    return tuple(out)


def button_name(button: ButtonId) -> str:
    """`BCM 4`, or `BTN_TRIGGER on usb.encoder`."""
    return str(button) if isinstance(button, UsbKey) else f"BCM {button}"


def _pin_words(pin: ButtonId) -> str:
    if isinstance(pin, UsbKey):
        return button_name(pin)
    return f"BCM {pin} (header pin {PHYSICAL_PIN[pin]})"


class ButtonsStep:
    """The buttons step for `wiring`. `candidates` are the pins watched for presses: by default
    the wiring's button pins; `free_pins(wiring)` to find buttons wired anywhere."""

    name = "buttons"

    def __init__(
        self, wiring: Wiring, candidates: Sequence[int] | None = None, presses: int = PRESSES_PER_SEAT
    ) -> None:
        self.wiring = wiring
        self.presses = presses  # per seat; `calibrate check` asks one
        given = tuple(candidates) if candidates else seat_buttons(wiring)
        self.candidates: tuple[ButtonId, ...] = tuple(c for c in given if c is not None)
        n = len(wiring.seats)
        self._index = {pin: i for i, pin in enumerate(self.candidates)}
        self._debouncer = Debouncer(len(self.candidates))
        self._edges: dict[ButtonId, list[int]] = {pin: [] for pin in self.candidates}
        self._phase = "buttons"
        self._seat = 0
        self._pins: list[ButtonId | None] = [None] * n
        self._pressed = [False] * n
        self._presses = [0] * n
        self._leds = [False] * n
        self._buzzer: bool | None = None
        self._problems: list[str] = []
        self._pending: tuple[ButtonId, int] | None = None  # (pin, t): a press waiting out AT_ONCE_US
        self._ignore_until = -1
        self._since: int | None = None  # when the current wait began (its first tick)
        self._timed_out = False
        self._note = ""
        self._serial = 0

    # What to show ---------------------------------------------------------------------------

    @property
    def done(self) -> bool:
        return self._phase == "done"

    def prompt(self) -> Prompt:
        names, n, s = self.wiring.names, len(self.wiring.seats), self._seat
        if self._phase == "buttons":
            if self._timed_out:
                text = (
                    f"No button went low for {names[s]} in {PRESS_TIMEOUT_US // 1_000_000} s. "
                    + self._check(s)
                )
                return self._ask("buttons", text, ("retry", "skip"), (s + 1, n))
            k = self._presses[s]
            if k == 0:
                text = f"{names[s]} (seat {s + 1} of {n}): press your button"
            else:
                text = f"{names[s]}: press your button again ({k + 1} of {self.presses})"
            return self._ask("buttons", text, ("skip",), (s + 1, n), waits=PRESS)
        if self._phase == "leds":
            lit = tuple((0, ("seat", i), 1.0 if i == s else 0.0) for i in range(n))
            if self._timed_out:
                text = f"No press from {names[s]} in {PRESS_TIMEOUT_US // 1_000_000} s: is the light on?"
                return self._ask("leds", text, ("retry", "skip"), (s + 1, n), lit)
            if self._pins[s] is None:  # no button to confirm with: the user says
                return self._ask("leds", f"Is {names[s]}'s light on?", ("yes", "no"), (s + 1, n), lit)
            text = f"{names[s]}: press your button if your light is on"
            return self._ask("leds", text, ("skip",), (s + 1, n), lit, waits=PRESS)
        if self._phase == "buzzer":
            text = "Did you hear the test tune?"
            return self._ask("buzzer", text, ("yes", "no", "again"), (1, 1), self._tune())
        off = tuple((0, ("seat", i), 0.0) for i in range(n)) + ((0, "buzzer", None),)
        return Prompt("done", self._summary(), NOTHING, cues=off, serial=self._serial)

    def _ask(
        self,
        phase: str,
        text: str,
        choices: tuple[str, ...],
        progress: tuple[int, int],
        cues: tuple[Cue, ...] = (),
        waits: str = ANSWER,
    ) -> Prompt:
        return Prompt(phase, text, waits, choices, progress, self._note, cues, self._serial)

    def _tune(self) -> tuple[Cue, ...]:
        off = tuple((0, ("seat", i), 0.0) for i in range(len(self.wiring.seats)))
        cues: list[Cue] = []
        t = 0
        for hz, length in TUNE:
            cues += [(t, "buzzer", hz), (t + length, "buzzer", None)]
            t += length + NOTE_GAP_US
        return off + tuple(cues)

    def _check(self, seat: int) -> str:
        """What to check when no button of `seat` went low."""
        configured = seat_buttons(self.wiring)[seat]
        if configured in self._index and self._owner(configured) is None:
            wire = f"one to {_pin_words(configured)}"
        else:
            wire = "one to a free button pin"
        gpio = [str(p) for p in self.candidates if not isinstance(p, UsbKey)]
        usb = sorted({p.usb for p in self.candidates if isinstance(p, UsbKey)})
        watched = ([f"BCM {', '.join(gpio)}"] if gpio else []) + [f"every key of usb.{u}" for u in usb]
        if isinstance(configured, UsbKey):
            return (
                f"Is the encoder plugged in, and the button's wires on its {key_name(configured.code)} "
                f"input? Watching {'; '.join(watched)}."
            )
        return (
            f"Check the button's two wires (COM and NO on its microswitch): {wire}, "
            "the other to any GND pin. "
            f"Watching {'; '.join(watched)}."
        )

    def _summary(self) -> str:
        result = self.result()
        lines = []
        for i, seat in enumerate(self.wiring.seats):
            pin = result.buttons[i]
            button = "no button" if pin is None else f"button {button_name(pin)}"
            if i in result.bounce:
                stats = result.bounce[i]
                quality = "NOISY" if stats.noisy else "clean"
                button += f" ({quality}, bounce up to {stats.bounce_us_max / 1000:.1f} ms)"
            light = "light confirmed" if result.leds[i] else "light NOT confirmed"
            lines.append(f"{seat.name}: {button}, {light}")
        if result.buzzer is not None:
            lines.append("buzzer: heard" if result.buzzer else "buzzer: NOT heard")
        return "\n".join(lines + list(result.problems))

    # What happens ---------------------------------------------------------------------------

    def feed_edge(self, pin: ButtonId, high: bool, t_us: int) -> None:
        index = self._index.get(pin)
        if index is None:
            return
        self._edges[pin].append(t_us)
        if self._pending is not None and t_us > self._pending[1] + AT_ONCE_US:
            self._settle()
        for item in self._debouncer.feed(Edge(index, t_us, not high)):
            self._hear(item)

    def tick(self, now_us: int) -> None:
        if self._pending is not None and now_us >= self._pending[1] + AT_ONCE_US + DELIVERY_US:
            self._settle()
        for trouble in self._debouncer.check(now_us):
            self._hear(trouble)
        if self._since is None:  # a new prompt's wait starts now
            self._since = now_us
        waiting = self._phase in ("buttons", "leds") and not self._timed_out
        if waiting and self.prompt().waits_for == PRESS and now_us - self._since >= PRESS_TIMEOUT_US:
            self._timed_out = True
            self._note = ""

    def answer(self, text: str) -> None:
        prompt = self.prompt()
        said = text.strip().casefold()
        choice = next((c for c in prompt.choices if said and c.startswith(said)), None)
        if choice is None:
            if prompt.choices:
                self._note = f"answer {' or '.join(prompt.choices)}"
            return
        s = self._seat
        if choice == "retry":
            self._next_prompt()
        elif self._phase == "buttons":  # skip
            configured = seat_buttons(self.wiring)[s]
            if self._pins[s] is None and configured is not None and self._owner(configured) is None:
                self._pins[s] = configured
                self._problems.append(
                    f"{self.wiring.names[s]}: no press seen; "
                    f"kept {button_name(configured)} from the wiring file"
                )
            elif self._pins[s] is None:
                self._problems.append(f"{self.wiring.names[s]}: no button found")
            self._next_seat()
        elif self._phase == "leds":
            if choice == "yes":
                self._leds[s] = True
            else:
                self._problems.append(
                    f"{self.wiring.names[s]}'s light not confirmed: check the LED on "
                    f"{_pin_words(self.wiring.seats[s].led)}: "
                    "pin -> 330 ohm resistor -> long leg, short leg to GND"
                )
            self._next_seat()
        elif self._phase == "buzzer":
            if choice == "again":
                self._next_prompt()
                return
            self._buzzer = choice == "yes"
            if not self._buzzer:
                buzzer = self.wiring.buzzer
                assert buzzer is not None
                self._problems.append(
                    f"buzzer not heard: check the {buzzer.kind} buzzer on {_pin_words(buzzer.pin)}: "
                    "+ to the pin, - to GND; in the wiring file a passive piezo is kind = tonal, "
                    "one that beeps on its own kind = active"
                )
            self._phase = "done"
            self._next_prompt()

    def _hear(self, item: Press | ButtonTrouble) -> None:
        pin = self.candidates[item.seat]  # the Debouncer's "seat" is the candidate's index
        if isinstance(item, Press):
            self._press(pin, item.t)
        elif item.kind == "stuck":
            self._note = (
                f"{button_name(pin)} has been {'down' if isinstance(pin, UsbKey) else 'low'} for 5 s: "
                "a button held down, or a wire touching GND"
            )
        elif item.kind == "chattering":
            self._note = (
                f"{button_name(pin)} is chattering (more presses than a finger makes): ignored until quiet"
            )

    def _press(self, pin: ButtonId, t: int) -> None:
        if self._phase == "leds":
            self._confirm(pin)
            return
        if self._phase != "buttons":
            return
        if self._pending is not None:
            first, t0 = self._pending
            if pin != first and abs(t - t0) <= AT_ONCE_US:
                self._pending = None
                self._ignore_until = max(t, t0) + AT_ONCE_US
                self._note = (
                    f"two buttons at once ({button_name(first)} and {button_name(pin)}): "
                    f"{self.wiring.names[self._seat]}, press only your own"
                )
                return
            if pin == first:
                return
        if t < self._ignore_until:
            return
        self._pending = (pin, t)

    def _settle(self) -> None:
        """The pending press had no other button with it: it is the seat's."""
        assert self._pending is not None
        pin, _ = self._pending
        self._pending = None
        names, s = self.wiring.names, self._seat
        owner = self._owner(pin)
        mine = self._pins[s]
        if owner is not None and owner != s:
            self._note = (
                f"that button ({button_name(pin)}) is already {names[owner]}'s: {names[s]}, press yours"
            )
            return
        if owner is None and mine is not None:
            other, yours = button_name(pin), button_name(mine)
            self._note = f"that was another button ({other}), not yours ({yours}): {names[s]}, again"
            return
        if mine is None:
            self._pins[s], self._pressed[s] = pin, True
        self._presses[s] += 1
        if self._presses[s] < self.presses:
            self._next_prompt()
        else:
            self._next_seat()

    def _confirm(self, pin: ButtonId) -> None:
        names, s = self.wiring.names, self._seat
        owner = self._owner(pin)
        if owner == s:
            self._leds[s] = True
            self._next_seat()
        elif owner is not None:
            self._note = f"that is {names[owner]}'s button: is {names[s]}'s light on? {names[s]}, press yours"
        else:
            self._note = f"that button ({button_name(pin)}) is nobody's: is {names[s]}'s light on?"

    def _owner(self, pin: ButtonId) -> int | None:
        return next((seat for seat, p in enumerate(self._pins) if p == pin), None)

    def _next_seat(self) -> None:
        self._seat += 1
        if self._seat == len(self.wiring.seats):
            self._seat = 0
            if self._phase == "buttons":
                self._phase = "leds"
            else:
                self._phase = "buzzer" if self.wiring.buzzer is not None else "done"
        self._next_prompt()

    def _next_prompt(self) -> None:
        self._serial += 1
        self._pending = None  # a press not yet decided belongs to the prompt that is gone
        self._since = None
        self._timed_out = False
        self._note = ""

    # The outcome ----------------------------------------------------------------------------

    def result(self) -> ButtonsResult:
        if not self.done:
            raise RuntimeError("the buttons step is not done")
        bounce = {
            seat: bounce_stats(pin, self._edges.get(pin, ()))
            for seat, pin in enumerate(self._pins)
            if pin is not None
        }
        problems = list(self._problems)
        for seat, stats in bounce.items():
            if stats.noisy:
                problems.append(f"{self.wiring.names[seat]}'s button: {stats.describe()}")
        return ButtonsResult(
            wiring=self.wiring,
            buttons=tuple(self._pins),
            pressed=tuple(self._pressed),
            bounce=bounce,
            leds=tuple(self._leds),
            buzzer=self._buzzer,
            problems=tuple(problems),
        )
