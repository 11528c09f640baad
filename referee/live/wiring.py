"""The table's wiring: which BCM pin each seat's button and LED, the buzzer and the status LED use,
and, for seats whose button is on a USB encoder or keyboard, which device and key.

A TOML file (format and pictures: docs/wiring.md; the default:
referee/data/wiring.default.toml) is read with `tomllib` and checked in full before any pin is touched.
Every mistake becomes a `WiringError` whose message is the one line the user sees:
`FILE: KEY: what is wrong`, e.g. `wiring.toml: seat[2].button: pin 17 is already used
by seat[0].button`. Seats are numbered from 0, in file order, as everywhere in the referee.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any

from hardware.board import PORTABLE_PWM_PINS, Board, noisy_outputs
from hardware.usb_buttons import USB_RESOLUTION_US, UsbDevice, key_code, key_name
from referee.rules.engine import MAX_PLAYERS, MIN_PLAYERS
from referee.tomlfile import Bad, join_key, known, need_table, read_toml, required, show

DEFAULT_PATH = Path(__file__).parents[1] / "data" / "wiring.default.toml"

GPIO_PINS = range(2, 28)  # BCM GPIOs on the 40-pin header (0 and 1 are the HAT EEPROM's)
EEPROM_PINS = {0: "ID_SD", 1: "ID_SC"}
HARDWARE_PWM_PINS = PORTABLE_PWM_PINS  # 12, 13, 18, 19: hardware PWM on a Pi 4 and a Pi 5 alike
# Allowed (these buses are off unless enabled), but the 4-seat default leaves them free.
BUS_PINS = {
    2: "I2C SDA",
    3: "I2C SCL",
    7: "SPI CE1",
    8: "SPI CE0",
    9: "SPI MISO",
    10: "SPI MOSI",
    11: "SPI SCLK",
    14: "UART TX",
    15: "UART RX",
}
# BCM number -> physical pin on the 40-pin header.
PHYSICAL_PIN = {
    2: 3, 3: 5, 4: 7, 14: 8, 15: 10, 17: 11, 18: 12, 27: 13, 22: 15, 23: 16, 24: 18, 10: 19, 9: 21,
    25: 22, 11: 23, 8: 24, 7: 26, 0: 27, 1: 28, 5: 29, 6: 31, 12: 32, 13: 33, 19: 35, 16: 36, 26: 37,
    20: 38, 21: 40,
}  # fmt: skip
GROUND_PINS = (6, 9, 14, 20, 25, 30, 34, 39)
BUZZER_KINDS = ("tonal", "active")

_SEAT_KEYS = ("name", "button", "led", "key", "usb")
_BUZZER_KEYS = ("pin", "kind")
_STATUS_KEYS = ("red", "green", "blue")
_USB_KEYS = ("device", "resolution_ms")
_TOP_KEYS = ("seat", "buzzer", "status", "usb")
_BOARD_NAMES = {"pi5": "Pi 5", "pi4": "Pi 4", "older": "Pi 3 or earlier"}
MAX_RESOLUTION_MS = 100  # a polling interval past this is no snap button


class WiringError(ValueError):
    """A wiring file that cannot be used; str() is the one-line message."""


@dataclass(frozen=True)
class SeatWiring:
    name: str
    button: int | None  # BCM pin: arcade button to ground (internal pull-up); None: a USB key
    led: int  # BCM pin: seat LED through a resistor to ground
    key: int | None = None  # a USB button: its key code (BTN_TRIGGER is 288)...
    usb: str | None = None  # ...on this device (the label of its [usb.LABEL] table)


@dataclass(frozen=True)
class UsbWiring:
    """A USB encoder or keyboard: `device` is its name, a /dev/input path or its phys."""

    label: str
    device: str
    resolution_us: int = USB_RESOLUTION_US  # its polling interval: presses are stamped this coarsely


@dataclass(frozen=True)
class BuzzerWiring:
    pin: int
    kind: str  # "tonal" (passive piezo, PWM tones) or "active" (beeps on its own)


@dataclass(frozen=True)
class StatusWiring:
    """A common-cathode RGB LED: one pin per colour."""

    red: int
    green: int
    blue: int


@dataclass(frozen=True)
class Wiring:
    seats: tuple[SeatWiring, ...]  # clockwise from the seat dealt the first card
    buzzer: BuzzerWiring | None = None
    status: StatusWiring | None = None
    usb: tuple[UsbWiring, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.seats)

    @property
    def buttons(self) -> tuple[int | None, ...]:
        """Each seat's button pin (None for a seat whose button is a USB key)."""
        return tuple(s.button for s in self.seats)

    @property
    def resolutions_us(self) -> tuple[int, ...]:
        """How coarsely each seat's presses are stamped: 0 for a GPIO edge (to the us), the
        device's polling interval for a USB key."""
        by_label = {u.label: u.resolution_us for u in self.usb}
        return tuple(0 if s.usb is None else by_label[s.usb] for s in self.seats)

    def usb_devices(self) -> tuple[UsbDevice, ...]:
        """The USB devices, each with the key codes its seats use (for `UsbButtons`)."""
        return tuple(
            UsbDevice(
                u.label,
                u.device,
                frozenset(s.key for s in self.seats if s.usb == u.label and s.key),
                u.resolution_us,
            )
            for u in self.usb
        )

    def usb_seats(self) -> dict[str, dict[int, int]]:
        """Device label -> key code -> seat."""
        out: dict[str, dict[int, int]] = {u.label: {} for u in self.usb}
        for i, s in enumerate(self.seats):
            if s.usb is not None and s.key is not None:
                out[s.usb][s.key] = i
        return out

    @property
    def leds(self) -> tuple[int, ...]:
        return tuple(s.led for s in self.seats)

    def outputs(self) -> list[tuple[str, int]]:
        """Every output (LEDs, buzzer, status LED) as (key, pin), in file order."""
        return [(key, pin) for key, pin in _uses(self) if not key.endswith(".button")]

    def boot_glow(self) -> list[str]:
        """One line per output on a pin that is not quiet at power-up (hardware/board.py)."""
        return noisy_outputs(self.outputs())

    def pins(self) -> dict[int, str]:
        """Every pin used, in file order, with the key that uses it (`seat[0].button`)."""
        return {pin: key for key, pin in _uses(self)}

    def to_dict(self) -> dict[str, Any]:
        """The wiring as its TOML file decodes: parse_wiring(w.to_dict(), ...) == w."""
        out: dict[str, Any] = {"seat": [_seat_dict(s) for s in self.seats]}
        if self.usb:
            out["usb"] = {
                u.label: {"device": u.device, "resolution_ms": u.resolution_us / 1000} for u in self.usb
            }
        if self.buzzer is not None:
            out["buzzer"] = {"pin": self.buzzer.pin, "kind": self.buzzer.kind}
        if self.status is not None:
            out["status"] = {"red": self.status.red, "green": self.status.green, "blue": self.status.blue}
        return out


