"""The service's config file: what a good one gives, and one line for every mistake."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.live.config import ConfigError, default_data_dir, load_config

GOOD = """
[table]
players = ["Ann", "Bob", "Cy", "Dee"]
rules = "celtic"
options = { scan = "top" }
[camera]
source = "camera"
profile = "decks/mine.npz"
seats = { bottom = 0, left = 1, top = 2, right = 3 }
[hardware]
pins = "mock"
[service]
data_dir = "data"
kiosk_port = 8081
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "referee.toml"
    path.write_text(text)
    return path


def _deck_profile(path: Path) -> Path:
    import numpy as np

    from referee.vision.recogniser import Profile

    path.parent.mkdir(parents=True, exist_ok=True)
    Profile(np.zeros((1, 8, 8), np.float32), np.array(["QS"])).save(path)
    return path


def test_a_good_config_and_its_paths_relative_to_the_file(tmp_path: Path) -> None:
    _deck_profile(tmp_path / "decks" / "mine.npz")
    config = load_config(_write(tmp_path, GOOD))
    assert config.players == ("Ann", "Bob", "Cy", "Dee")
    assert config.options == {"scan": "top"}
    assert config.camera == "camera" and config.sides == {"bottom": 0, "left": 1, "top": 2, "right": 3}
    assert config.profile == tmp_path / "decks" / "mine.npz"
    assert config.data_dir == tmp_path / "data"
    assert (config.pins, config.kiosk, config.kiosk_host, config.kiosk_port) == (
        "mock",
        True,
        "127.0.0.1",
        8081,
    )
    assert len(config.wiring.seats) == 4  # the built-in plan for four seats
    assert config.game_line() == {
        "game": {"players": ["Ann", "Bob", "Cy", "Dee"], "rules": "celtic", "options": {"scan": "top"}}
    }


def test_the_defaults_need_only_the_players(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    config = load_config(_write(tmp_path, '[table]\nplayers = ["Ann", "Bob"]\n'))
    assert config.camera is None and config.pins == "gpio" and config.rules == "celtic"
    assert config.data_dir == default_data_dir() == tmp_path / "xdg" / "referee"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[table\n", ":1: not valid TOML"),
        ('[camera]\nsource = "camera"\n', "table: missing"),
        ('[table]\nplayers = ["Ann"]\n', "table.players: 1 players; a game has 2 to 8"),
        ('[table]\nplayers = "Ann, Bob"\n', "table.players: must be a list of player names"),
        ('[table]\nplayers = ["Ann", "ann "]\n', 'table.players: "ann " is there twice (seats 0 and 1)'),
        ('[table]\nplayers = ["Ann", "Bob"]\nrules = "snap"\n', "table.rules: unknown rules 'snap'"),
        ('[table]\nplayers = ["Ann", "Bob"]\noptions = { scan = "all" }\n', "table.options:"),
        ('[table]\nplayers = ["Ann", "Bob"]\ncolour = 1\n', "table.colour: unknown key"),
        ('[table]\nplayers = ["Ann", "Bob"]\n[screen]\n', "screen: unknown key"),
        ('[table]\nplayers = ["Ann", "Bob"]\n[camera]\nfps = 0\n', "camera.fps: must be frames per second"),
        ('[table]\nplayers = ["Ann", "Bob"]\n[camera]\nseats = { up = 0 }\n', "camera.seats.up: not a side"),
        (
            '[table]\nplayers = ["Ann", "Bob"]\n[camera]\nseats = { top = 2 }\n',
            "camera.seats.top: must be a seat",
        ),
        ('[table]\nplayers = ["Ann", "Bob"]\n[hardware]\npins = "lgpio"\n', 'hardware.pins: must be "gpio"'),
        ('[table]\nplayers = ["Ann", "Bob"]\n[hardware]\nwiring = "none.toml"\n', "hardware.wiring:"),
        ('[table]\nplayers = ["Ann", "Bob"]\n[service]\nkiosk_port = 70000\n', "service.kiosk_port: must be"),
        ('[table]\nplayers = ["Ann", "Bob"]\n[service]\nkiosk = "yes"\n', "service.kiosk: must be true"),
        ('[table]\nplayers = ["Ann", "Bob"]\n[service]\ndata_dir = 3\n', "service.data_dir: must be a path"),
    ],
)
def test_every_mistake_is_one_line_naming_the_file_and_the_key(
    tmp_path: Path, text: str, message: str
) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(ConfigError) as e:
        load_config(path)
    assert str(e.value).startswith(str(path))
    assert message in str(e.value) and "\n" not in str(e.value)


