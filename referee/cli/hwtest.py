"""`referee hw-test`: check the table's wiring with your own eyes, ears and fingers.

Lights each LED in turn, plays each tone, then shows every press with its
microsecond timestamp (the edge's own, from the kernel) and the margin to the
previous press. The GPIO buttons are read as `referee run` reads them, from the kernel's
line events (hardware/gpio_buttons.py); the lights and the buzzer are gpiozero's. `--mock`
runs the same code on gpiozero's MockFactory and the double of the GPIO chip
(hardware/gpio_double.py) with a scripted set of presses, so it can be tried (and tested)
on any machine.

USB encoders and keyboards: it lists the input devices it can read (the names and
by-id paths a wiring file's `[usb.NAME] device` takes), shows the wiring's USB seats'
presses like the GPIO ones, and names every other key pressed on any of them (the
`key` a `[[seat]]` takes). With `--mock`, the wiring's USB devices are doubles
(hardware/usb_double.py) pressed by the same script.
"""

from __future__ import annotations

import argparse
import queue
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any, NamedTuple, TextIO

from hardware.board import Board, read_board
from hardware.clock import Clock, MonotonicClock, VirtualClock
from hardware.presses import TROUBLE_WORDS, ButtonTrouble, Debouncer, Edge, Press
from hardware.usb_buttons import DeviceInfo, UsbButtons, UsbDevice, default_system, describe, key_name, scan
from hardware.usb_double import DoubleSystem
from referee.errors import UserError
from referee.live.assembly import Table, TableHooks, TableSettings, assemble
from referee.live.signal_player import Signals
from referee.live.wiring import Wiring, WiringError, describe_wiring, load_wiring

LIGHT_US = 400_000
TONES_HZ = (220, 440, 880, 1175, 1568, 2093)
TONE_US = 250_000


def default_wiring_path() -> str:
    return str(resources.files("referee") / "data" / "wiring.default.toml")


@dataclass
class PressLog:
    """Words for each press: its own time and its margin to the press before it."""

    names: tuple[str, ...]
    start_us: int
    last: Press | None = None

    def line(self, press: Press) -> str:
        text = f"{self.names[press.seat]:<6} pressed at {(press.t - self.start_us) / 1e6:12.6f} s"
        if self.last is not None:
            margin = press.t - self.last.t
            other = self.names[self.last.seat]
            if margin >= 0:
                text += f"   {margin / 1000:9.3f} ms after {other}"
            else:  # its callback ran later, but the edge's own stamp says it came first
                text += f"   {-margin / 1000:9.3f} ms BEFORE {other} (reported later)"
        self.last = press
        return text


def mock_presses(seats: int, start_us: int) -> list[tuple[int, int, int, bool]]:
    """A scripted session: (delivery us, seat, edge us, pressed). Seat 2 beats seat 1 by 3 us
    although its callback runs later; a press bounces; the last seat's button sticks."""
    t = start_us + 500_000
    script = [
        (t, 0, t, True),
        (t + 900, 0, t + 900, False),  # bounce: no second press
        (t + 1_400, 0, t + 1_400, True),
        (t + 90_000, 0, t + 90_000, False),
        (t + 400_040, 1, t + 400_003, True),  # seat 1's callback runs first...
        (t + 400_050, 2 % seats, t + 400_000, True),  # ...seat 2 pressed 3 us earlier
        (t + 480_000, 1, t + 480_000, False),
        (t + 480_000, 2 % seats, t + 480_000, False),
        (t + 900_000, seats - 1, t + 900_000, True),  # held down: stuck after 5 s
        (t + 7_000_000, seats - 1, t + 7_000_000, False),
    ]
    return sorted(script)


class OtherKey(NamedTuple):
    """A key pressed on a USB device that no seat uses: hw-test names it, to be put in a seat."""

    label: str
    code: int
    t: int


