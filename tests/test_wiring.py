"""The wiring file: the default plan, and the one-line message for every mistake in a file."""

import re
import tomllib
from dataclasses import FrozenInstanceError
from pathlib import Path

import pytest

from referee.live.wiring import (
    BUS_PINS,
    DEFAULT_PATH,
    DEFAULT_WIRING,
    HARDWARE_PWM_PINS,
    PHYSICAL_PIN,
    BuzzerWiring,
    SeatWiring,
    StatusWiring,
    Wiring,
    WiringError,
    default_wiring,
    describe_wiring,
    load_wiring,
    parse_wiring,
)


def seat(name: str = "Ann", button: object = 17, led: object = 4, extra: str = "") -> str:
    """One [[seat]] table; values are TOML source text when given as str."""
    return f'[[seat]]\nname = "{name}"\nbutton = {button}\nled = {led}\n{extra}\n'


TWO = seat("Ann", 17, 4) + seat("Bob", 27, 22)
BUZZER = '[buzzer]\npin = 18\nkind = "tonal"\n'
STATUS = "[status]\nred = 5\ngreen = 6\nblue = 13\n"


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run in tmp_path, so that a file written there is named plainly in messages."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def load_text(text: str | bytes) -> Wiring:
    path = Path("wiring.toml")
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return load_wiring("wiring.toml")


def error_of(text: str | bytes) -> str:
    with pytest.raises(WiringError) as e:
        load_text(text)
    return str(e.value)


def uncommented(text: str, names: tuple[str, ...] | None = None) -> str:
    """The default file with its commented seats uncommented (all, or only those named)."""
    for block in re.findall(r"^# \[\[seat\]\]\n(?:# (?:name|button|led) =.*\n)+", text, re.M):
        name = re.search(r'name = "(\w+)"', block)
        assert name is not None
        if names is None or name[1] in names:
            text = text.replace(block, re.sub(r"^# ", "", block, flags=re.M))
    return text


# The default --------------------------------------------------------------------------------


def test_the_default_file_is_the_default_wiring():
    assert load_wiring(DEFAULT_PATH) == default_wiring(4) == default_wiring() == DEFAULT_WIRING


def test_the_default_file_has_four_seats_a_tonal_buzzer_and_a_status_led():
    w = load_wiring(DEFAULT_PATH)
    assert w.names == ("Ann", "Bob", "Cy", "Dee")
    assert w.buzzer == BuzzerWiring(pin=18, kind="tonal")
    assert w.status == StatusWiring(red=16, green=20, blue=21)


def test_uncommenting_every_extra_seat_gives_the_eight_seat_default():
    text = uncommented(DEFAULT_PATH.read_text(encoding="utf-8"))
    assert parse_wiring(tomllib.loads(text), "wiring.default.toml") == default_wiring(8)


def test_uncommenting_the_first_extra_seats_gives_the_default_for_that_many():
    text = DEFAULT_PATH.read_text(encoding="utf-8")
    assert parse_wiring(tomllib.loads(uncommented(text, ("Eve",))), "x") == default_wiring(5)
    assert parse_wiring(tomllib.loads(uncommented(text, ("Eve", "Fay", "Gus"))), "x") == default_wiring(7)


@pytest.mark.parametrize("players", range(2, 9))
def test_default_wiring_for_2_to_8_players_is_valid(players: int):
    w = default_wiring(players)
    assert parse_wiring(w.to_dict(), "default") == w
    assert w.names == ("Ann", "Bob", "Cy", "Dee", "Eve", "Fay", "Gus", "Hal")[:players]
    assert w.seats == default_wiring(8).seats[:players]
    assert len(w.pins()) == 2 * players + 4  # seats, buzzer, red, green, blue: no pin twice


@pytest.mark.parametrize("players", [0, 1, 9, True])
def test_default_wiring_seats_2_to_8(players: int):
    with pytest.raises(ValueError, match="2 to 8 players"):
        default_wiring(players)


def test_the_four_seat_default_keeps_off_buses_and_leaves_pwm1_free():
    pins = DEFAULT_WIRING.pins()
    assert not pins.keys() & BUS_PINS.keys()
    assert not pins.keys() & {13, 19}  # the second hardware PWM channel stays free
    assert pins[18] == "buzzer.pin"


def test_the_eight_seat_default_puts_only_leds_on_bus_pins():
    w = default_wiring(8)
    assert not set(w.buttons) & BUS_PINS.keys()  # a button could short a pin a bus drives
    assert {pin for pin in w.pins() if pin in BUS_PINS} == {9, 10, 11}  # SPI only: I2C and UART stay free


