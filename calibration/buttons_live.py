"""The buttons step at a real table: the pins watched, the LEDs lit, the buzzer played.

`ButtonsStep` is pure; this is its shell. Every candidate pin gets a `SnapButton`
(gpiozero's pin factory: lgpio on the Pi, `VirtualFactory` in tests), so each edge
arrives with the kernel's own stamp, exactly as the referee will hear a snap. Edges and
the person's answers meet in one queue (`inbox`), read by one loop:

- a prompt with a new `serial` is shown and its cues are played on `TableSignals` at
  their offsets (a seat's LED on, the test tune);
- edges go to `feed_edge` with the candidate's pin, answers to `answer`;
- `tick` runs at least every `TICK_US`, so a press is decided and a silent pin times out
  ("No button went low for Ann in 20 s", then retry or skip) however quiet the table is.

How the loop waits is the one thing a test changes (`Wait`): at the table it is the
queue's own timeout on the monotonic clock, with a line typed at the terminal read in
between; in tests a scripted person acts on the virtual clock, with no real waiting.
"""

from __future__ import annotations

import queue
from collections.abc import Callable, Sequence
from typing import Any

from hardware.buttons import SnapButtons
from hardware.clock import Clock
from hardware.presses import Edge
from hardware.signals import TableSignals
from hardware.usb_buttons import UsbButtons, UsbError, default_system, find_device, scan
from referee.errors import UserError
from referee.live.wiring import Wiring

from .steps_buttons import ButtonsResult, ButtonsStep, UsbKey, button_name, seat_buttons

TICK_US = 100_000  # the step decides presses 100 ms after them, and times out waits
Item = Edge | str  # what the inbox holds: an edge of a candidate pin, or an answer
Wait = Callable[[int], "Item | None"]  # waits until this time (us) at most for the next item


class PinsUnavailable(UserError):
    """The candidate pins cannot be claimed (not a Pi, or another program holds them)."""


def queue_wait(inbox: queue.Queue[Item], clock: Clock, typed: Callable[[], str | None]) -> Wait:
    """The table's wait: the inbox's next item before `until`, or a line typed meanwhile."""

    def wait(until: int) -> Item | None:
        while True:
            left = until - clock.now_us()
            try:
                return inbox.get(timeout=max(min(left, TICK_US), 0) / 1e6)
            except queue.Empty:
                line = typed()
                if line and line.strip():
                    return line.strip()
                if clock.now_us() >= until:
                    return None

    return wait


def held_down(buttons: SnapButtons, pins: Sequence[int]) -> list[int]:
    """The candidate pins already low at the start: a button held, or a wire touching GND."""
    return [pin for pin, button in zip(pins, buttons.buttons, strict=True) if button.is_active]


def usb_keys(wiring: Wiring, system: Any = None) -> dict[str, frozenset[int]]:
    """Each of the wiring's USB devices' keys (what the step watches there): label -> codes.
    A device not plugged in: one line naming it."""
    found = scan(system or default_system())
    out = {}
    for want in wiring.usb_devices():
        try:
            info = find_device(want, found)
        except UsbError as e:
            raise PinsUnavailable(f"buttons: {e}") from None
        if info is None:
            raise PinsUnavailable(
                f'buttons: usb.{want.label}: no input device "{want.match}" is plugged in '
                "(`referee hw-test` lists those there are)"
            )
        out[want.label] = info.keys
    return out


def _open_usb(
    wiring: Wiring, candidates: Sequence[Any], sink: Callable[[Edge], Any], clock: Clock, system: Any
) -> Any:
    """The USB candidates' devices, each key's edges numbered as its candidate (as SnapButtons
    numbers pins). Not grabbed: the answers may be typed on one of them."""
    seats: dict[str, dict[int, int]] = {}
    for i, c in enumerate(candidates):
        if isinstance(c, UsbKey):
            seats.setdefault(c.usb, {})[c.code] = i
    devices = [d for d in wiring.usb_devices() if d.label in seats]
    if not devices:
        return None
    try:
        usb = UsbButtons(devices, seats, sink, clock=clock, system=system or default_system(), grab=False)
    except UsbError as e:
        raise PinsUnavailable(f"buttons: {e}") from None
    usb.start()
    return usb


