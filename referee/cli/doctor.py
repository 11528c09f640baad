"""`referee doctor`: check a Pi install end to end, and say each problem with its fix.

Functional core, imperative shell: `gather` reads this machine into `Facts` (plain values:
files, groups, `systemctl`, a few timed fsyncs), and `diagnose` turns facts into `Finding`s
without touching anything, so every verdict is tested on made-up facts (tests/test_doctor.py).
Nothing is changed on the machine: the fsync probe writes one small file in the journal's
folder (or the folder nearest it that exists) and removes it.

Exit status: 0 nothing failed (warnings may be shown), 1 at least one check failed, 2 a
mistake in the command (an unreadable --config, a --config that is not valid).
"""

from __future__ import annotations

import argparse
import contextlib
import grp
import json
import os
import pwd
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

from hardware.board import HEADER_CHIP_LABELS, Chip, board_from_model, header_chip, read_chips, read_model
from referee.errors import UserError

OK, WARN, FAIL = "ok", "warn", "fail"
SERVICE = "referee"
SERVICE_USER = "referee"
CONFIG = "/etc/referee/referee.toml"
SUPPORTED_OS = {"trixie": (3, 13), "bookworm": (3, 11)}  # Raspberry Pi OS bases and their Python
PROFILE_STALE_DAYS = 90
DISK_WARN, DISK_FAIL = 1 << 30, 100 << 20  # free bytes
FSYNC_PROBES = 20
FSYNC_WARN_MS, FSYNC_FAIL_MS = 20.0, 100.0  # the median fsync; one per journaled event


@dataclass(frozen=True)
class Finding:
    """One check's verdict: `level` ok, warn or fail; `fix` what to do (empty when ok)."""

    check: str
    level: str
    what: str
    fix: str = ""


@dataclass(frozen=True)
class Facts:
    """What the machine says, as plain values. None means "could not be found out"."""

    os_release: dict[str, str] = field(default_factory=dict)
    python: tuple[int, int, int] = (0, 0, 0)
    model: str = ""
    chips: tuple[Chip, ...] = ()
    chip_access: bool = False  # this user can open the header's chip
    lgpio: str | None = None  # its version, None: not importable
    gpiod: str | None = None  # libgpiod's bindings: their version, "v1" (the old API), None: not importable
    buttons: str = "gpiod"  # the config's [hardware] buttons: how GPIO buttons are read
    user: str = ""
    user_groups: tuple[str, ...] = ()
    service_user_groups: tuple[str, ...] | None = None  # None: no `referee` user yet
    camera_source: str | None = None  # the config's camera.source
    picamera2: bool = False
    cameras: tuple[str, ...] | None = None  # rpicam-hello --list-cameras' camera lines; None: no tool
    video_devices: tuple[str, ...] = ()
    browser: str | None = None
    service_active: str | None = None  # systemctl is-active; None: no systemctl
    service_enabled: str | None = None
    config_path: str = CONFIG
    config_found: bool = False
    config_error: str | None = None
    profile_path: str | None = None
    profile_age_days: float | None = None
    profile_deck: str | None = None
    profile_steps: tuple[str, ...] = ()
    profile_error: str | None = None
    data_dir: str = ""
    disk_free: int | None = None
    fsync_ms: tuple[float, ...] = ()
    fsync_error: str | None = None
    wiring_source: str = ""
    wiring_usb: bool = False  # seats on USB encoders: the service user needs the input group
    wiring_error: str | None = None
    wiring_notes: tuple[str, ...] = ()
    usb_missing: tuple[str, ...] = ()


# The core: facts -> findings ------------------------------------------------------------------


def diagnose(f: Facts) -> list[Finding]:
    """Every check's verdict on `f`, in the order a builder would fix them."""
    return [
        _os(f),
        _python(f),
        _board(f),
        _chip(f),
        _lgpio(f),
        _gpiod(f),
        _gpio_group(f),
        _wiring(f),
        _camera(f),
        _browser(f),
        _config(f),
        _profile(f),
        _service(f),
        _disk(f),
        _fsync(f),
    ]


def _codename(f: Facts) -> str:
    return f.os_release.get("VERSION_CODENAME", "")


