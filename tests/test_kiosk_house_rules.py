"""House rules from the kiosk: the host's options for the next game (never the current one),
checked, journaled (a restart keeps them; a changed config wins; old journals read as before),
shown in the legend; bad bodies are a 4xx with one line and change nothing."""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from hardware.clock import VirtualClock
from referee.kiosk.app import make_app
from referee.live.journal import Journal, JournalDamaged
from referee.live.service import RunSettings, run_service
from referee.rules.house_rules import house_view, kinds, option_words, overrides
from referee.rules.options import OptionError
from referee.rules.presets import rules_for

from .test_host import SPEC, _command, _table
from .test_kiosk import TOKEN, bearer

LOCAL = ("127.0.0.1", 50000)


def test_the_options_a_host_gives_are_checked_and_kept_where_they_differ_from_the_preset():
    assert overrides("celtic", {"slap_run": 3, "slap_pair": True, "race_window": 250}) == {
        "slap_run": 3,
        "race_window": 250,
    }
    assert overrides("classic", {"slap_joker": True}) == {}  # classic has jokers already
    for given, message in [
        ({"slap_wheelie": True}, "unknown option 'slap_wheelie'"),
        ({"slap_run": "3"}, "option 'slap_run' must be 0, 3 or 4, not \"3\""),
        ({"slap_pair": 1}, "option 'slap_pair' must be true or false, not 1"),
        ({"race_window": -5}, "option 'race_window' must be 0..60000 ms, not -5"),
        (["slap_run"], "give 'options' as an object"),
        ({f"o{i}": 1 for i in range(100)}, "100 options given"),
    ]:
        with pytest.raises(OptionError) as e:
            overrides("celtic", given)
        assert message in str(e.value) and "\n" not in str(e.value)
    assert kinds()["slap_run"] == {"kind": "count", "choices": [0, 3, 4]}
    assert kinds()["scan"] == {"kind": "choice", "choices": ["stack", "top"]}
    assert kinds()["race_window"] == {"kind": "ms"} and kinds()["slap_pair"] == {"kind": "bool"}
    assert option_words("slap_dark_queen", False) == "dark queen off"
    assert option_words("face_cards", "counting_out") == "face cards counting out"


def test_the_legend_shows_this_games_house_rules_and_the_next_ones():
    state = rules_for("celtic", {"slap_dark_queen": False}).new_game(("Ann", "Bob"))
    assert house_view(state, None) == {"now": ["dark queen off"], "next": None}
    same = {"game": {"players": ["Ann", "Bob"], "rules": "celtic", "options": {"slap_dark_queen": False}}}
    assert house_view(state, same)["next"] is None  # the next game is this one's rules again
    party = {"game": {"players": ["Ann", "Bob"], "rules": "party", "options": {"slap_run": 3}}}
    assert house_view(state, party)["next"] == {
        "rules": "party",
        "options": {"slap_run": 3},
        "words": ["run 3"],
    }


def test_house_rules_apply_from_the_next_game_are_journaled_and_shown(tmp_path: Path):
    journal, loop, hub, commands = _table(tmp_path)
    before = loop.state.rules.options
    answer = _command(loop, lambda: commands.set_house_rules({"slap_run": 3, "slap_dark_queen": False}))
    assert answer == "house rules from the next new game: slap_dark_queen False, slap_run 3"
    assert loop.state.rules.options == before  # the game being played keeps its rules
    assert journal.next_game(SPEC.to_json()) == {
        "game": {
            "players": ["Ann", "Bob", "Cy"],
            "rules": "celtic",
            "options": {"slap_dark_queen": False, "slap_run": 3},
        }
    }
    house = json.loads(hub.snapshot()[1])["house"]
    assert house == {
        "now": [],
        "next": {
            "rules": "celtic",
            "options": {"slap_dark_queen": False, "slap_run": 3},
            "words": ["dark queen off", "run 3"],
        },
    }
    assert _command(loop, commands.new_game).startswith("new game 2")
    assert loop.state.rules.options.slap_run == 3 and not loop.state.rules.options.slap_dark_queen
    assert journal.games()[-1].spec["game"]["options"] == {"slap_dark_queen": False, "slap_run": 3}
    view = json.loads(hub.snapshot()[1])
    assert view["house"] == {"now": ["dark queen off", "run 3"], "next": None}
    assert [s["key"] for s in view["game"]["slaps"]] == ["calling_out", "pair", "sandwich", "run"]
    # A rules change goes back to that preset's own options.
    _command(loop, lambda: commands.set_rules("party"))
    assert journal.next_game(SPEC.to_json())["game"]["options"] == {}
    journal.close()


