"""Which Raspberry Pi this is, and what that means for the pins, the PWM and the camera cable.

The facts are plain values (`Board`, `Chip`) chosen by pure functions from what the
system says: the device tree's model string and the kernel's GPIO chips with their labels.
The shell at the bottom reads those (`read_model`, `read_chips`) and builds gpiozero's lgpio
pin factory on the chip that carries the 40-pin header (`gpio_factory`).

Why not leave the chip to gpiozero: its lgpio factory opens gpiochip4 on a Pi 5 model B when
that file exists and gpiochip0 otherwise. The header's chip (`pinctrl-rp1`) was gpiochip4 on
the Pi 5's first kernels and is gpiochip0 since the kernel renumbered it (6.6.45, Aug. 2024:
then gpiochip4 is at most a symlink to gpiochip0); on a Pi 500 or a Compute Module 5 the
guess is gpiochip0 whatever the kernel. The chip's label says which it is on every kernel.
"""

from __future__ import annotations

import fcntl
import os
import struct
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The label the kernel gives the GPIO chip wired to the 40-pin header, per SoC.
HEADER_CHIP_LABELS = {
    "pinctrl-rp1": "pi5",  # Pi 5, Pi 500, CM5: the RP1 south bridge
    "pinctrl-bcm2711": "pi4",  # Pi 4, Pi 400, CM4
    "pinctrl-bcm2835": "older",  # Pi 3 and earlier, Zero 2 W
}

# BCM pins with a hardware PWM channel, and which channel. On a Pi 4 and earlier two pins
# share each of PWM0's two channels (12 and 18; 13 and 19): a tone on one is on the other
# too if both are switched to PWM. The Pi 5's RP1 gives each of the four its own channel.
PWM_CHANNELS = {
    "pi4": {12: 0, 18: 0, 13: 1, 19: 1},
    "older": {12: 0, 18: 0, 13: 1, 19: 1},
    "pi5": {12: 0, 13: 1, 18: 2, 19: 3},
}
# What the wiring check accepts for a tonal buzzer when the board is not known: the pins
# that have hardware PWM on every supported Pi (today the same four on all of them).
PORTABLE_PWM_PINS = tuple(sorted(set.intersection(*(set(c) for c in PWM_CHANNELS.values()))))

# Pins whose pull at power-up is up (BCM 0-8: the BCM2835/BCM2711 datasheets' reset state,
# and BCM 2 and 3 also have 1.8 kOhm pull-ups on the board), or which a boot can drive
# (BCM 14 is the serial console's TX when it is on). An LED there glows, or blinks, from
# power-up until the referee runs; a button there is fine.
PULLED_UP_AT_BOOT = frozenset(range(0, 9))
DRIVEN_AT_BOOT = {14: "UART TX: the serial console drives it at boot", 15: "UART RX"}
QUIET_OUTPUT_PINS = tuple(p for p in range(9, 28) if p not in DRIVEN_AT_BOOT)


@dataclass(frozen=True)
class Board:
    """What the referee needs to know about the Pi it runs on."""

    family: str  # "pi5", "pi4", "older" or "unknown"
    model: str  # the device tree's model string, or "" when there is none (not a Pi)

    @property
    def pwm_channels(self) -> dict[int, int]:
        return PWM_CHANNELS.get(self.family, {p: p for p in PORTABLE_PWM_PINS})

    @property
    def pwm_pins(self) -> tuple[int, ...]:
        return tuple(sorted(self.pwm_channels))

    @property
    def camera_cable(self) -> str:
        """The ribbon cable a Camera Module 3 needs on this board."""
        if self.family == "pi5":
            return (
                "the Pi 5's camera connector is the 22-pin mini one: use a 22-pin to 15-pin "
                "camera cable (the one in the camera's box fits only the older boards)"
            )
        return "the 15-pin cable that comes with the camera"


def board_from_model(model: str) -> Board:
    """The board a device-tree model string names ("Raspberry Pi 5 Model B Rev 1.0")."""
    text = model.strip("\x00 \n")
    if not text.startswith("Raspberry Pi"):
        return Board("unknown", text)
    rest = text.removeprefix("Raspberry Pi").strip()
    # Pi 5, Pi 500, Compute Module 5; Pi 4, Pi 400, Compute Module 4.
    for family, digit in (("pi5", "5"), ("pi4", "4")):
        if rest.startswith(digit) or rest.startswith(f"Compute Module {digit}"):
            return Board(family, text)
    return Board("older", text)