def test_the_default_leds_are_pulled_down_at_power_on():
    # BCM 0-8 power up pulled high: an LED there would glow faintly while the referee is off.
    w = default_wiring(8)
    assert w.status is not None
    assert all(pin > 8 for pin in (*w.leds, w.status.red, w.status.green, w.status.blue))


def test_the_default_buzzer_is_on_hardware_pwm0():
    assert DEFAULT_WIRING.buzzer == BuzzerWiring(pin=18, kind="tonal")
    assert 18 in HARDWARE_PWM_PINS


# The values -------------------------------------------------------------------------------------


def test_wiring_values_are_frozen():
    with pytest.raises(FrozenInstanceError):
        DEFAULT_WIRING.seats[0].button = 5  # type: ignore[misc]


def test_pins_names_every_pin_with_its_key_in_file_order():
    w = Wiring((SeatWiring("Ann", 17, 4), SeatWiring("Bob", 27, 22)), BuzzerWiring(18, "tonal"), None)
    assert w.pins() == {
        17: "seat[0].button",
        4: "seat[0].led",
        27: "seat[1].button",
        22: "seat[1].led",
        18: "buzzer.pin",
    }
    assert list(w.pins()) == [17, 4, 27, 22, 18]
    assert w.names == ("Ann", "Bob")
    assert w.buttons == (17, 27)
    assert w.leds == (4, 22)


def test_buzzer_and_status_are_optional(in_tmp: Path):
    w = load_text(TWO)
    assert w == Wiring((SeatWiring("Ann", 17, 4), SeatWiring("Bob", 27, 22)), None, None)
    assert w.to_dict() == {
        "seat": [{"name": "Ann", "button": 17, "led": 4}, {"name": "Bob", "button": 27, "led": 22}]
    }


def test_a_full_file_loads(in_tmp: Path):
    w = load_text(TWO + BUZZER + STATUS)
    assert w.buzzer == BuzzerWiring(18, "tonal")
    assert w.status == StatusWiring(red=5, green=6, blue=13)


@pytest.mark.parametrize("pin", [12, 13, 19])
def test_a_tonal_buzzer_takes_any_hardware_pwm_pin(in_tmp: Path, pin: int):
    assert load_text(TWO + f'[buzzer]\npin = {pin}\nkind = "tonal"\n').buzzer == BuzzerWiring(pin, "tonal")


def test_an_active_buzzer_takes_any_gpio(in_tmp: Path):
    assert load_text(TWO + '[buzzer]\npin = 25\nkind = "active"\n').buzzer == BuzzerWiring(25, "active")


def test_bus_pins_are_allowed(in_tmp: Path):
    # I2C, SPI and UART pins are plain GPIOs while their bus is off.
    w = load_text(seat("Ann", 2, 3) + seat("Bob", 14, 15) + seat("Cy", 7, 8) + seat("Dee", 9, 10))
    assert set(w.pins()) == {2, 3, 14, 15, 7, 8, 9, 10}


def test_eight_seats_and_unicode_names(in_tmp: Path):
    text = "".join(seat(f"Zoë{i}", 20 + i, 4 + i) for i in range(8))
    assert len(load_text(text).seats) == 8


def test_a_bom_and_crlf_line_ends_are_fine(in_tmp: Path):
    assert load_text(("\ufeff" + TWO).replace("\n", "\r\n").encode()).names == ("Ann", "Bob")


def test_parse_wiring_is_pure_and_names_its_source():
    data = {"seat": [{"name": "Ann", "button": 17, "led": 4}, {"name": "Bob", "button": 17, "led": 22}]}
    with pytest.raises(WiringError) as e:
        parse_wiring(data, "table.toml")
    assert str(e.value) == "table.toml: seat[1].button: pin 17 is already used by seat[0].button"
    assert data["seat"][1]["button"] == 17


def test_describe_wiring_says_what_goes_where():
    text = describe_wiring(default_wiring(8))
    lines = text.splitlines()
    assert lines[0].split() == ["seat", "0", "Ann:", "button", "BCM", "4", "header", "pin", "7"]
    assert "seat 4 Eve: LED     BCM 11  header pin 23  also SPI SCLK: keep SPI off" in lines
    assert "buzzer (tonal)      BCM 18  header pin 12" in lines
    assert lines[-1] == "ground: any GND, header pins 6, 9, 14, 20, 25, 30, 34, 39"
    assert len(lines) == 2 * 8 + 1 + 3 + 1
    assert all(line == line.rstrip() for line in lines)