def _os(f: Facts) -> Finding:
    name = f.os_release.get("PRETTY_NAME", "an unknown system")
    if _codename(f) in SUPPORTED_OS:
        return Finding("os", OK, name)
    return Finding(
        "os",
        WARN,
        f"{name}: the guide is for Raspberry Pi OS based on Debian trixie or bookworm",
        "flash Raspberry Pi OS (with the desktop) with Raspberry Pi Imager",
    )


def _python(f: Facts) -> Finding:
    version = ".".join(map(str, f.python))
    if f.python[:2] < (3, 11):
        return Finding(
            "python", FAIL, f"Python {version}: the referee needs 3.11 or later", "use the OS's python3"
        )
    want = SUPPORTED_OS.get(_codename(f))
    if want is not None and f.python[:2] != want:
        return Finding(
            "python",
            WARN,
            f"Python {version}, not the OS's own {want[0]}.{want[1]}: the venv cannot use the OS's "
            "lgpio, OpenCV and picamera2",
            "make the venv with the OS's python3: sudo python3 -m venv --system-site-packages .venv",
        )
    return Finding("python", OK, f"Python {version}")


def _board(f: Facts) -> Finding:
    board = board_from_model(f.model)
    if board.family in ("pi5", "pi4"):
        return Finding("board", OK, f"{board.model}; camera cable: {board.camera_cable}")
    if board.family == "older":
        return Finding("board", WARN, f"{board.model}: the referee is built for a Pi 4 or 5", "")
    return Finding(
        "board",
        FAIL,
        "not a Raspberry Pi (no device-tree model): no GPIO buttons or lights here",
        'on a PC: `referee hw-test --mock`, and [hardware] pins = "mock" in the config',
    )


def _chip(f: Facts) -> Finding:
    chip = header_chip(f.chips)
    if chip is None:
        labels = ", ".join(HEADER_CHIP_LABELS)
        seen = ", ".join(f"gpiochip{c.number} {c.label or '?'}" for c in f.chips) or "none"
        return Finding(
            "gpio chip",
            FAIL,
            f"no GPIO chip of the 40-pin header ({labels}); chips seen: {seen}",
            "on a Pi, update the OS (sudo apt full-upgrade) and reboot",
        )
    if not f.chip_access:
        return Finding(
            "gpio chip",
            FAIL,
            f"/dev/gpiochip{chip.number} ({chip.label}) cannot be opened by {f.user}",
            f"sudo usermod -aG gpio {f.user}, then log in again (or run with sudo)",
        )
    return Finding("gpio chip", OK, f"/dev/gpiochip{chip.number} ({chip.label}, {chip.lines} lines)")


def _lgpio(f: Facts) -> Finding:
    if f.lgpio is None:
        return Finding(
            "lgpio",
            FAIL,
            "lgpio is not importable from this Python: no GPIO pins",
            "sudo apt install python3-lgpio, in a venv made with --system-site-packages",
        )
    return Finding("lgpio", OK, f"lgpio {f.lgpio}")


def _gpiod(f: Facts) -> Finding:
    """The GPIO buttons' reader (hardware/gpio_buttons.py) needs libgpiod v2's bindings."""
    if f.buttons != "gpiod":
        return Finding("gpiod", OK, f'not used: buttons = "{f.buttons}" in the config')
    if f.gpiod is None:
        return Finding(
            "gpiod",
            FAIL,
            "gpiod (libgpiod's bindings) is not importable: GPIO buttons cannot be read",
            '.venv/bin/pip install "gpiod>=2.1" (or buttons = "gpiozero" under [hardware])',
        )
    if f.gpiod == "v1":
        return Finding(
            "gpiod",
            FAIL,
            "gpiod here is libgpiod v1 (bookworm's python3-libgpiod), another API",
            '.venv/bin/pip install "gpiod>=2.1" into the venv: it takes the place of the system one',
        )
    return Finding("gpiod", OK, f"gpiod {f.gpiod}")