def _seat_dict(s: SeatWiring) -> dict[str, Any]:
    if s.button is not None:
        return {"name": s.name, "button": s.button, "led": s.led}
    return {"name": s.name, "key": s.key, "usb": s.usb, "led": s.led}


def _uses(w: Wiring) -> list[tuple[str, int]]:
    uses = []
    for i, seat in enumerate(w.seats):
        if seat.button is not None:
            uses.append((f"seat[{i}].button", seat.button))
        uses.append((f"seat[{i}].led", seat.led))
    if w.buzzer is not None:
        uses.append(("buzzer.pin", w.buzzer.pin))
    if w.status is not None:
        uses += [(f"status.{c}", getattr(w.status, c)) for c in _STATUS_KEYS]
    return uses


# The default plan, for up to 8 seats. Buttons take BCM 4-6 (pulled up at power-on, as a
# button wants) and LEDs take pins pulled down at power-on, so that they stay dark until the
# referee runs. Seats 0-3, the buzzer and the status LED stay off the I2C/SPI/UART pins and
# leave BCM 13 and 19 (the second hardware PWM channel) free; seats 4-7 need every other pin,
# so their LEDs go on SPI pins (an LED at worst flickers if SPI is switched on; a button
# could short a pin the bus drives).
_PLAN = (
    SeatWiring("Ann", button=4, led=17),  # header pins 7, 11 (GND 9 between)
    SeatWiring("Bob", button=27, led=22),  # 13, 15
    SeatWiring("Cy", button=23, led=24),  # 16, 18
    SeatWiring("Dee", button=6, led=12),  # 31, 32 (12 shares PWM0 with the buzzer on Pi 4 and earlier)
    SeatWiring("Eve", button=25, led=11),  # 22, 23 (SPI SCLK)
    SeatWiring("Fay", button=5, led=9),  # 29, 21 (SPI MISO)
    SeatWiring("Gus", button=13, led=10),  # 33, 19 (SPI MOSI)
    SeatWiring("Hal", button=19, led=26),  # 35, 37
)
_DEFAULT_BUZZER = BuzzerWiring(pin=18, kind="tonal")  # header pin 12, hardware PWM0
_DEFAULT_STATUS = StatusWiring(red=16, green=20, blue=21)  # header pins 36, 38, 40