def test_describe_wiring_without_buzzer_or_status():
    w = Wiring((SeatWiring("Ann", 17, 4), SeatWiring("Bob", 27, 22)), None, None)
    assert describe_wiring(w).splitlines() == [
        "seat 0 Ann: button  BCM 17  header pin 11",
        "seat 0 Ann: LED     BCM 4   header pin 7",
        "seat 1 Bob: button  BCM 27  header pin 13",
        "seat 1 Bob: LED     BCM 22  header pin 15",
        "ground: any GND, header pins 6, 9, 14, 20, 25, 30, 34, 39",
    ]


def test_the_header_diagram_in_the_docs_matches_the_default_plan():
    doc = (Path(__file__).parent.parent / "docs" / "wiring.md").read_text(encoding="utf-8")
    header: dict[int, int] = {}  # BCM -> header pin, as drawn
    drawn: dict[int, str] = {}  # BCM -> the part marked on it (* or +)
    for row in (line for line in doc.splitlines() if "| o o |" in line):
        left, right = row.split("| o o |")
        if m := re.search(r"BCM (\d+) +(\d+) $", left):
            header[int(m[1])] = int(m[2])
        if m := re.search(r"^ *(.+?) [*+] BCM (\d+) ", left):
            drawn[int(m[2])] = re.sub(r" (\(.*\)|\[PWM\])$", "", m[1])
        if m := re.search(r"^ (\d+) +BCM (\d+) ", right):
            header[int(m[2])] = int(m[1])
        if m := re.search(r"BCM (\d+) [*+] (.+)$", right):
            drawn[int(m[1])] = re.sub(r" (\(.*\)|\[PWM\])$", "", m[2])
    w = default_wiring(8)
    assert w.status is not None
    parts = {s.button: f"{s.name} button" for s in w.seats} | {s.led: f"{s.name} LED" for s in w.seats}
    parts |= {
        18: "buzzer",
        w.status.red: "status red",
        w.status.green: "status green",
        w.status.blue: "status blue",
    }
    assert header == PHYSICAL_PIN
    assert drawn == parts


def test_every_gpio_has_a_header_pin():
    assert sorted(PHYSICAL_PIN) == list(range(28))
    assert len(set(PHYSICAL_PIN.values())) == 28


# Mistakes: each gives exactly one line naming the file and the key ---------------------------

