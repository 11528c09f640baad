"""The service's one config file (TOML): the table, the camera, the pins, the journal, the kiosk.

`referee run --config FILE` reads it with `load_config`, which checks it in full
before anything is opened. Every mistake is one line, `FILE: KEY: what is wrong`
(or `FILE:LINE: ...` for TOML that does not parse), and `referee run` exits 2 on it.
The format, with an example: docs/run.md.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any, NamedTuple

from referee.errors import UserError
from referee.live.wiring import Wiring, WiringError, default_wiring, load_wiring, parse_wiring
from referee.rules.clips import ReplaySettings
from referee.rules.engine import MAX_PLAYERS, MIN_PLAYERS
from referee.rules.options import OptionError
from referee.rules.player_names import check_names
from referee.rules.presets import UnknownPreset, rules_for
from referee.tomlfile import Bad, known, need_table, read_toml, show
from referee.vision.profile import TableProfileError, default_profile_path, table_part
from referee.vision.profile import exists as profile_exists

SIDES = ("bottom", "top", "left", "right")
PIN_KINDS = ("gpio", "mock")
# How GPIO buttons are read: the kernel's line events (hardware/gpio_buttons.py, each sweep's
# progress reported), or gpiozero's callbacks (the fallback: bound by their 60 ms latency).
BUTTON_READERS = ("gpiod", "gpiozero")
_TOP_KEYS = ("table", "camera", "hardware", "service", "kiosk", "replay")
_TABLE_KEYS = ("players", "rules", "options")
_CAMERA_KEYS = ("source", "profile", "fps", "seats")
_HARDWARE_KEYS = ("pins", "wiring", "buttons")
_HOST_NAME = re.compile(r"[A-Za-z0-9.:_-]{1,253}")  # a DNS name, an IPv4 or an IPv6 address
_SERVICE_KEYS = ("data_dir", "kiosk", "kiosk_host", "kiosk_port", "kiosk_names")
_KIOSK_KEYS = ("listen", "sound")
SOUND_SETTINGS = ("auto", "on", "off")  # kiosk/sound.py's SOUND_CHOICES: the config is read without the kiosk


class ConfigError(UserError):
    """A config file that cannot be used; str() is the one-line message."""


@dataclass(frozen=True)
class Config:
    """A checked config. Paths in the file are relative to the file's own folder."""

    source: str  # the file's path, for messages
    players: tuple[str, ...]
    rules: str = "celtic"
    options: Mapping[str, Any] = field(default_factory=dict)
    camera: str | None = None  # None: no camera; lays come from --lays-from
    profile: Path | None = None  # the deck profile, or a table profile holding a deck
    fps: float = 30.0
    sides: Mapping[str, int] | None = None  # the frame edge each seat's hand comes in from
    # The exposure (us), gain and lens position the camera step locked: set again at each start.
    camera_locks: tuple[int, float, float | None] | None = None
    pins: str = "gpio"
    buttons: str = "gpiod"
    wiring: Wiring = field(default_factory=default_wiring)
    data_dir: Path = field(default_factory=lambda: default_data_dir())
    kiosk: bool = True
    kiosk_host: str = "127.0.0.1"
    kiosk_port: int = 8080
    kiosk_names: tuple[str, ...] = ()  # names the page is opened by besides the Pi's own (kiosk_guard)
    kiosk_sound: str = "auto"  # the page plays the announcer's tones: auto, on, off (kiosk_sound)
    replay: ReplaySettings = field(default_factory=ReplaySettings)  # [replay]: the camera's clips

    @property
    def clips_dir(self) -> Path:
        return Path(self.replay.clips_dir) if self.replay.clips_dir else self.data_dir / "clips"

    def game_line(self) -> dict[str, Any]:
        return {"game": {"players": list(self.players), "rules": self.rules, "options": dict(self.options)}}


