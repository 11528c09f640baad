"""`referee doctor`: each check's verdict on made-up facts, the report, --json and the exit codes,
and one run of the real shell on this machine (not a Pi: it says what is missing, no traceback)."""

from __future__ import annotations

import argparse
import io
import json
import os
from dataclasses import replace
from pathlib import Path

import pytest

from hardware.board import Chip
from referee.cli import doctor
from referee.cli.doctor import (
    FAIL,
    OK,
    WARN,
    Facts,
    diagnose,
    exit_status,
    fsync_probe,
    read_os_release,
    report,
)
from referee.cli.main import main

# A healthy Pi 5 on Raspberry Pi OS trixie, as `gather` would read it.
HEALTHY = Facts(
    os_release={"PRETTY_NAME": "Debian GNU/Linux 13 (trixie)", "VERSION_CODENAME": "trixie"},
    python=(3, 13, 5),
    model="Raspberry Pi 5 Model B Rev 1.0",
    chips=(Chip(0, "pinctrl-rp1", 54), Chip(10, "gpio-brcmstb@107d508500", 32)),
    chip_access=True,
    lgpio="0.2.2.0",
    gpiod="2.5.0",
    user="pi",
    user_groups=("gpio", "pi", "video"),
    service_user_groups=("gpio", "referee", "video"),
    picamera2=True,
    cameras=("0 : imx708 [4608x2592 10-bit RGGB] (/base/axi/pcie@120000/rp1/i2c@88000/imx708@1a)",),
    browser="/usr/bin/chromium",
    service_active="active",
    service_enabled="enabled",
    config_found=True,
    profile_path="/etc/referee/table-profile.npz",
    profile_age_days=12.0,
    profile_deck="bicycle",
    profile_steps=("camera", "seats", "deck", "buttons"),
    data_dir="/var/lib/referee",
    disk_free=20 << 30,
    fsync_ms=(2.0, 3.0, 2.5),
    wiring_source="/etc/referee/referee.toml's wiring",
)


def verdict(facts: Facts, check: str) -> doctor.Finding:
    return next(x for x in diagnose(facts) if x.check == check)


def test_a_healthy_pi_5_passes_every_check():
    findings = diagnose(HEALTHY)
    assert [x.level for x in findings] == [OK] * len(findings), report(findings)
    assert exit_status(findings) == 0
    assert "22-pin to 15-pin" in verdict(HEALTHY, "board").what  # the Pi 5's camera cable


@pytest.mark.parametrize(
    ("change", "check", "level", "fix"),
    [
        ({"os_release": {"PRETTY_NAME": "Ubuntu 24.04"}}, "os", WARN, "Raspberry Pi Imager"),
        ({"python": (3, 10, 2)}, "python", FAIL, "python3"),
        ({"python": (3, 12, 1)}, "python", WARN, "--system-site-packages"),
        ({"model": ""}, "board", FAIL, "--mock"),
        ({"model": "Raspberry Pi 3 Model B Plus Rev 1.3"}, "board", WARN, ""),
        ({"chips": (Chip(0, "gpio-brcmstb@107d508500", 32),)}, "gpio chip", FAIL, "full-upgrade"),
        ({"chip_access": False}, "gpio chip", FAIL, "usermod -aG gpio pi"),
        ({"lgpio": None}, "lgpio", FAIL, "python3-lgpio"),
        ({"gpiod": None}, "gpiod", FAIL, "gpiod>=2.1"),
        ({"gpiod": "v1"}, "gpiod", FAIL, "gpiod>=2.1"),
        ({"service_user_groups": None}, "gpio group", WARN, "install-service"),
        ({"service_user_groups": ("referee",)}, "gpio group", FAIL, "usermod -aG gpio,video referee"),
        ({"wiring_usb": True}, "gpio group", FAIL, "usermod -aG input referee"),
        ({"wiring_error": "w.toml: seat[0].led: pin 40 is not a GPIO"}, "wiring", FAIL, "wiring file"),
        (
            {"usb_missing": ('usb.encoder: no input device "DragonRise" is plugged in',)},
            "wiring",
            FAIL,
            "plug the encoder in",
        ),
        ({"wiring_notes": ("seat[0].led: BCM 4 is pulled up",)}, "wiring", WARN, "quiet at power-up"),
        ({"cameras": ()}, "camera", FAIL, "22-pin to 15-pin"),
        ({"picamera2": False}, "camera", FAIL, "python3-picamera2"),
        ({"camera_source": "0"}, "camera", FAIL, "webcam"),
        ({"browser": None}, "kiosk browser", WARN, "apt install chromium"),
        (
            {"browser": None, "os_release": {"VERSION_CODENAME": "bookworm"}, "python": (3, 11, 2)},
            "kiosk browser",
            WARN,
            "apt install chromium-browser",
        ),
        ({"config_found": False}, "config", WARN, "install-service"),
        ({"config_error": "referee.toml: table.players: missing"}, "config", FAIL, "docs/run.md"),
        ({"profile_path": None, "profile_age_days": None}, "table profile", WARN, "calibrate --camera"),
        ({"profile_age_days": 200.0}, "table profile", WARN, "calibrate check"),
        ({"profile_steps": ("camera", "seats")}, "table profile", WARN, "calibrate"),
        ({"profile_error": "p.npz: not a table profile"}, "table profile", FAIL, "calibrate"),
        ({"service_active": "failed"}, "service", FAIL, "journalctl -u referee"),
        ({"service_active": "inactive"}, "service", WARN, "systemctl restart"),
        ({"service_active": "inactive", "service_enabled": "not-found"}, "service", WARN, "install-service"),
        ({"service_active": None, "service_enabled": None}, "service", WARN, ""),
        ({"disk_free": 500 << 20}, "disk", WARN, "apt clean"),
        ({"disk_free": 50 << 20}, "disk", FAIL, "apt clean"),
        ({"fsync_ms": (30.0, 40.0, 35.0)}, "journal fsync", WARN, "A1 or A2"),
        ({"fsync_ms": (150.0, 300.0, 120.0)}, "journal fsync", FAIL, "A1 or A2"),
        ({"fsync_ms": (), "fsync_error": "/var/lib: Read-only file system"}, "journal fsync", WARN, ""),
    ],
)
def test_each_problem_is_named_with_its_fix(change, check, level, fix):
    found = verdict(replace(HEALTHY, **change), check)
    assert found.level == level, found
    assert fix in found.fix
    others = [x for x in diagnose(replace(HEALTHY, **change)) if x.check != check]
    assert exit_status([found, *others]) == (
        1 if level == FAIL or any(x.level == FAIL for x in others) else 0
    )