BAD = [
    # Unknown keys, at every level.
    ("unknown-top-key", 'colour = "red"\n' + TWO, "colour: unknown key (known: seat, buzzer, status, usb)"),
    ("unknown-top-keys", "a = 1\nb = 2\n" + TWO, "unknown keys a, b (known: seat, buzzer, status, usb)"),
    (
        "unknown-top-table",
        TWO + "[buzzers]\npin = 18\n",
        "buzzers: unknown key (known: seat, buzzer, status, usb)",
    ),
    (
        "unknown-seat-key",
        seat("Ann", 17, 4) + seat("Bob", 27, 22, extra='colour = "red"'),
        "seat[1].colour: unknown key (known: name, button, led, key, usb)",
    ),
    (
        "unknown-seat-keys",
        seat("Ann", 17, 4, extra="size = 2\nhand = 1") + seat("Bob", 27, 22),
        "seat[0]: unknown keys size, hand (known: name, button, led, key, usb)",
    ),
    (
        "unknown-quoted-seat-key",
        seat("Ann", 17, 4, extra='"left hand" = 1') + seat("Bob", 27, 22),
        'seat[0]."left hand": unknown key (known: name, button, led, key, usb)',
    ),
    (
        "unknown-buzzer-key",
        TWO + BUZZER + "volume = 3\n",
        "buzzer.volume: unknown key (known: pin, kind)",
    ),
    (
        "unknown-status-key",
        TWO + STATUS + "white = 7\n",
        "status.white: unknown key (known: red, green, blue)",
    ),
    # Missing keys.
    ("no-seats", BUZZER, "seat: missing (one [[seat]] per player, 2 to 8)"),
    ("empty-file", "", "seat: missing (one [[seat]] per player, 2 to 8)"),
    (
        "seat-without-led",
        seat("Ann", 17, 4) + '[[seat]]\nname = "Bob"\nbutton = 27\n',
        "seat[1].led: missing (a seat needs name, led, and button or key)",
    ),
    (
        "seat-without-name",
        "[[seat]]\nbutton = 17\nled = 4\n" + seat("Bob", 27, 22),
        "seat[0].name: missing (a seat needs name, led, and button or key)",
    ),
    (
        "buzzer-without-kind",
        TWO + "[buzzer]\npin = 18\n",
        "buzzer.kind: missing (the buzzer needs pin and kind)",
    ),
    (
        "buzzer-without-pin",
        TWO + '[buzzer]\nkind = "active"\n',
        "buzzer.pin: missing (the buzzer needs pin and kind)",
    ),
    (
        "status-without-blue",
        TWO + "[status]\nred = 5\ngreen = 6\n",
        "status.blue: missing (the status LED needs red, green and blue)",
    ),
    # Tables and arrays of the wrong shape.
    (
        "seat-as-one-table",
        '[seat]\nname = "Ann"\nbutton = 17\nled = 4\n',
        "seat: must be an array of tables, one [[seat]] per player, not a table",
    ),
    ("seat-as-number", "seat = 3\n", "seat: must be an array of tables, one [[seat]] per player, not 3"),
    ("seat-array-of-numbers", "seat = [1, 2]\n", "seat[0]: must be a table, not 1"),
    ("buzzer-as-number", "buzzer = 18\n" + TWO, "buzzer: must be a table ([buzzer]), not 18"),
    (
        "buzzer-as-array",
        TWO + '[[buzzer]]\npin = 18\nkind = "tonal"\n',
        "buzzer: must be a table ([buzzer]), not an array",
    ),
    ("status-as-string", 'status = "rgb"\n' + TWO, 'status: must be a table ([status]), not "rgb"'),
    # Pins of the wrong type.
    (
        "pin-as-string",
        seat("Ann", '"17"', 4) + seat("Bob", 27, 22),
        'seat[0].button: a pin is a BCM number (an integer), not "17"',
    ),
    (
        "pin-as-bool",
        seat("Ann", 17, "true") + seat("Bob", 27, 22),
        "seat[0].led: a pin is a BCM number (an integer), not true",
    ),
    (
        "pin-as-float",
        TWO + "[buzzer]\npin = 18.0\nkind = 'tonal'\n",
        "buzzer.pin: a pin is a BCM number (an integer), not 18.0",
    ),
    (
        "pin-as-array",
        TWO + "[status]\nred = [5]\ngreen = 6\nblue = 13\n",
        "status.red: a pin is a BCM number (an integer), not an array",
    ),
    (
        "pin-as-date",
        seat("Ann", 17, "1979-05-27") + seat("Bob", 27, 22),
        "seat[0].led: a pin is a BCM number (an integer), not 1979-05-27",
    ),
    # Pins that are not GPIOs on the header.
    (
        "pin-0",
        seat("Ann", 0, 4) + seat("Bob", 27, 22),
        "seat[0].button: pin 0 is reserved for the HAT ID EEPROM (ID_SD): use BCM 2-27",
    ),
    (
        "pin-1",
        seat("Ann", 17, 1) + seat("Bob", 27, 22),
        "seat[0].led: pin 1 is reserved for the HAT ID EEPROM (ID_SC): use BCM 2-27",
    ),
    (
        "pin-28",
        seat("Ann", 17, 4) + seat("Bob", 28, 22),
        "seat[1].button: pin 28 is not a GPIO: BCM 2-27 (pins are BCM numbers, not header pin numbers)",
    ),
    (
        "pin-40",
        TWO + "[status]\nred = 5\ngreen = 6\nblue = 40\n",
        "status.blue: pin 40 is not a GPIO: BCM 2-27 (pins are BCM numbers, not header pin numbers)",
    ),
    ("pin-minus-1", seat("Ann", 17, -1) + seat("Bob", 27, 22), "seat[0].led: pin -1 is not a GPIO: BCM 2-27"),
    ("pin-41", seat("Ann", 17, 41) + seat("Bob", 27, 22), "seat[0].led: pin 41 is not a GPIO: BCM 2-27"),
    # A pin used twice.
    (
        "button-used-twice",
        TWO + seat("Cy", 17, 24),
        "seat[2].button: pin 17 is already used by seat[0].button",
    ),
    (
        "led-is-another-button",
        seat("Ann", 17, 4) + seat("Bob", 27, 17),
        "seat[1].led: pin 17 is already used by seat[0].button",
    ),
    (
        "button-is-its-own-led",
        seat("Ann", 17, 17) + seat("Bob", 27, 22),
        "seat[0].led: pin 17 is already used by seat[0].button",
    ),
    (
        "buzzer-on-a-seat-pin",
        TWO + '[buzzer]\npin = 22\nkind = "active"\n',
        "buzzer.pin: pin 22 is already used by seat[1].led",
    ),
    (
        "status-on-the-buzzer-pin",
        TWO + BUZZER + "[status]\nred = 5\ngreen = 18\nblue = 13\n",
        "status.green: pin 18 is already used by buzzer.pin",
    ),
    (
        "status-pin-twice",
        TWO + "[status]\nred = 5\ngreen = 6\nblue = 5\n",
        "status.blue: pin 5 is already used by status.red",
    ),
    # The buzzer.
    (
        "tonal-buzzer-without-pwm",
        seat("Ann", 5, 4) + seat("Bob", 27, 22) + '[buzzer]\npin = 17\nkind = "tonal"\n',
        "buzzer.pin: a tonal buzzer needs a hardware PWM pin (BCM 12, 13, 18 or 19), not 17",
    ),
    (
        "buzzer-kind-unknown",
        TWO + '[buzzer]\npin = 18\nkind = "loud"\n',
        'buzzer.kind: must be "tonal" or "active", not "loud"',
    ),
    (
        "buzzer-kind-number",
        TWO + "[buzzer]\npin = 18\nkind = 1\n",
        'buzzer.kind: must be "tonal" or "active", not 1',
    ),
    (
        "buzzer-kind-case",
        TWO + '[buzzer]\npin = 18\nkind = "Tonal"\n',
        'buzzer.kind: must be "tonal" or "active", not "Tonal"',
    ),
    # Names.
    (
        "empty-name",
        seat("", 17, 4) + seat("Bob", 27, 22),
        'seat[0].name: must be the player\'s name (a non-empty string), not ""',
    ),
    (
        "blank-name",
        seat("Ann", 17, 4) + seat("  ", 27, 22),
        'seat[1].name: must be the player\'s name (a non-empty string), not "  "',
    ),
    (
        "name-as-number",
        "[[seat]]\nname = 3\nbutton = 17\nled = 4\n" + seat("Bob", 27, 22),
        "seat[0].name: must be the player's name (a non-empty string), not 3",
    ),
    ("duplicate-name", TWO + seat("Ann", 23, 24), 'seat[2].name: "Ann" is already the name of seat[0]'),
    (
        "duplicate-name-as-heard",
        TWO + seat("bob ", 23, 24),
        'seat[2].name: "bob " is already the name of seat[1]',
    ),
    # How many seats.
    ("one-seat", seat("Ann", 17, 4), "seat: 1 seat, at least 2"),
    ("no-seat-in-array", "seat = []\n", "seat: 0 seats, at least 2"),
    ("nine-seats", "".join(seat(f"P{i}", 2 + i, 12 + i) for i in range(9)), "seat: 9 seats, at most 8"),
    # Not TOML at all.
    (
        "not-toml",
        TWO + "[buzzer\npin = 18\n",
        "wiring.toml:11: not valid TOML: Expected ']' at the end of a table declaration (at column 8)",
    ),
    (
        "toml-redeclared-table",
        TWO + BUZZER + BUZZER,
        "wiring.toml:14: not valid TOML: Cannot declare ('buzzer',) twice (at column 8)",
    ),
    (
        "toml-cut-short",
        TWO + "[buzzer]\npin = ",
        "wiring.toml: not valid TOML: Invalid value (at end of document)",
    ),
    (
        "not-utf8",
        TWO.encode() + b'[[seat]]\nname = "Cy\xe9"\n',
        "wiring.toml:12: not valid TOML: not UTF-8 text",
    ),
]