def default_wiring(players: int = 4) -> Wiring:
    """The first `players` seats of the 8-seat plan, with the buzzer and the status LED.

    The same as referee/data/wiring.default.toml with its commented seats uncommented in order.
    """
    if isinstance(players, bool) or not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise ValueError(f"the default wiring seats {MIN_PLAYERS} to {MAX_PLAYERS} players, not {players!r}")
    return Wiring(_PLAN[:players], _DEFAULT_BUZZER, _DEFAULT_STATUS)


DEFAULT_WIRING = default_wiring(4)


# Reading and checking -----------------------------------------------------------------------


def load_wiring(path: str | PathLike[str], board: Board | None = None) -> Wiring:
    """Read and check a wiring file; WiringError (one line naming the file) on any problem.
    `board`: the Pi it is for (its hardware PWM pins); None: any supported Pi."""
    return parse_wiring(read_toml(path, WiringError), str(path), board)


def parse_wiring(data: Mapping[str, Any], source: str, board: Board | None = None) -> Wiring:
    """Check a decoded wiring file in full (pure); WiringError names `source` and the key."""
    try:
        return _parse(data, board)
    except Bad as bad:
        where = f"{source}: {bad.key}" if bad.key else source
        raise WiringError(f"{where}: {bad.what}") from None


def _parse(data: Mapping[str, Any], board: Board | None = None) -> Wiring:
    need_table(data, "", "a table")
    known(data, "", _TOP_KEYS)
    if "seat" not in data:
        raise Bad("seat", f"missing (one [[seat]] per player, {MIN_PLAYERS} to {MAX_PLAYERS})")
    tables = data["seat"]
    if not isinstance(tables, list | tuple):
        raise Bad("seat", f"must be an array of tables, one [[seat]] per player, not {show(tables)}")
    n = len(tables)
    if n < MIN_PLAYERS:
        raise Bad("seat", f"{n} seat{'' if n == 1 else 's'}, at least {MIN_PLAYERS}")
    if n > MAX_PLAYERS:
        raise Bad("seat", f"{n} seats, at most {MAX_PLAYERS}")
    usb = _usb(data["usb"]) if "usb" in data else ()
    seats = tuple(_seat(t, f"seat[{i}]", usb) for i, t in enumerate(tables))
    buzzer = _buzzer(data["buzzer"], board) if "buzzer" in data else None
    status = _status(data["status"]) if "status" in data else None
    wiring = Wiring(seats, buzzer, status, usb)

    # Names are told apart as a player hears them announced: "Ann" and "ann " are one name.
    named: dict[str, int] = {}
    for i, seat in enumerate(seats):
        said = seat.name.strip().casefold()
        if said in named:
            raise Bad(f"seat[{i}].name", f"{show(seat.name)} is already the name of seat[{named[said]}]")
        named[said] = i
    used: dict[int, str] = {}
    for key, pin in _uses(wiring):
        if pin in used:
            raise Bad(key, f"pin {pin} is already used by {used[pin]}")
        used[pin] = key
    keys: dict[tuple[str, int], int] = {}
    for i, seat in enumerate(seats):
        if seat.usb is not None and seat.key is not None:
            if (seat.usb, seat.key) in keys:
                raise Bad(
                    f"seat[{i}].key",
                    f"{key_name(seat.key)} on usb.{seat.usb} is already seat[{keys[seat.usb, seat.key]}]'s",
                )
            keys[seat.usb, seat.key] = i
    return wiring