def run_hw_test(
    args: argparse.Namespace,
    out: TextIO,
    clock: Clock | None = None,
    factory: Any = None,
    usb_system: Any = None,
    board: Board | None = None,
    gpio_system: Any = None,
) -> int:
    """The wiring's lights, tones and presses, on the table the assembly opens (without a loop:
    the presses are shown, not judged). `--mock`: on mock pins, the doubles pressed by a script."""
    path = args.wiring or default_wiring_path()
    board = board or read_board()
    try:
        wiring = load_wiring(path, board)
    except WiringError as e:
        raise UserError(str(e)) from None

    def say(text: str = "") -> None:
        out.write(text + "\n")
        out.flush()

    if args.mock:
        clock = clock or VirtualClock(1_000_000)
        if usb_system is None and wiring.usb:
            usb_system = _mock_usb(wiring, clock)
    clock = clock or MonotonicClock()
    if usb_system is None and not args.mock:
        usb_system = default_system()
    edges: queue.SimpleQueue[Edge | OtherKey] = queue.SimpleQueue()
    usb, listing = _usb_devices(wiring, usb_system) if usb_system is not None else ((), [])
    settings = TableSettings(wiring, pins="mock" if args.mock else "gpio", usb=usb, grab=False, board=board)
    hooks = TableHooks(
        edges=edges.put,
        others=lambda label, code, t: edges.put(OtherKey(label, code, t)),
        factory=factory,  # a caller's (a test's) pins: left open
        gpio_system=gpio_system,
        usb_system=usb_system,
    )
    table = assemble(settings, clock, hooks=hooks)
    try:
        _header(say, board, table, path)
        _lights_and_tones(say, table, clock)
        _presses(say, table, clock, edges, args, listing)
    except KeyboardInterrupt:
        say("stopped")
    finally:
        table.close()
    return 0


def _header(say: Callable[[str], None], board: Board, table: Table, path: str) -> None:
    """The board, the wiring, and what the wiring should know about them."""
    wiring = table.settings.wiring
    if board.model:
        chip = getattr(table.factory, "chip", None)
        say(f"Board: {board.model}" + (f", GPIO chip {chip}" if isinstance(chip, int) else ""))
    say(f"Wiring from {path}:")
    say(describe_wiring(wiring))
    for line in wiring.boot_glow():
        say(f"note: {line}")


def _lights_and_tones(say: Callable[[str], None], table: Table, clock: Clock) -> None:
    wiring, signals = table.settings.wiring, table.signals
    say("\n1. Lights, one at a time")
    for i, seat in enumerate(wiring.seats):
        say(f"   seat {i} {seat.name}: LED on BCM {seat.led}")
        _flash(signals, ("seat", i), 1.0, 0.0, clock)
    if wiring.status is not None:
        for colour, rgb in (("red", (1, 0, 0)), ("green", (0, 1, 0)), ("blue", (0, 0, 1))):
            say(f"   status LED {colour}")
            _flash(signals, "status", rgb, (0, 0, 0), clock)
    if wiring.buzzer is not None:
        say(f"\n2. Tones on the {wiring.buzzer.kind} buzzer (BCM {wiring.buzzer.pin})")
        for hz in TONES_HZ:
            say(f"   {hz} Hz")
            signals.apply("buzzer", hz)
            clock.sleep_until(clock.now_us() + TONE_US)
        signals.apply("buzzer", None)


def _presses(
    say: Callable[[str], None],
    table: Table,
    clock: Clock,
    edges: queue.SimpleQueue[Any],
    args: argparse.Namespace,
    listing: list[str],
) -> None:
    """Every press with its own stamp, live until Ctrl-C (or `--seconds`), or the mock's script;
    first the GPIO chip read and the USB devices `listing` names."""
    wiring = table.settings.wiring
    chip = table.buttons.chip if table.buttons is not None else None  # type: ignore[union-attr]
    if chip is not None:
        say(f"\nGPIO buttons: /dev/gpiochip{chip.number} ({chip.label}), stamped by the kernel")
    for line in listing:
        say(line)
    say("\n3. Presses (each edge's own timestamp; Ctrl-C to stop)" if not args.mock else "\n3. Presses")
    debouncer = Debouncer(len(wiring.seats))
    report = _reporter(say, PressLog(wiring.names, clock.now_us()), wiring.names, table.usb)
    if args.mock:
        _mock_session(table, clock, edges, debouncer, report)
    else:
        table.start()
        _watch(edges, debouncer, report, clock, args.seconds)


def _mock_session(
    table: Table,
    clock: Clock,
    edges: queue.SimpleQueue[Any],
    debouncer: Debouncer,
    report: Callable[[Any], None],
) -> None:
    """The scripted presses (`mock_presses`) on the doubles, then a key no seat has."""
    wiring, usb = table.settings.wiring, table.usb
    pins = table.seat_pins()
    for delivery, seat, edge_t, pressed in mock_presses(len(wiring.seats), clock.now_us()):
        clock.sleep_until(delivery)
        for trouble in debouncer.check(delivery):
            report(trouble)
        if seat in pins:
            pins[seat].edge(not pressed, edge_t)  # pulled up: a press pulls the pin low
            table.buttons.sweep()  # type: ignore[union-attr]
        else:
            _mock_key(usb, table.usb_system, wiring, seat, edge_t, pressed)
        _drain(edges, debouncer, report)
    if usb is not None:  # a key no seat has, as a new encoder's button would show
        last = clock.now_us() + 500_000
        clock.sleep_until(last)
        table.usb_system.device(usb.info(wiring.usb[0].label).path).press(last, OTHER_MOCK_KEY)
        usb.sweep()
        _drain(edges, debouncer, report)


