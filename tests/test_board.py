"""The Pi 5 as a first-class board: its model, its GPIO chip on every kernel, its PWM pins, and
the quiet-at-boot pins, on doubles (chip lists, gpiozero's MockFactory as a Pi 5)."""

from __future__ import annotations

import argparse
import io
import os
from pathlib import Path

import pytest

from hardware.board import (
    PORTABLE_PWM_PINS,
    QUIET_OUTPUT_PINS,
    Board,
    Chip,
    board_from_model,
    gpio_factory,
    header_chip,
    noisy_outputs,
    read_chips,
    read_model,
)
from hardware.buttons import SnapButtons
from hardware.clock import VirtualClock
from hardware.gpio_double import DoubleGpio
from hardware.pins import VirtualFactory
from hardware.signals import TableSignals
from hardware.usb_double import DoubleSystem
from referee.cli import hwtest
from referee.live import assembly
from referee.live.wiring import WiringError, default_wiring, parse_wiring

PI5 = board_from_model("Raspberry Pi 5 Model B Rev 1.0")
PI4 = board_from_model("Raspberry Pi 4 Model B Rev 1.4")

# `gpiodetect` on a Pi 5 before and after the kernel renumbered its chips (6.6.45), and a Pi 4.
PI5_OLD_KERNEL = [
    Chip(0, "gpio-brcmstb@107d508500", 32),
    Chip(1, "gpio-brcmstb@107d508520", 4),
    Chip(2, "gpio-brcmstb@107d517c00", 17),
    Chip(3, "gpio-brcmstb@107d517c20", 6),
    Chip(4, "pinctrl-rp1", 54),
]
PI5_NEW_KERNEL = [
    Chip(0, "pinctrl-rp1", 54),
    Chip(10, "gpio-brcmstb@107d508500", 32),
    Chip(11, "gpio-brcmstb@107d508520", 4),
    Chip(12, "gpio-brcmstb@107d517c00", 17),
    Chip(13, "gpio-brcmstb@107d517c20", 6),
]
PI4_CHIPS = [Chip(0, "pinctrl-bcm2711", 58), Chip(1, "raspberrypi-exp-gpio", 8)]


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("Raspberry Pi 5 Model B Rev 1.0\x00", "pi5"),
        ("Raspberry Pi 500 Rev 1.0", "pi5"),
        ("Raspberry Pi Compute Module 5 Rev 1.0", "pi5"),
        ("Raspberry Pi 4 Model B Rev 1.4", "pi4"),
        ("Raspberry Pi 400 Rev 1.0", "pi4"),
        ("Raspberry Pi Compute Module 4 Rev 1.0", "pi4"),
        ("Raspberry Pi 3 Model B Plus Rev 1.3", "older"),
        ("Raspberry Pi Zero 2 W Rev 1.0", "older"),
        ("", "unknown"),
        ("Libre Computer AML-S905X-CC", "unknown"),
    ],
)
def test_the_board_family_comes_from_the_device_trees_model(model, family):
    assert board_from_model(model).family == family


@pytest.mark.parametrize(
    ("chips", "number"), [(PI5_OLD_KERNEL, 4), (PI5_NEW_KERNEL, 0), (PI4_CHIPS, 0), ([], None)]
)
def test_the_header_chip_is_found_by_its_label_on_old_and_new_kernels(chips, number):
    chip = header_chip(chips)
    assert (chip.number if chip else None) == number


def test_gpio_factory_opens_lgpio_on_the_header_chip_and_leaves_the_rest_to_gpiozero():
    opened: list[int] = []

    def make(chip: int) -> str:
        opened.append(chip)
        return f"factory on {chip}"

    assert gpio_factory(lambda: PI5_OLD_KERNEL, make) == "factory on 4"
    assert gpio_factory(lambda: PI5_NEW_KERNEL, make) == "factory on 0"
    assert opened == [4, 0]
    assert gpio_factory(lambda: [], make) is None  # not a Pi: gpiozero's own choice (and message)

    def refused(chip: int) -> None:
        raise PermissionError(13, "Permission denied")

    assert gpio_factory(lambda: PI5_NEW_KERNEL, refused) is None


def test_read_chips_skips_a_compatibility_symlink_and_names_a_chip_it_cannot_ask(tmp_path: Path):
    (tmp_path / "gpiochip0").write_bytes(b"")  # a plain file: the ioctl fails, the chip is still listed
    os.symlink("gpiochip0", tmp_path / "gpiochip4")
    (tmp_path / "gpiochipX").write_bytes(b"")
    assert read_chips(str(tmp_path)) == [Chip(0, "", 0)]
    assert read_chips(str(tmp_path / "none")) == []


def test_read_model_strips_the_device_trees_nul(tmp_path: Path):
    model = tmp_path / "model"
    model.write_bytes(b"Raspberry Pi 5 Model B Rev 1.0\x00")
    assert read_model([str(tmp_path / "missing"), str(model)]) == "Raspberry Pi 5 Model B Rev 1.0"
    assert read_model([str(tmp_path / "missing")]) == ""