def test_a_wiring_file_for_another_number_of_seats_is_refused(tmp_path: Path) -> None:
    wiring = tmp_path / "wiring.toml"
    wiring.write_text(
        '[[seat]]\nname = "Ann"\nbutton = 5\nled = 6\n[[seat]]\nname = "Bob"\nbutton = 13\nled = 19\n'
    )
    path = _write(tmp_path, '[table]\nplayers = ["Ann", "Bob", "Cy"]\n[hardware]\nwiring = "wiring.toml"\n')
    with pytest.raises(ConfigError, match="wires 2 seats, but \\[table\\] players names 3"):
        load_config(path)


def test_a_missing_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nope\.toml: cannot read"):
        load_config(tmp_path / "nope.toml")


def _table_profile(path: Path, **parts) -> Path:
    from referee.vision.profile import TableProfile, save

    profile = TableProfile()
    for step, part in parts.items():
        profile = profile.with_step(step, **{step: part})
    save(profile, path)
    return path


SEATS = {"bottom": 0, "right": 1, "top": 2, "left": 3}
CAMERA = {"pile_box": [1, 2, 3, 4], "card_px": 120.0, "exposure_us": 8000, "gain": 2.5, "lens_position": 3.2}


def test_the_table_profile_gives_the_seats_the_buttons_and_the_camera_locks(tmp_path: Path) -> None:
    from referee.live.wiring import default_wiring

    wiring = default_wiring(4)
    pins = list(wiring.buttons)
    pins[0], pins[1] = pins[1], pins[0]  # the buttons step found two wires swapped
    found = wiring.to_dict()
    for seat, pin in zip(found["seat"], pins, strict=True):
        seat["button"] = pin
    profile = _table_profile(tmp_path / "table.npz", camera=CAMERA, seats=SEATS, buttons=found)
    config = load_config(
        _write(tmp_path, f'[table]\nplayers = ["A", "B", "C", "D"]\n[camera]\nprofile = "{profile}"\n')
    )
    assert config.sides == SEATS
    assert config.wiring.buttons == tuple(pins)
    assert config.camera_locks == (8000, 2.5, 3.2)
    # The config's own [camera] seats and [hardware] wiring win over the profile's.
    text = (
        f'[table]\nplayers = ["A", "B", "C", "D"]\n[camera]\nprofile = "{profile}"\nseats = {{ top = 0 }}\n'
    )
    assert load_config(_write(tmp_path, text)).sides == {"top": 0}


def test_the_wizards_profile_is_read_when_the_config_names_none(tmp_path: Path, monkeypatch) -> None:
    from referee.vision.profile import default_profile_path

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    players = '[table]\nplayers = ["A", "B", "C", "D"]\n'
    assert load_config(_write(tmp_path, players)).profile is None  # no wizard run yet: none
    default_profile_path().parent.mkdir(parents=True)
    _table_profile(default_profile_path(), seats=SEATS)
    config = load_config(_write(tmp_path, players))
    assert config.sides == SEATS
    assert config.profile is None  # no deck step done: the built-in model reads the cards
    assert config.camera_locks is None  # no camera step done


@pytest.mark.parametrize(
    ("parts", "players", "message"),
    [
        ({"seats": SEATS}, 2, "its seats do not fit [table] players (must be a seat number, 0 to 1, not 2; "),
        ({"buttons": "default4"}, 2, "holds buttons for 4 seats, but [table] players names 2"),
        ({"buttons": {"seat": [{"name": "A", "button": 99, "led": 5}]}}, 2, "buttons: seat"),
    ],
)
def test_a_profile_that_does_not_fit_the_table_is_one_line(tmp_path: Path, parts, players, message) -> None:
    from referee.live.wiring import default_wiring

    if parts.get("buttons") == "default4":
        parts = {"buttons": default_wiring(4).to_dict()}
    profile = _table_profile(tmp_path / "table.npz", **parts)
    names = ", ".join(f'"P{i}"' for i in range(players))
    path = _write(tmp_path, f'[table]\nplayers = [{names}]\n[camera]\nprofile = "{profile}"\n')
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert str(caught.value).startswith(f"{path}: camera.profile: ")
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_a_damaged_profile_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "table.npz").write_bytes(b"not a zip")
    path = _write(tmp_path, '[table]\nplayers = ["A", "B"]\n[camera]\nprofile = "table.npz"\n')
    with pytest.raises(
        ConfigError, match=r"camera.profile: .*table.npz: not a profile \(a profile is an .npz file"
    ):
        load_config(path)