def _mock_usb(wiring: Wiring, clock: Clock) -> DoubleSystem:
    """The doubles of the wiring's USB devices, each plugged in."""
    system = DoubleSystem(clock)
    for u in wiring.usb_devices():
        path = u.match if u.match.startswith("/dev/input/event") else None
        by_id = u.match if u.match.startswith("/") and path is None else None
        name = u.match if not u.match.startswith("/") else f"{u.label} (mock)"
        system.plug(name, sorted(u.keys | {OTHER_MOCK_KEY}), by_id=by_id, path=path)
    return system


OTHER_MOCK_KEY = 289  # BTN_THUMB: the mock encoder's button that no seat has


def _gpio_seats(wiring: Any) -> list[int]:
    return [i for i, pin in enumerate(wiring.buttons) if pin is not None]


def _mock_key(usb: Any, system: Any, wiring: Any, seat: int, t: int, pressed: bool) -> None:
    """A scripted press of a USB seat's key on its double, read as the reader reads it."""
    s = wiring.seats[seat]
    device = system.device(usb.info(s.usb).path)
    (device.press if pressed else device.release)(t, s.key)
    usb.sweep()


def _usb_devices(wiring: Wiring, system: Any) -> tuple[tuple[UsbDevice, ...], list[str]]:
    """The USB input devices to open: the wiring's (or, if it names none, every one with keys,
    to name the keys pressed); and the lines listing those there are. Not grabbed: Ctrl-C
    may come from one of them."""
    try:
        found = [d for d in scan(system) if d.keys]
    except (ImportError, OSError) as e:
        return (), [f"\nUSB input devices: cannot list them ({type(e).__name__}: {e})"]
    listing = []
    if found or wiring.usb:
        listing.append("\nUSB input devices (a [usb.NAME] table's device = its name, by-id path or phys):")
        for d in found:
            listing.append(
                f"   {describe(d)}" + (f" phys {d.phys}" if d.phys else "") + f", {len(d.keys)} keys"
            )
        if not found:
            listing.append("   none readable (plugged in? on the Pi, is the user in the input group?)")
    if wiring.usb:
        return wiring.usb_devices(), listing
    return tuple(UsbDevice(d.path.rsplit("/", 1)[-1], d.path, frozenset()) for d in found), listing


def _flash(signals: Signals, target: Any, on: Any, off: Any, clock: Clock) -> None:
    signals.apply(target, on)
    clock.sleep_until(clock.now_us() + LIGHT_US)
    signals.apply(target, off)


def _reporter(
    say: Callable[[str], None], log: PressLog, names: tuple[str, ...], usb: UsbButtons | None = None
) -> Callable[[Any], None]:
    def report(item: Press | ButtonTrouble | OtherKey) -> None:
        if type(item) is OtherKey:
            info: DeviceInfo | None = usb.info(item.label) if usb is not None else None
            where = describe(info) if info is not None else f"usb.{item.label}"
            name = key_name(item.code)
            say(f'   key {name} ({item.code}) on {where}: no seat has it (key = "{name}" in a [[seat]])')
        elif type(item) is Press:
            say("   " + log.line(item))
        else:
            say(f"   {names[item.seat]:<6} {TROUBLE_WORDS[item.kind]}")  # type: ignore[union-attr]

    return report


def _drain(edges: queue.SimpleQueue[Any], debouncer: Debouncer, report: Callable[[Any], None]) -> None:
    while True:
        try:
            edge = edges.get_nowait()
        except queue.Empty:
            return
        _take(edge, debouncer, report)


def _take(item: Edge | OtherKey, debouncer: Debouncer, report: Callable[[Any], None]) -> None:
    if type(item) is OtherKey:
        report(item)
        return
    for press in debouncer.feed(item):  # type: ignore[arg-type]
        report(press)


def _watch(
    edges: queue.SimpleQueue[Any],
    debouncer: Debouncer,
    report: Callable[[Any], None],
    clock: Clock,
    seconds: float | None,
) -> None:
    """Live: report presses as they come, until Ctrl-C or `seconds` have passed."""
    end = None if seconds is None else clock.now_us() + round(seconds * 1e6)
    while end is None or clock.now_us() < end:
        try:
            edge = edges.get(timeout=0.2)  # wakes to check for stuck buttons; no busy wait
        except queue.Empty:
            pass
        else:
            _take(edge, debouncer, report)
        for trouble in debouncer.check(clock.now_us()):
            report(trouble)