@pytest.mark.parametrize(("text", "message"), [pytest.param(t, m, id=i) for i, t, m in BAD])
def test_a_mistake_gives_one_line_naming_file_and_key(in_tmp: Path, text: str | bytes, message: str):
    expected = message if message.startswith("wiring.toml") else f"wiring.toml: {message}"
    got = error_of(text)
    assert got == expected
    assert "\n" not in got


def test_bad_case_ids_are_unique():
    ids = [i for i, _, _ in BAD]
    assert len(ids) == len(set(ids))


def test_a_missing_file(in_tmp: Path):
    with pytest.raises(WiringError) as e:
        load_wiring("nowhere.toml")
    assert str(e.value) == "nowhere.toml: cannot read: No such file or directory"


def test_a_directory(in_tmp: Path):
    Path("wiring.toml").mkdir()
    with pytest.raises(WiringError) as e:
        load_wiring("wiring.toml")
    assert str(e.value) == "wiring.toml: cannot read: Is a directory"


def test_the_message_names_the_path_as_given(tmp_path: Path):
    path = tmp_path / "my table.toml"
    path.write_text(seat("Ann", 17, 4), encoding="utf-8")
    with pytest.raises(WiringError) as e:
        load_wiring(path)
    assert str(e.value) == f"{path}: seat: 1 seat, at least 2"