def default_data_dir() -> Path:
    """Where the journal lives when the config does not say: the XDG data directory."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "referee"


def load_config(path: str | PathLike[str]) -> Config:
    """Read and check the config file; ConfigError (one line naming file and key) on any problem."""
    data = read_toml(path, ConfigError)
    source = str(path)
    try:
        return _parse(data, source, Path(path).parent)
    except Bad as bad:
        where = f"{source}: {bad.key}" if bad.key else source
        raise ConfigError(f"{where}: {bad.what}") from None


def _parse(data: Mapping[str, Any], source: str, folder: Path) -> Config:
    # Each table in the file's order, so that the first mistake is the one told.
    known(data, "", _TOP_KEYS)
    players, rules, options = _table(data)
    camera = _camera(data, folder, len(players))
    pins, buttons, wiring = _hardware(data, folder, len(players), camera)
    service = _service(data, folder)
    host, sound = _kiosk(data, service.host)
    table_profile = camera.table_profile
    return Config(
        source=source,
        players=players,
        rules=rules,
        options=dict(options),
        camera=camera.source,
        # A table profile without its deck step: the built-in model reads the cards.
        profile=camera.profile if table_profile is None or "deck" in table_profile.get("done", []) else None,
        fps=camera.fps,
        sides=camera.sides,
        camera_locks=_locks(table_profile),
        pins=pins,
        buttons=buttons,
        wiring=wiring,
        data_dir=service.data_dir,
        kiosk=service.kiosk,
        kiosk_host=host.strip(),
        kiosk_port=service.port,
        kiosk_names=service.names,
        kiosk_sound=sound,
        replay=_replay(data, folder),
    )


def _table(data: Mapping[str, Any]) -> tuple[tuple[str, ...], str, Mapping[str, Any]]:
    """`[table]`: the players, the rules' preset and its house-rule options, checked together."""
    if "table" not in data:
        raise Bad("table", 'missing (the players at least: [table] players = ["Ann", "Bob"])')
    table = _section(data, "table", _TABLE_KEYS)
    players = _players(table.get("players"))
    rules = table.get("rules", "celtic")
    options = table.get("options", {})
    need_table(options, "table.options", "a table of house-rule options")
    try:
        rules_for(rules, options)
    except UnknownPreset as e:
        raise Bad("table.rules", str(e)) from None
    except OptionError as e:
        raise Bad("table.options", str(e)) from None
    return players, rules, options


class _Camera(NamedTuple):
    source: str | None  # None: no camera
    profile: Path | None  # the profile file given, or the wizard's if there is one
    table_profile: Mapping[str, Any] | None  # the table part of a table profile
    fps: float
    sides: Mapping[str, int] | None


def _camera(data: Mapping[str, Any], folder: Path, players: int) -> _Camera:
    """`[camera]`: the source, the profile (given, else the wizard's), the frame rate, and the
    side each seat's hand comes from (given, else the seats step's)."""
    camera = _section(data, "camera", _CAMERA_KEYS)
    source = camera.get("source")
    if source is not None and (not isinstance(source, str) or not source.strip()):
        raise Bad(
            "camera.source", f'must be "camera", a webcam number, a video or folder, not {show(source)}'
        )
    profile = _path(camera, "profile", "camera.profile", folder)
    try:
        if profile is None:
            wizards = default_profile_path()
            if profile_exists(wizards):
                profile = wizards  # what `referee calibrate` wrote, unless the config says
        table_profile = table_part(profile) if profile is not None else None
    except TableProfileError as e:
        raise Bad("camera.profile", str(e)) from None
    fps = camera.get("fps", 30.0)
    if isinstance(fps, bool) or not isinstance(fps, int | float) or not 1 <= fps <= 240:
        raise Bad("camera.fps", f"must be frames per second, 1 to 240, not {show(fps)}")
    if "seats" in camera or table_profile is None or not table_profile.get("seats"):
        sides = _sides(camera.get("seats"), players)
    else:
        sides = _profile_sides(table_profile["seats"], players, profile)
    return _Camera(source.strip() if source else None, profile, table_profile, float(fps), sides)