def _seat(table: Any, key: str, usb: tuple[UsbWiring, ...] = ()) -> SeatWiring:
    need_table(table, key, "a table")
    known(table, key, _SEAT_KEYS)
    required(table, key, ("name", "led"), "a seat needs name, led, and button or key")
    name = table["name"]
    if not isinstance(name, str) or not name.strip():
        raise Bad(f"{key}.name", f"must be the player's name (a non-empty string), not {show(name)}")
    led = _pin(table["led"], f"{key}.led")
    if "button" in table:
        if "key" in table or "usb" in table:
            extra = "key" if "key" in table else "usb"
            raise Bad(f"{key}.{extra}", "a seat's button is a GPIO pin (button) or a USB key (key), not both")
        return SeatWiring(name, _pin(table["button"], f"{key}.button"), led)
    if "key" not in table:
        raise Bad(f"{key}.button", "missing (a seat needs name, led, and button or key)")
    try:
        code = key_code(table["key"])
    except ValueError as e:
        raise Bad(f"{key}.key", str(e)) from None
    labels = [u.label for u in usb]
    if "usb" in table:
        label = table["usb"]
        if not isinstance(label, str) or label not in labels:
            known_text = ", ".join(labels) if labels else "none: add a [usb.NAME] table"
            raise Bad(
                f"{key}.usb", f"{show(label)} is no [usb.NAME] table in this file (known: {known_text})"
            )
    elif len(labels) == 1:
        label = labels[0]
    elif not labels:
        raise Bad(f"{key}.key", "a USB key needs its device: add a [usb.NAME] table with device = ...")
    else:
        raise Bad(f"{key}.usb", f"missing: which device's key? (one of {', '.join(labels)})")
    return SeatWiring(name, None, led, code, label)


def _usb(tables: Any) -> tuple[UsbWiring, ...]:
    need_table(tables, "usb", "tables, one [usb.NAME] per USB encoder or keyboard")
    out = []
    for label, table in tables.items():
        key = join_key("usb", label)
        need_table(table, key, "a table ([usb.NAME] with device = ...)")
        known(table, key, _USB_KEYS)
        required(table, key, ("device",), "its name, a /dev/input/by-id/ path or its phys")
        device = table["device"]
        if not isinstance(device, str) or not device.strip():
            raise Bad(f"{key}.device", f"must be the device's name, path or phys, not {show(device)}")
        resolution = table.get("resolution_ms", USB_RESOLUTION_US / 1000)
        if (
            isinstance(resolution, bool)
            or not isinstance(resolution, int | float)
            or not 0 < resolution <= MAX_RESOLUTION_MS
        ):
            raise Bad(
                f"{key}.resolution_ms",
                f"must be its polling interval in ms, more than 0 and at most {MAX_RESOLUTION_MS} "
                f"(USB: 1 to 8), not {show(resolution)}",
            )
        out.append(UsbWiring(label, device, max(1, round(resolution * 1000))))
    return tuple(out)