def _gpio_group(f: Facts) -> Finding:
    if f.service_user_groups is None:
        return Finding(
            "gpio group",
            WARN,
            f"no `{SERVICE_USER}` user yet (the service's)",
            "sudo .venv/bin/referee install-service --kiosk-user pi --enable",
        )
    wanted = ("gpio", "video", "input") if f.wiring_usb else ("gpio", "video")
    missing = [g for g in wanted if g not in f.service_user_groups]
    if missing:
        return Finding(
            "gpio group",
            FAIL,
            f"the `{SERVICE_USER}` user is not in {', '.join(missing)}: the service cannot open the "
            + ", ".join({"gpio": "pins", "video": "camera", "input": "USB encoders"}[g] for g in missing),
            f"sudo usermod -aG {','.join(missing)} {SERVICE_USER}, then sudo systemctl restart {SERVICE}",
        )
    return Finding("gpio group", OK, f"`{SERVICE_USER}` is in {', '.join(wanted)}")


def _wiring(f: Facts) -> Finding:
    if f.wiring_error is not None:
        return Finding("wiring", FAIL, f.wiring_error, "correct the wiring file (docs/wiring.md)")
    if f.usb_missing:
        return Finding(
            "wiring",
            FAIL,
            "; ".join(f.usb_missing),
            "plug the encoder in, or correct its device = ... (`referee hw-test` lists the devices)",
        )
    if f.wiring_notes:
        return Finding(
            "wiring",
            WARN,
            "; ".join(f.wiring_notes),
            "move those LEDs to pins that are quiet at power-up (docs/wiring.md)",
        )
    return Finding("wiring", OK, f"{f.wiring_source}: every output on a pin quiet at power-up")


def _camera(f: Facts) -> Finding:
    source = f.camera_source
    pi_camera = source in (None, "camera")
    if pi_camera and f.picamera2 and f.cameras:
        return Finding("camera", OK, f"libcamera sees: {f.cameras[0]}")
    if source not in (None, "camera"):
        if source.isdigit() and f"/dev/video{source}" not in f.video_devices:
            return Finding(
                "camera",
                FAIL,
                f"camera.source = {source!r}: no /dev/video{source}",
                "plug the webcam in (`ls /dev/video*` lists them)",
            )
        return Finding("camera", OK, f"camera.source = {source!r}")
    if source is None and f.video_devices and not f.cameras:
        return Finding("camera", OK, f"a webcam: {', '.join(f.video_devices)} (no Pi camera seen)")
    if not f.picamera2:
        return Finding(
            "camera",
            FAIL,
            "picamera2 is not importable: no Pi camera" + ("" if f.video_devices else ", and no webcam"),
            "sudo apt install python3-picamera2 (the venv needs --system-site-packages)",
        )
    board = board_from_model(f.model)
    return Finding(
        "camera",
        FAIL,
        "libcamera sees no camera"
        if f.cameras is not None
        else "rpicam-hello is missing: cannot list cameras",
        f"shut down, check the ribbon ({board.camera_cable}), then `rpicam-hello --list-cameras`",
    )


def _browser(f: Facts) -> Finding:
    if f.browser:
        return Finding("kiosk browser", OK, f.browser)
    package = "chromium-browser" if _codename(f) == "bookworm" else "chromium"
    return Finding(
        "kiosk browser",
        WARN,
        "no Chromium: the screen cannot show the kiosk page",
        f"sudo apt install {package}",
    )


def _config(f: Facts) -> Finding:
    if not f.config_found:
        return Finding(
            "config",
            WARN,
            f"no {f.config_path}",
            "sudo .venv/bin/referee install-service writes one from the example",
        )
    if f.config_error is not None:
        return Finding("config", FAIL, f.config_error, "correct the config (docs/run.md)")
    return Finding("config", OK, f.config_path)


def _profile(f: Facts) -> Finding:
    calibrate = "sudo LG_WD=/tmp .venv/bin/referee calibrate --camera camera --players ... --kiosk"
    if f.profile_error is not None:
        return Finding("table profile", FAIL, f.profile_error, calibrate)
    if f.profile_path is None or f.profile_age_days is None:
        return Finding("table profile", WARN, "the table is not calibrated (no table profile)", calibrate)
    where = f"{f.profile_path}, {f.profile_age_days:.0f} days old"
    if "deck" not in f.profile_steps or not f.profile_deck:
        return Finding("table profile", WARN, f"{where}: the deck step is not done", calibrate)
    if f.profile_age_days > PROFILE_STALE_DAYS:
        return Finding(
            "table profile",
            WARN,
            f"{where} (deck {f.profile_deck})",
            "sudo LG_WD=/tmp .venv/bin/referee calibrate check --camera camera",
        )
    return Finding("table profile", OK, f"{where}, deck {f.profile_deck}")