@dataclass(frozen=True)
class Chip:
    """A GPIO chip as the kernel lists it: /dev/gpiochipN, its label and its number of lines."""

    number: int
    label: str
    lines: int


def header_chip(chips: Iterable[Chip]) -> Chip | None:
    """The chip wired to the 40-pin header, by its label (its number changes with the kernel)."""
    for chip in sorted(chips, key=lambda c: c.number):
        if chip.label in HEADER_CHIP_LABELS and chip.lines >= 28:
            return chip
    return None


def noisy_outputs(outputs: Sequence[tuple[str, int]]) -> list[str]:
    """Outputs (key, BCM pin) on pins that are not quiet at power-up: an LED there glows faintly
    (pulled up) or blinks (driven) before the referee runs. One line each, naming the key."""
    out = []
    for key, pin in outputs:
        if pin in PULLED_UP_AT_BOOT:
            out.append(f"{key}: BCM {pin} is pulled up at power-up: an LED there glows till the referee runs")
        elif pin in DRIVEN_AT_BOOT:
            out.append(f"{key}: BCM {pin} is {DRIVEN_AT_BOOT[pin]}, so an LED there can blink at boot")
    return out


# The shell: what this machine says ------------------------------------------------------------

MODEL_PATHS = ("/proc/device-tree/model", "/sys/firmware/devicetree/base/model")
# struct gpiochip_info { char name[32]; char label[32]; __u32 lines; } and its ioctl.
_CHIPINFO = struct.Struct("32s32sI")
_GPIO_GET_CHIPINFO_IOCTL = 0x8000_0000 | (_CHIPINFO.size << 16) | (0xB4 << 8) | 0x01


def read_model(paths: Sequence[str] = MODEL_PATHS) -> str:
    for path in paths:
        try:
            return Path(path).read_bytes().decode("utf-8", "replace").strip("\x00 \n")
        except OSError:
            continue
    return ""


def read_board() -> Board:
    return board_from_model(read_model())


def read_chips(dev: str = "/dev") -> list[Chip]:
    """The GPIO character devices and their labels (a symlink such as a compatibility
    gpiochip4 -> gpiochip0 is skipped: the chip is listed under its own number)."""
    chips = []
    try:
        names = sorted(os.listdir(dev))
    except OSError:
        return []
    for name in names:
        if not name.startswith("gpiochip") or not name[8:].isdigit():
            continue
        path = os.path.join(dev, name)
        if os.path.islink(path):
            continue
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            chips.append(Chip(int(name[8:]), "", 0))  # there but not ours to open: named anyway
            continue
        try:
            raw = fcntl.ioctl(fd, _GPIO_GET_CHIPINFO_IOCTL, bytes(_CHIPINFO.size))
            _, label, lines = _CHIPINFO.unpack(raw)
            chips.append(Chip(int(name[8:]), label.split(b"\0", 1)[0].decode(), lines))
        except OSError:
            chips.append(Chip(int(name[8:]), "", 0))
        finally:
            os.close(fd)
    return chips


def gpio_factory(
    chips: Callable[[], list[Chip]] = read_chips,
    make: Callable[[int], Any] | None = None,
) -> Any:
    """gpiozero's lgpio pin factory on the header's chip, or None to leave the choice to
    gpiozero (not a Pi, no lgpio, or a chip this does not know: gpiozero then tries its own
    way and, failing, says why in its own words, which the callers turn into one line)."""
    chip = header_chip(chips())
    if chip is None:
        return None
    if make is None:
        try:
            # the Pi's own pin library: only on a Pi, only when asked
            from gpiozero.pins.lgpio import LGPIOFactory
        except ImportError:  # lgpio is not installed: gpiozero falls back and says so
            return None
        make = LGPIOFactory
    try:
        return make(chip.number)
    except Exception:  # e.g. no permission on /dev/gpiochipN: gpiozero's own try reports it
        return None