def test_the_report_puts_each_fix_under_its_problem_and_counts():
    text = report(diagnose(replace(HEALTHY, lgpio=None, browser=None)))
    lines = text.splitlines()
    i = next(i for i, line in enumerate(lines) if line.startswith("FAIL lgpio:"))
    assert lines[i + 1].strip().startswith("fix: sudo apt install python3-lgpio")
    assert lines[-1] == "1 failed, 1 warnings, 13 ok"


def run(argv: list[str], facts: Facts) -> tuple[int, str]:
    args = doctor_args(argv)
    out = io.StringIO()
    return doctor.run_doctor(args, out, lambda config, probes: facts), out.getvalue()


def doctor_args(argv: list[str]) -> argparse.Namespace:
    from referee.cli.main import build_parser

    return build_parser().parse_args(["doctor", *argv])


def test_json_has_the_status_each_finding_and_the_facts():
    status, text = run(["--json"], replace(HEALTHY, lgpio=None))
    data = json.loads(text)
    assert status == data["status"] == 1
    assert {"check": "lgpio", "level": "fail"}.items() <= data["findings"][4].items()
    assert data["facts"]["model"] == "Raspberry Pi 5 Model B Rev 1.0"


def test_a_missing_config_named_on_the_command_line_is_exit_2_in_one_line(tmp_path, capsys):
    assert main(["doctor", "--config", str(tmp_path / "nope.toml")]) == 2
    err = capsys.readouterr().err
    assert err == f"{tmp_path / 'nope.toml'}: no such config file\n"
    assert main(["doctor", "--probes", "-1"]) == 2


def test_os_release_is_read_as_its_key_value_lines(tmp_path: Path):
    path = tmp_path / "os-release"
    path.write_text('PRETTY_NAME="Debian GNU/Linux 13 (trixie)"\nVERSION_CODENAME=trixie\n# comment\n')
    assert read_os_release(str(path)) == {
        "PRETTY_NAME": "Debian GNU/Linux 13 (trixie)",
        "VERSION_CODENAME": "trixie",
    }
    assert read_os_release(str(tmp_path / "none")) == {}


def test_the_fsync_probe_times_each_write_on_its_clock_and_leaves_nothing(tmp_path: Path):
    ticks = iter(range(100))
    times = fsync_probe(tmp_path, 3, clock=lambda: next(ticks) / 1000)  # 1 ms a tick
    assert times == [1.0, 1.0, 1.0]
    assert os.listdir(tmp_path) == []


def test_on_this_machine_it_runs_and_says_what_is_missing_without_a_traceback(tmp_path, capsys):
    config = tmp_path / "referee.toml"
    config.write_text(
        f'[table]\nplayers = ["Ann", "Bob"]\n[hardware]\npins = "mock"\n[service]\ndata_dir = "{tmp_path}"\n'
    )
    status = main(["doctor", "--config", str(config), "--probes", "2", "--json"])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    data = json.loads(captured.out)
    assert status == data["status"] and status in (0, 1)
    checks = [x["check"] for x in data["findings"]]
    assert checks == [
        "os", "python", "board", "gpio chip", "lgpio", "gpiod", "gpio group", "wiring", "camera",
        "kiosk browser", "config", "table profile", "service", "disk", "journal fsync",
    ]  # fmt: skip
    by = {x["check"]: x for x in data["findings"]}
    assert by["config"]["level"] == OK
    assert by["journal fsync"]["level"] in (OK, WARN, FAIL) and "2 writes" in by["journal fsync"]["what"]
    if not Path("/proc/device-tree/model").exists():  # not a Pi: said plainly, with the way round it
        assert by["board"]["level"] == FAIL and "--mock" in by["board"]["fix"]


def test_gpiod_is_not_asked_for_when_the_buttons_are_read_through_gpiozero():
    findings = {x.check: x for x in diagnose(replace(HEALTHY, gpiod=None, buttons="gpiozero"))}
    assert findings["gpiod"].level == OK and "gpiozero" in findings["gpiod"].what
    findings = {x.check: x for x in diagnose(replace(HEALTHY, gpiod=None))}
    assert findings["gpiod"].level == FAIL