def _service(f: Facts) -> Finding:
    if not f.service_active:  # no systemctl, or systemd is not running (a container)
        return Finding("service", WARN, "systemd did not answer here: the service is not checked", "")
    if f.service_enabled in ("not-found", None) or f.service_active == "not-found":
        return Finding(
            "service",
            WARN,
            "the referee service is not installed",
            "sudo .venv/bin/referee install-service --kiosk-user pi --enable",
        )
    if f.service_active == "active":
        return Finding("service", OK, f"active, {f.service_enabled}")
    return Finding(
        "service",
        FAIL if f.service_active == "failed" else WARN,
        f"the service is {f.service_active} ({f.service_enabled})",
        f"journalctl -u {SERVICE} -n 50 says why; then sudo systemctl restart {SERVICE}",
    )


def _disk(f: Facts) -> Finding:
    if f.disk_free is None:
        return Finding("disk", WARN, f"cannot measure the free space at {f.data_dir}", "")
    free = f"{f.disk_free / (1 << 30):.1f} GiB free at {f.data_dir}"
    fix = "free some space (sudo apt clean; old journals: `referee games`) or use a bigger card"
    if f.disk_free < DISK_FAIL:
        return Finding("disk", FAIL, free, fix)
    if f.disk_free < DISK_WARN:
        return Finding("disk", WARN, free, fix)
    return Finding("disk", OK, free)


def _fsync(f: Facts) -> Finding:
    if f.fsync_error is not None or not f.fsync_ms:
        return Finding("journal fsync", WARN, f"not measured: {f.fsync_error or 'no probe'}", "")
    median = statistics.median(f.fsync_ms)
    what = f"fsync median {median:.1f} ms, worst {max(f.fsync_ms):.1f} ms over {len(f.fsync_ms)} writes"
    fix = "a faster microSD card (A1 or A2 class) or a USB SSD: each event waits for one fsync"
    if median > FSYNC_FAIL_MS:
        return Finding("journal fsync", FAIL, what, fix)
    if median > FSYNC_WARN_MS:
        return Finding("journal fsync", WARN, what, fix)
    return Finding("journal fsync", OK, what)


def exit_status(findings: Sequence[Finding]) -> int:
    return 1 if any(x.level == FAIL for x in findings) else 0


def report(findings: Sequence[Finding]) -> str:
    """The findings as text: one line each, and its fix under it."""
    marks = {OK: "ok  ", WARN: "WARN", FAIL: "FAIL"}
    lines = []
    for x in findings:
        lines.append(f"{marks[x.level]} {x.check}: {x.what}")
        if x.fix and x.level != OK:
            lines.append(f"     fix: {x.fix}")
    fails = sum(x.level == FAIL for x in findings)
    warns = sum(x.level == WARN for x in findings)
    lines.append(f"{fails} failed, {warns} warnings, {len(findings) - fails - warns} ok")
    return "\n".join(lines)


# The shell: this machine's facts ------------------------------------------------------------


def _run(argv: Sequence[str], timeout: float = 10.0) -> str | None:
    """A command's output, or None when it is not there or does not answer in time."""
    if shutil.which(argv[0]) is None:
        return None
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip()