def test_pwm_channels_differ_but_the_pins_are_the_same_four_on_a_pi_4_and_a_pi_5():
    assert PI4.pwm_channels == {12: 0, 18: 0, 13: 1, 19: 1}  # two pins per channel
    assert PI5.pwm_channels == {12: 0, 13: 1, 18: 2, 19: 3}  # a channel each
    assert PI4.pwm_pins == PI5.pwm_pins == PORTABLE_PWM_PINS == (12, 13, 18, 19)


def test_a_tonal_buzzer_off_the_pwm_pins_is_one_line_naming_the_board():
    data = {
        "seat": [{"name": "Ann", "button": 4, "led": 17}, {"name": "Bob", "button": 27, "led": 22}],
        "buzzer": {"pin": 23, "kind": "tonal"},
    }
    with pytest.raises(WiringError) as e:
        parse_wiring(data, "w.toml", PI5)
    assert str(e.value) == (
        "w.toml: buzzer.pin: a tonal buzzer needs a hardware PWM pin (BCM 12, 13, 18 or 19 on a Pi 5), not 23"
    )
    with pytest.raises(WiringError, match=r"\(BCM 12, 13, 18 or 19\), not 23$"):
        parse_wiring(data, "w.toml")  # no board known: the pins every Pi has


def test_the_camera_cable_of_a_pi_5_is_the_22_to_15_pin_one():
    assert "22-pin to 15-pin" in PI5.camera_cable
    assert "15-pin cable that comes with the camera" in PI4.camera_cable


# Quiet at boot -----------------------------------------------------------------------------------


def test_quiet_output_pins_are_the_pulled_down_ones_less_the_uart():
    assert QUIET_OUTPUT_PINS == (9, 10, 11, 12, 13, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27)
    lines = noisy_outputs([("seat[0].led", 4), ("status.red", 14), ("buzzer.pin", 18)])
    assert lines == [
        "seat[0].led: BCM 4 is pulled up at power-up: an LED there glows till the referee runs",
        "status.red: BCM 14 is UART TX: the serial console drives it at boot, "
        "so an LED there can blink at boot",
    ]


@pytest.mark.parametrize("players", range(2, 9))
def test_the_default_plan_has_every_output_on_a_quiet_pin(players):
    assert default_wiring(players).boot_glow() == []


# The Pi 5 on gpiozero's MockFactory --------------------------------------------------------------


def test_the_table_opens_on_a_mock_pi_5s_header():
    clock = VirtualClock(0)
    factory = VirtualFactory(clock, board=PI5)
    assert factory.board_info.model == "5B"
    wiring = default_wiring(8)
    signals = TableSignals.from_wiring(wiring, factory)
    got: list = []
    buttons = SnapButtons(wiring.buttons, got.append, pin_factory=factory)
    try:
        signals.apply(("seat", 7), 1.0)
        pin = next(p for info, p in factory.pins.items() if info.name == "GPIO26")
        assert pin.state == 1.0
    finally:
        buttons.close()
        signals.close()
        factory.close()


def test_hw_test_on_a_pi_5_names_the_board_and_opens_its_chip(monkeypatch: pytest.MonkeyPatch):
    clock = VirtualClock(1_000_000)
    factory = VirtualFactory(clock, board=PI5)
    factory.chip = 0  # type: ignore[attr-defined]  # what LGPIOFactory(chip=0) reports
    asked: list[bool] = []
    monkeypatch.setattr(assembly, "gpio_factory", lambda: asked.append(True) or factory)
    args = argparse.Namespace(wiring=None, mock=False, seconds=0)
    out = io.StringIO()
    gpio = DoubleGpio()
    assert (
        hwtest.run_hw_test(
            args, out, clock=clock, usb_system=DoubleSystem(clock), board=PI5, gpio_system=gpio
        )
        == 0
    )
    text = out.getvalue()
    assert asked == [True]
    assert text.startswith("Board: Raspberry Pi 5 Model B Rev 1.0, GPIO chip 0\n")
    assert "GPIO buttons: /dev/gpiochip0 (pinctrl-rp1), stamped by the kernel" in text
    assert gpio.requests[0].released  # the buttons' lines go back when it ends


def test_hw_test_notes_an_led_that_glows_at_power_up(tmp_path: Path):
    wiring = tmp_path / "w.toml"
    wiring.write_text(
        '[[seat]]\nname = "Ann"\nbutton = 17\nled = 4\n[[seat]]\nname = "Bob"\nbutton = 27\nled = 22\n'
    )
    clock = VirtualClock(1_000_000)
    args = argparse.Namespace(wiring=str(wiring), mock=True, seconds=None)
    out = io.StringIO()
    board = Board("unknown", "")
    assert hwtest.run_hw_test(args, out, clock=clock, factory=VirtualFactory(clock), board=board) == 0
    assert "note: seat[0].led: BCM 4 is pulled up at power-up" in out.getvalue()