def _buzzer(table: Any, board: Board | None = None) -> BuzzerWiring:
    need_table(table, "buzzer", "a table ([buzzer])")
    known(table, "buzzer", _BUZZER_KEYS)
    required(table, "buzzer", _BUZZER_KEYS, "the buzzer needs pin and kind")
    pin = _pin(table["pin"], "buzzer.pin")
    kind = table["kind"]
    if not isinstance(kind, str) or kind not in BUZZER_KINDS:
        raise Bad("buzzer.kind", f'must be "tonal" or "active", not {show(kind)}')
    pwm = board.pwm_pins if board is not None else HARDWARE_PWM_PINS
    if kind == "tonal" and pin not in pwm:
        # Software PWM on any other pin gives wobbly tones.
        name = _BOARD_NAMES.get(board.family) if board is not None else None
        on = f" on a {name}" if name else ""
        pins = ", ".join(map(str, pwm[:-1])) + f" or {pwm[-1]}"
        raise Bad("buzzer.pin", f"a tonal buzzer needs a hardware PWM pin (BCM {pins}{on}), not {pin}")
    return BuzzerWiring(pin, kind)


def _status(table: Any) -> StatusWiring:
    need_table(table, "status", "a table ([status])")
    known(table, "status", _STATUS_KEYS)
    required(table, "status", _STATUS_KEYS, "the status LED needs red, green and blue")
    red, green, blue = (_pin(table[c], f"status.{c}") for c in _STATUS_KEYS)
    return StatusWiring(red, green, blue)


def _pin(value: Any, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise Bad(key, f"a pin is a BCM number (an integer), not {show(value)}")
    if value in EEPROM_PINS:
        raise Bad(key, f"pin {value} is reserved for the HAT ID EEPROM ({EEPROM_PINS[value]}): use BCM 2-27")
    if value not in GPIO_PINS:
        hint = " (pins are BCM numbers, not header pin numbers)" if 28 <= value <= 40 else ""
        raise Bad(key, f"pin {value} is not a GPIO: BCM 2-27{hint}")
    return value


# Describing -------------------------------------------------------------------------------


def _where(pin: int) -> tuple[str, str, str]:
    bus = BUS_PINS.get(pin)
    return (
        f"BCM {pin}",
        f"header pin {PHYSICAL_PIN[pin]}",
        f"also {bus}: keep {bus.split()[0]} off" if bus else "",
    )


def describe_wiring(w: Wiring) -> str:
    """A small text table of what goes where (BCM number and header pin), for `referee hw-test`."""
    rows: list[tuple[str, str, str, str]] = []
    devices = {u.label: u for u in w.usb}
    for i, seat in enumerate(w.seats):
        if seat.button is not None:
            rows.append((f"seat {i} {seat.name}: button", *_where(seat.button)))
        else:
            u = devices[seat.usb]  # type: ignore[index]
            rows.append(
                (
                    f"seat {i} {seat.name}: button",
                    f"USB {key_name(seat.key or 0)}",
                    f"usb.{u.label}",
                    f"stamped to {u.resolution_us / 1000:g} ms",
                )
            )
        rows.append((f"seat {i} {seat.name}: LED", *_where(seat.led)))
    if w.buzzer is not None:
        rows.append((f"buzzer ({w.buzzer.kind})", *_where(w.buzzer.pin)))
    if w.status is not None:
        for colour in _STATUS_KEYS:
            rows.append((f"status LED {colour}", *_where(getattr(w.status, colour))))
    widths = [max(len(r[c]) for r in rows) for c in range(3)]
    lines = [
        f"{part:<{widths[0]}}  {bcm:<{widths[1]}}  {pin:<{widths[2]}}  {note}".rstrip()
        for part, bcm, pin, note in rows
    ]
    lines.append("ground: any GND, header pins " + ", ".join(map(str, GROUND_PINS)))
    for u in w.usb:
        every = f"{u.resolution_us / 1000:g} ms"
        lines.append(f'usb.{u.label}: the input device "{u.device}", polled every {every}')
    return "\n".join(lines)