def _hardware(
    data: Mapping[str, Any], folder: Path, players: int, camera: _Camera
) -> tuple[str, str, Wiring]:
    """`[hardware]`: the pins, how buttons are read, and the wiring: the file given, else the
    pins the buttons step found, else the built-in plan."""
    hardware = _section(data, "hardware", _HARDWARE_KEYS)
    pins = hardware.get("pins", "gpio")
    if pins not in PIN_KINDS:
        raise Bad("hardware.pins", f'must be "gpio" (the Pi\'s pins) or "mock" (no wiring), not {show(pins)}')
    buttons = hardware.get("buttons", "gpiod")
    if buttons not in BUTTON_READERS:
        raise Bad(
            "hardware.buttons",
            f'must be "gpiod" (the kernel\'s line events) or "gpiozero" (its callbacks), not {show(buttons)}',
        )
    wiring_path = _path(hardware, "wiring", "hardware.wiring", folder)
    table_profile, profile = camera.table_profile, camera.profile
    if wiring_path is None and table_profile is not None and table_profile.get("buttons"):
        try:  # the pins the buttons step found
            wiring = parse_wiring(table_profile["buttons"], f"{profile}: buttons")
        except WiringError as e:
            raise Bad("camera.profile", str(e)) from None
        if len(wiring.seats) != players:
            raise Bad(
                "camera.profile",
                f"{profile} holds buttons for {len(wiring.seats)} seats, but [table] players names "
                f"{players} (referee calibrate buttons again, or give [hardware] wiring)",
            )
    elif wiring_path is None:
        wiring = default_wiring(players)
    else:
        try:
            wiring = load_wiring(wiring_path)
        except WiringError as e:
            raise Bad("hardware.wiring", str(e)) from None
        if len(wiring.seats) != players:
            raise Bad(
                "hardware.wiring",
                f"{wiring_path} wires {len(wiring.seats)} seats, but [table] players names {players}",
            )
    return pins, buttons, wiring


class _Service(NamedTuple):
    data_dir: Path
    kiosk: bool
    host: str  # as given: [kiosk] listen may say it instead
    port: int
    names: tuple[str, ...]  # lower case


def _service(data: Mapping[str, Any], folder: Path) -> _Service:
    """`[service]`: the journal's folder, and the kiosk: whether it runs, where it listens, and
    the names it may be opened by."""
    service = _section(data, "service", _SERVICE_KEYS)
    data_dir = _path(service, "data_dir", "service.data_dir", folder) or default_data_dir()
    kiosk = service.get("kiosk", True)
    if not isinstance(kiosk, bool):
        raise Bad("service.kiosk", f"must be true or false, not {show(kiosk)}")
    host = service.get("kiosk_host", "127.0.0.1")
    if not isinstance(host, str) or not host.strip():
        raise Bad("service.kiosk_host", f'must be an address to listen on ("127.0.0.1"), not {show(host)}')
    port = service.get("kiosk_port", 8080)
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise Bad("service.kiosk_port", f"must be a TCP port, 1 to 65535 (0: any free one), not {show(port)}")
    names = service.get("kiosk_names", [])
    if not isinstance(names, list) or not all(isinstance(n, str) and _HOST_NAME.fullmatch(n) for n in names):
        raise Bad(
            "service.kiosk_names",
            f'must be a list of host names or addresses (["referee.lan"]), not {show(names)}',
        )
    return _Service(data_dir, kiosk, host, port, tuple(n.lower() for n in names))


def _kiosk(data: Mapping[str, Any], host: str) -> tuple[str, str]:
    """`[kiosk]`: `listen` (the address the page listens on; `[service] kiosk_host` is its older
    name) and `sound` (the announcer's tones on the page: "auto", "on" or "off")."""
    kiosk = _section(data, "kiosk", _KIOSK_KEYS)
    listen = kiosk.get("listen")
    if listen is not None:
        if not isinstance(listen, str) or not listen.strip():
            raise Bad(
                "kiosk.listen", f'must be an address to listen on ("0.0.0.0": phones too), not {show(listen)}'
            )
        service = data.get("service", {})
        if "kiosk_host" in service and service["kiosk_host"].strip() != listen.strip():
            raise Bad(
                "kiosk.listen", f"says {show(listen)} but [service] kiosk_host says {show(host)}: keep one"
            )
        host = listen
    sound = kiosk.get("sound", "auto")
    if sound not in SOUND_SETTINGS:
        raise Bad("kiosk.sound", f'must be "auto", "on" or "off", not {show(sound)}')
    return host, sound