def test_bad_house_rules_are_a_4xx_with_one_line_and_change_nothing(tmp_path: Path):
    journal, _, hub, commands = _table(tmp_path)
    app = make_app(hub, TOKEN, commands)
    before = hub.snapshot()[1]
    cases = [
        (
            {"json": {"options": {"slap_wheelie": True}}, "headers": bearer()},
            400,
            "unknown option 'slap_wheelie'",
        ),
        ({"json": {"options": {"slap_run": "three"}}, "headers": bearer()}, 400, "option 'slap_run' must be"),
        ({"json": {"options": {"slap_pair": "yes"}}, "headers": bearer()}, 400, "must be true or false"),
        ({"json": {"options": [1, 2]}, "headers": bearer()}, 400, 'give {"options"'),
        ({"json": {"slap_run": 3}, "headers": bearer()}, 400, 'give {"options"'),
        ({"json": {"options": {}, "extra": 1}, "headers": bearer()}, 400, 'give {"options"'),
        ({"json": {"options": {"slap_run": 3}}}, 401, "the admin token is needed"),
        ({"json": {"options": {"slap_run": 3}}, "headers": bearer("w" * 32)}, 403, "wrong admin token"),
        (
            {
                "content": b'{"options": {"slap_run": 3',
                "headers": {**bearer(), "content-type": "application/json"},
            },
            400,
            "send a JSON object or a form",
        ),
        (
            {
                "content": b'{"options": {"a": "' + b"x" * 70_000 + b'"}}',
                "headers": {**bearer(), "content-type": "application/json"},
            },
            413,
            "at most 64 KiB",
        ),
        (
            {"json": {"options": {"slap_run": 3}}, "headers": {**bearer(), "origin": "http://evil.example"}},
            403,
            "another site",
        ),
    ]
    with TestClient(app, client=LOCAL) as client:
        for request, status, words in cases:
            answer = client.post("/api/admin/house-rules", **request)
            assert answer.status_code == status, (request, answer.text)
            error = answer.json()["error"]
            assert words in error and "\n" not in error
    assert hub.snapshot()[1] == before  # nothing shown changed
    assert journal.next_game(SPEC.to_json()) is None  # nothing journaled
    assert commands.spec == SPEC
    journal.close()


def _config(tmp_path: Path, options: str = "") -> Path:
    path = tmp_path / "referee.toml"
    path.write_text(
        f'[table]\nplayers = ["Ann", "Bob", "Cy"]\n{options}[hardware]\npins = "mock"\n'
        '[service]\ndata_dir = "data"\nkiosk_port = 0\n'
    )
    return path


def _run(tmp_path: Path, config: Path) -> dict:
    script = tmp_path / "lays.jsonl"
    script.write_text('{"t": 1000000, "lay": "7H"}\n')
    args = RunSettings(config=str(config), lays_from=str(script), at_once=False, new_game=True, host=None)
    assert run_service(args, io.StringIO(), io.StringIO(), clock=VirtualClock(0)) == 0
    with Journal.open(tmp_path / "data", readonly=True) as journal:
        return journal.games()[-1].spec["game"]


def test_a_restart_deals_the_next_game_by_the_house_rules_unless_the_config_changed(tmp_path: Path):
    config = _config(tmp_path)
    base = {"game": {"players": ["Ann", "Bob", "Cy"], "rules": "celtic", "options": {}}}
    with Journal.open(tmp_path / "data") as journal:
        journal.set_next_game({"game": {**base["game"], "options": {"slap_run": 4}}}, base, 1)
    assert _run(tmp_path, config)["options"] == {"slap_run": 4}
    # The operator edits the config since: the config's word is the newer one.
    assert _run(tmp_path, _config(tmp_path, "options = { slap_pair = false }\n"))["options"] == {
        "slap_pair": False
    }


def test_an_older_journal_without_the_house_rules_reads_as_before(tmp_path: Path):
    with Journal.open(tmp_path) as journal:
        game = journal.new_game(SPEC.to_json(), "camera")
        journal.append(game, 0, {"t": 1000, "lay": "7H"})
    db = sqlite3.connect(tmp_path / "journal.sqlite3")  # as a referee before house rules left it
    db.execute("DROP TABLE next_game")
    db.commit()
    db.close()
    with Journal.open(tmp_path, readonly=True) as journal:
        assert [g.events for g in journal.games()] == [1] and journal.next_game(SPEC.to_json()) is None
    with Journal.open(tmp_path) as journal:  # a writer adds the table; the version stays
        assert journal.next_game(SPEC.to_json()) is None
        journal.set_next_game(SPEC.to_json(), SPEC.to_json(), game)
        assert journal.next_game(SPEC.to_json()) == SPEC.to_json()
        assert journal._db.execute("PRAGMA user_version").fetchone()[0] == 2


def test_a_damaged_house_rules_row_is_named(tmp_path: Path):
    with Journal.open(tmp_path) as journal:
        journal.set_next_game(SPEC.to_json(), SPEC.to_json(), None)
    db = sqlite3.connect(tmp_path / "journal.sqlite3")
    db.execute("UPDATE next_game SET spec = replace(spec, 'celtic', 'party')")
    db.commit()
    db.close()
    with Journal.open(tmp_path) as journal, pytest.raises(JournalDamaged) as e:
        journal.next_game(SPEC.to_json())
    assert "the next game's rules" in str(e.value) and "\n" not in str(e.value)