def drive_buttons(
    step: ButtonsStep,
    signals: TableSignals,
    clock: Clock,
    wait: Wait,
    show: Callable[[Any], None],
) -> ButtonsResult:
    """Run the step to its end; the signals are left off. Edges' `seat` is the index of the
    pin in `step.candidates` (how `SnapButtons` numbers them)."""
    serial: int | None = None
    shown = None
    cues: list[tuple[int, Any, Any]] = []
    try:
        while True:
            prompt = step.prompt()
            now = clock.now_us()
            if prompt.serial != serial:
                serial = prompt.serial
                cues = sorted(((now + off, target, value) for off, target, value in prompt.cues), key=_at)
                step.tick(now)  # the prompt's wait starts when it is shown
            if prompt != shown:
                show(prompt)
                shown = prompt
            while cues and cues[0][0] <= now:
                _, target, value = cues.pop(0)
                signals.apply(target, value)
            if step.done:
                return step.result()
            until = min(now + TICK_US, cues[0][0]) if cues else now + TICK_US
            item = wait(until)
            if isinstance(item, Edge):
                step.feed_edge(step.candidates[item.seat], not item.pressed, item.t)
            elif isinstance(item, str):
                step.answer(item)
            step.tick(clock.now_us())
    finally:
        for i in range(len(signals.seats)):
            signals.apply(("seat", i), 0.0)
        signals.apply("buzzer", None)


def run_buttons_at_table(
    wiring: Wiring,
    step: ButtonsStep,
    clock: Clock,
    show: Callable[[Any], None],
    make_wait: Callable[[queue.Queue[Item]], Wait],
    warn: Callable[[str], None],
    pin_factory: Any = None,
    usb_system: Any = None,
) -> ButtonsResult:
    """The buttons step on this machine's pins: claims the candidates and the signals, runs,
    and releases them all, also after Ctrl-C. `make_wait` waits on the inbox the pins fill
    (`queue_wait` at the table)."""
    inbox: queue.Queue[Item] = queue.Queue()
    # A USB key is numbered as its candidate too: None leaves its place among the pins.
    pins = [c if isinstance(c, int) else None for c in step.candidates]
    try:
        buttons = SnapButtons(pins, inbox.put, pin_factory=pin_factory)
    except Exception as e:  # gpiozero's errors differ by pin library: all mean no pins here
        raise PinsUnavailable(
            f"buttons: cannot watch the GPIO pins ({type(e).__name__}: {e}); on a Pi, is python3-lgpio "
            "installed and are you in the gpio group? Elsewhere: --sim"
        ) from None
    usb = None
    try:
        usb = _open_usb(wiring, step.candidates, inbox.put, clock, usb_system)
        try:
            signals = TableSignals.from_wiring(wiring, pin_factory)
        except Exception as e:
            raise PinsUnavailable(
                f"buttons: cannot drive the LEDs and buzzer ({type(e).__name__}: {e})"
            ) from None
        try:
            for pin in held_down(buttons, [p for p in pins if p is not None]):
                warn(f"BCM {pin} is low already: a button held down, or a wire touching GND")
            return drive_buttons(step, signals, clock, make_wait(inbox), show)
        finally:
            signals.close()
    finally:
        if usb is not None:
            usb.close()
        buttons.close()


def buttons_drift(saved: Wiring, found: ButtonsResult) -> list[str]:
    """`calibrate check`: what differs from the calibrated buttons (a wire moved, a seat's
    button silent, a light or the buzzer not confirmed, a switch grown noisy)."""
    problems = []
    names = saved.names
    for seat, (was, now) in enumerate(zip(seat_buttons(saved), found.buttons, strict=True)):
        if not found.pressed[seat]:
            problems.append(f"buttons: no press from {names[seat]} (referee calibrate buttons)")
        elif now != was:
            problems.append(
                f"buttons: {names[seat]}'s button is on {button_name(now)}, was "  # type: ignore[arg-type]
                f"{button_name(was) if was is not None else 'none'} (referee calibrate buttons)"
            )
    for seat, lit in enumerate(found.leds):
        if not lit:
            problems.append(f"buttons: {names[seat]}'s light not confirmed (referee calibrate buttons)")
    if found.buzzer is False:
        problems.append("buttons: the buzzer was not heard (referee calibrate buttons)")
    for seat in found.noisy:
        problems.append(f"buttons: {names[seat]}'s switch bounces too much: {found.bounce[seat].describe()}")
    return problems


def _at(cue: tuple[int, Any, Any]) -> int:
    return cue[0]
