"""The service's config file: what a good one gives, and one line for every mistake."""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.config import ConfigError, default_data_dir, load_config

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


def test_a_good_config_and_its_paths_relative_to_the_file(tmp_path: Path) -> None:
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
        ('[table]\nplayers = ["Ann", "Bob"]\n[kiosk]\n', "kiosk: unknown key"),
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