_REPLAY_NUMBERS = {  # key: (low, high, what)
    "seconds": (0.5, 30.0, "seconds kept before each ruling"),
    "after": (0.0, 5.0, "seconds kept after each ruling"),
    "max_mb": (1.0, 1e6, "megabytes for every clip on disk together"),
    "ring_mb": (1.0, 1024.0, "megabytes for the ring in memory"),
    "width": (160, 1920, "pixels across a clip's frame"),
    "quality": (30, 95, "JPEG quality"),
}


def _replay(data: Mapping[str, Any], folder: Path) -> ReplaySettings:
    """[replay]: the camera's last seconds and the clips of disputed rulings (docs/run.md)."""
    section = _section(data, "replay", ("clips", *_REPLAY_NUMBERS, "clips_dir"))
    clips = section.get("clips", True)
    if not isinstance(clips, bool):
        raise Bad("replay.clips", f"must be true or false, not {show(clips)}")
    given: dict[str, Any] = {}
    for key, (low, high, what) in _REPLAY_NUMBERS.items():
        if key not in section:
            continue
        value = section[key]
        whole = key in ("width", "quality")
        kind = int if whole else int | float
        if isinstance(value, bool) or not isinstance(value, kind) or not low <= value <= high:
            raise Bad(f"replay.{key}", f"must be {what}, {low:g} to {high:g}, not {show(value)}")
        given[key] = value if whole else float(value)
    where = _path(section, "clips_dir", "replay.clips_dir", folder)
    return ReplaySettings(clips=clips, clips_dir=str(where) if where else None, **given)


def _section(data: Mapping[str, Any], key: str, keys: tuple[str, ...]) -> Mapping[str, Any]:
    section = data.get(key, {})
    need_table(section, key, f"a table ([{key}])")
    known(section, key, keys)
    return section


def _players(players: Any) -> tuple[str, ...]:
    if not isinstance(players, list) or not all(isinstance(p, str) and p.strip() for p in players):
        raise Bad("table.players", f"must be a list of player names, one per seat, not {show(players)}")
    if not MIN_PLAYERS <= len(players) <= MAX_PLAYERS:
        raise Bad("table.players", f"{len(players)} players; a game has {MIN_PLAYERS} to {MAX_PLAYERS}")
    try:
        check_names([p.strip() for p in players])
    except ValueError as e:
        raise Bad("table.players", str(e)) from None
    said: dict[str, int] = {}
    for i, name in enumerate(players):
        key = name.strip().casefold()  # as a player hears it announced
        if key in said:
            raise Bad("table.players", f"{show(name)} is there twice (seats {said[key]} and {i})")
        said[key] = i
    return tuple(name.strip() for name in players)


def _path(section: Mapping[str, Any], key: str, where: str, folder: Path) -> Path | None:
    value = section.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise Bad(where, f"must be a path, not {show(value)}")
    path = Path(value).expanduser()
    return path if path.is_absolute() else folder / path


def _profile_sides(seats: Any, players: int, profile: Path | None) -> dict[str, int]:
    """The seats step's sides, for this table's players."""
    try:
        return _sides(seats, players)
    except Bad as bad:
        raise Bad(
            "camera.profile",
            f"{profile}: its seats do not fit [table] players ({bad.what}; "
            "referee calibrate seats again, or give [camera] seats)",
        ) from None


def _locks(table_profile: Mapping[str, Any] | None) -> tuple[int, float, float | None] | None:
    camera = (table_profile or {}).get("camera") or {}
    if camera.get("exposure_us") is None or camera.get("gain") is None:
        return None  # nothing was locked (a webcam, or no camera step)
    lens = camera.get("lens_position")
    return int(camera["exposure_us"]), float(camera["gain"]), None if lens is None else float(lens)


def _sides(value: Any, players: int) -> dict[str, int] | None:
    if value is None:
        return None
    need_table(value, "camera.seats", "a table such as { bottom = 0, left = 1, top = 2, right = 3 }")
    sides: dict[str, int] = {}
    for side, seat in value.items():
        if side not in SIDES:
            raise Bad(f"camera.seats.{side}", f"not a side of the picture ({', '.join(SIDES)})")
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < players:
            raise Bad(f"camera.seats.{side}", f"must be a seat number, 0 to {players - 1}, not {show(seat)}")
        sides[side] = seat
    return sides