def read_os_release(path: str = "/etc/os-release") -> dict[str, str]:
    out = {}
    try:
        text = Path(path).read_text()
    except OSError:
        return {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            out[key.strip()] = value.strip().strip('"')
    return out


def _groups_of(user: str) -> tuple[str, ...] | None:
    try:
        entry = pwd.getpwnam(user)
    except KeyError:
        return None
    names = {g.gr_name for g in grp.getgrall() if user in g.gr_mem}
    with contextlib.suppress(KeyError):
        names.add(grp.getgrgid(entry.pw_gid).gr_name)
    return tuple(sorted(names))


def fsync_probe(
    folder: Path, n: int = FSYNC_PROBES, clock: Callable[[], float] = time.perf_counter
) -> list[float]:
    """Time `n` small writes each made durable (write + fsync), as the journal's commits are."""
    times = []
    fd, name = tempfile.mkstemp(prefix=".doctor-fsync-", dir=folder)
    try:
        block = b"\0" * 4096
        for _ in range(n):
            t = clock()
            os.write(fd, block)
            os.fsync(fd)
            times.append((clock() - t) * 1000)
    finally:
        os.close(fd)
        os.unlink(name)
    return times


def _nearest_existing(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def gather(config_path: str = CONFIG, probes: int = FSYNC_PROBES) -> Facts:
    """This machine's facts. Never raises for a missing part: that is what it reports."""
    facts: dict[str, Any] = {"config_path": config_path}
    _gather_board(facts)
    _gather_gpio_libraries(facts)
    facts["user"] = pwd.getpwuid(os.getuid()).pw_name if hasattr(os, "getuid") else ""
    facts["user_groups"] = _groups_of(facts["user"]) or ()
    facts["service_user_groups"] = _groups_of(SERVICE_USER)
    config = _gather_config(facts, config_path)
    _gather_camera(facts)
    facts["browser"] = shutil.which("chromium") or shutil.which("chromium-browser")
    facts["service_active"] = _run(["systemctl", "is-active", SERVICE])
    facts["service_enabled"] = _run(["systemctl", "is-enabled", SERVICE])
    _gather_profile(facts, config)
    _gather_wiring(facts, config)
    _gather_disk(facts, config, probes)
    return Facts(**facts)


def _gather_board(facts: dict[str, Any]) -> None:
    """The OS, Python, the board's model, its GPIO chips, and whether this user may open the header's."""
    facts["os_release"] = read_os_release()
    facts["python"] = tuple(sys.version_info[:3])
    facts["model"] = read_model()
    chips = read_chips()
    facts["chips"] = tuple(chips)
    chip = header_chip(chips)
    facts["chip_access"] = chip is not None and os.access(f"/dev/gpiochip{chip.number}", os.R_OK | os.W_OK)


def _gather_gpio_libraries(facts: dict[str, Any]) -> None:
    """lgpio's and gpiod's versions, None where one is not importable (the import is the check)."""
    try:
        import lgpio  # type: ignore[import-not-found]

        facts["lgpio"] = str(getattr(lgpio, "LGPIO_PY_VERSION", "")) or "installed"
    except Exception:
        facts["lgpio"] = None
    try:
        import gpiod  # type: ignore[import-untyped]

        v2 = hasattr(gpiod, "request_lines")
        facts["gpiod"] = (str(getattr(gpiod, "__version__", "")) or "installed") if v2 else "v1"
    except Exception:
        facts["gpiod"] = None


def _gather_config(facts: dict[str, Any], config_path: str) -> Any:
    """The config, if there is one and it is valid (None otherwise), and what the checks take from it."""
    from referee.live.config import ConfigError, load_config  # numpy and OpenCV: doctor only

    config = None
    facts["config_found"] = Path(config_path).exists()
    if facts["config_found"]:
        try:
            config = load_config(config_path)
        except ConfigError as e:
            facts["config_error"] = " ".join(str(e).split())
    facts["camera_source"] = config.camera if config is not None else None
    if config is not None:
        facts["buttons"] = config.buttons
    return config


def _gather_camera(facts: dict[str, Any]) -> None:
    """picamera2 (importable or not: the import is the check), libcamera's cameras, the webcams."""
    try:
        import picamera2  # type: ignore[import-not-found]  # noqa: F401

        facts["picamera2"] = True
    except Exception:
        facts["picamera2"] = False
    listed = _run(["rpicam-hello", "--list-cameras"]) or _run(["libcamera-hello", "--list-cameras"])
    if listed is not None:
        facts["cameras"] = tuple(
            line.strip() for line in listed.splitlines() if line.strip()[:2].rstrip(":").isdigit()
        )
    facts["video_devices"] = tuple(sorted(str(p) for p in Path("/dev").glob("video*")))


def _gather_disk(facts: dict[str, Any], config: Any, probes: int) -> None:
    """The journal's folder: its free space, and the time of `probes` fsyncs there."""
    from referee.live.config import default_data_dir  # loaded by _gather_config already

    data_dir = config.data_dir if config is not None else Path("/var/lib/referee")
    if not data_dir.exists() and config is None:
        data_dir = default_data_dir()
    facts["data_dir"] = str(data_dir)
    near = _nearest_existing(data_dir)
    with contextlib.suppress(OSError):
        facts["disk_free"] = shutil.disk_usage(near).free
    try:
        facts["fsync_ms"] = tuple(fsync_probe(near, probes))
    except OSError as e:
        facts["fsync_error"] = f"{near}: {e.strerror or e}"


def _gather_profile(facts: dict[str, Any], config: Any) -> None:
    from referee.vision.profile import TableProfileError, default_profile_path, table_part  # numpy

    try:
        path = default_profile_path()
    except TableProfileError as e:  # its folder may not be looked into
        facts["profile_error"] = " ".join(str(e).split())
        return
    if config is not None and config.profile is not None:
        path = config.profile
    try:
        stat = os.stat(path)
    except OSError:
        return
    facts["profile_path"] = str(path)
    facts["profile_age_days"] = max(0.0, (time.time() - stat.st_mtime) / 86400)
    try:
        table = table_part(path) or {}
    except TableProfileError as e:
        facts["profile_error"] = " ".join(str(e).split())
        return
    facts["profile_deck"] = table.get("deck_name")
    facts["profile_steps"] = tuple(table.get("done") or ())


def _gather_wiring(facts: dict[str, Any], config: Any) -> None:
    # The wiring's checks (tomllib) and the USB scan: some 20 ms at start-up, for doctor only.
    from hardware.usb_buttons import UsbError, default_system, find_device, scan
    from referee.live.wiring import default_wiring

    board = board_from_model(facts["model"])
    if config is not None:
        wiring, source = config.wiring, f"{facts['config_path']}'s wiring"
    else:
        wiring, source = default_wiring(4), "the default wiring"
    facts["wiring_source"] = source
    facts["wiring_usb"] = bool(wiring.usb)
    if (
        wiring.buzzer is not None
        and wiring.buzzer.kind == "tonal"
        and wiring.buzzer.pin not in board.pwm_pins
    ):
        facts["wiring_error"] = (
            f"{source}: buzzer.pin: BCM {wiring.buzzer.pin} has no hardware PWM on this board"
        )
    facts["wiring_notes"] = tuple(wiring.boot_glow())
    if wiring.usb:
        try:
            found = scan(default_system())
        except (ImportError, OSError) as e:
            facts["usb_missing"] = (f"cannot list the USB input devices ({type(e).__name__}: {e})",)
            return
        missing = []
        for want in wiring.usb_devices():
            try:
                if find_device(want, found) is None:
                    missing.append(f'usb.{want.label}: no input device "{want.match}" is plugged in')
            except UsbError as e:
                missing.append(str(e))
        facts["usb_missing"] = tuple(missing)


def run_doctor(args: argparse.Namespace, out: TextIO, gather_facts: Callable[..., Facts] = gather) -> int:
    if args.config != CONFIG and not Path(args.config).is_file():
        raise UserError(f"{args.config}: no such config file")  # a typo, not a missing install
    if args.probes < 0:
        raise UserError(f"--probes: a number of fsyncs, 0 or more, not {args.probes}")
    facts = gather_facts(args.config, args.probes)
    findings = diagnose(facts)
    if args.json:
        out.write(
            json.dumps(
                {
                    "status": exit_status(findings),
                    "findings": [asdict(x) for x in findings],
                    "facts": asdict(facts),
                },
                indent=2,
            )
            + "\n"
        )
    else:
        out.write(report(findings) + "\n")
    return exit_status(findings)


def add_commands(sub: Any) -> None:
    p = sub.add_parser(
        "doctor",
        help="check this Pi's install end to end and say how to fix each problem",
        description="Check the OS, Python, the GPIO chip and lgpio, the groups, the wiring, the camera, "
        "the kiosk browser, the config, the table profile, the service, the disk and the card's "
        "fsync time. Exit 0: nothing failed; 1: a check failed; 2: a mistake in the command.",
    )
    p.add_argument(
        "--config", default=CONFIG, metavar="FILE", help=f"the service's config (default {CONFIG})"
    )
    p.add_argument("--json", action="store_true", help="the findings and the facts as JSON, for scripts")
    p.add_argument(
        "--probes", type=int, default=FSYNC_PROBES, metavar="N", help="fsyncs to time (default 20; 0: none)"
    )
    p.set_defaults(run=lambda args, out: run_doctor(args, out))
