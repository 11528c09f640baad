"""The journal: SQLite settings, games and events kept in order, replay, and its one-line errors."""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path

import pytest

from referee.live.journal import ABANDONED, OPEN, STOPPED, WON, Journal, JournalError, JournalFull
from referee.live.replay import export, replay
from referee.rules.script import GameSpec, adjudicate, event_to_json, read_script

SPEC = GameSpec(("Ann", "Bob", "Cy")).to_json()
SCRIPT = [
    json.dumps(SPEC),
    '{"t": 1000000, "lay": "7H"}',
    '{"t": 1500000, "lay": "7S"}',
    '{"t": 1700000, "snap": 2}',
    '{"t": 2500000, "lay": "QD"}',
    '{"t": 2900000, "snap": 0}',
    '{"t": 3500000, "lay": "2C"}',
]


def _events() -> list[dict]:
    items = read_script(SCRIPT)
    next(items)
    return [event_to_json(event) for _, event in items]  # type: ignore[arg-type]


def _journal_with_game(folder: Path, events: list[dict]) -> tuple[Journal, int]:
    journal = Journal.open(folder)
    game = journal.new_game(SPEC, "game.jsonl")
    for seq, line in enumerate(events):
        journal.append(game, seq, line, mark=seq + 2)
    return journal, game


def test_the_journal_is_write_ahead_logged_and_synced_at_every_commit(tmp_path: Path) -> None:
    with Journal.open(tmp_path) as journal:
        db = journal._db
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
        assert not db.in_transaction  # each event is its own committed transaction


def test_events_come_back_in_order_with_their_script_lines_and_the_game_replays_to_the_same_table(
    tmp_path: Path,
) -> None:
    events = _events()
    journal, game = _journal_with_game(tmp_path, events)
    with journal:
        record = journal.open_game()
        assert record is not None and record.id == game and record.status == OPEN
        assert (record.events, record.last_t, record.last_mark) == (6, 3_500_000, 7)
        back = list(journal.events(game))
        assert [e.line for e in back] == events and [e.seq for e in back] == list(range(6))
        state = replay(record, back).state
    items = read_script(SCRIPT)
    expected_state = next(items)[1]
    from referee.rules.engine import step

    for _, event in items:
        expected_state, _ = step(expected_state, event)  # type: ignore[arg-type]
    assert state.hands == expected_state.hands and state.stack_cards() == expected_state.stack_cards()
    assert state.now == expected_state.now and state.turn == expected_state.turn


def test_an_exported_game_is_its_script_with_the_rulings_adjudicate_gives_again(tmp_path: Path) -> None:
    journal, game = _journal_with_game(tmp_path, _events())
    with journal:
        journal.end_game(game, STOPPED)
        record = journal.game(game)
        assert record is not None
        lines = [json.dumps(line) for line in export(record, journal.events(game))]
    rulings = [json.dumps(r.to_json()) for r in adjudicate(SCRIPT)]
    assert [line for line in lines if '"event"' in line] == rulings
    assert [line for line in lines if '"event"' not in line] == [json.dumps(json.loads(s)) for s in SCRIPT]
    again = [json.dumps(r.to_json()) for r in adjudicate(io.StringIO("\n".join(lines)))]
    assert again == rulings  # adjudicate skips the ruling lines and rules again


def test_a_new_game_abandons_the_open_one_and_a_won_game_is_no_longer_open(tmp_path: Path) -> None:
    with Journal.open(tmp_path) as journal:
        first = journal.new_game(SPEC)
        second = journal.new_game(SPEC)
        assert [(g.id, g.status) for g in journal.games()] == [(first, ABANDONED), (second, OPEN)]
        journal.end_game(second, WON, 1)
        assert journal.open_game() is None
        assert journal.game(second).winner == 1  # type: ignore[union-attr]


def test_a_committed_event_survives_the_connection_dying_without_a_close(tmp_path: Path) -> None:
    journal, _ = _journal_with_game(tmp_path, _events()[:3])
    del journal  # no close, no checkpoint: as when the process is killed
    with Journal.open(tmp_path) as again:
        assert again.open_game().events == 3  # type: ignore[union-attr]


def test_a_file_that_is_not_a_journal_is_one_line_naming_it(tmp_path: Path) -> None:
    (tmp_path / "journal.sqlite3").write_bytes(b"this is not a database, just text" * 100)
    with pytest.raises(JournalError) as e:
        Journal.open(tmp_path)
    message = str(e.value)
    assert "\n" not in message and "journal.sqlite3" in message and "move it aside" in message


def test_a_data_dir_that_cannot_be_made_is_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(JournalError, match="cannot open the journal"):
        Journal.open(blocker / "data")


def test_a_full_disk_refuses_a_new_game_with_a_clear_message_and_keeps_what_was_there(tmp_path: Path) -> None:
    journal, _ = _journal_with_game(tmp_path, _events())
    with journal:
        pages = journal._db.execute("PRAGMA page_count").fetchone()[0]
        journal._db.execute(f"PRAGMA max_page_count={pages}")  # the disk as good as full
        with pytest.raises(JournalFull, match="the disk is full"):
            journal.new_game({"game": {"players": ["x" * 100_000, "y"]}})
        assert [g.status for g in journal.games()] == [OPEN]  # the game in play is untouched
        assert journal.open_game().events == 6  # type: ignore[union-attr]


def test_a_journal_from_a_newer_referee_is_refused(tmp_path: Path) -> None:
    Journal.open(tmp_path).close()
    db = sqlite3.connect(tmp_path / "journal.sqlite3")
    db.execute("PRAGMA user_version=99")
    db.close()
    with pytest.raises(JournalError, match="newer referee"):
        Journal.open(tmp_path)


def test_an_event_the_engine_refuses_on_replay_names_the_game_and_the_event(tmp_path: Path) -> None:
    events = _events()
    events.append({"t": 3_600_000, "lay": "QD"})  # already on the stack: edited by hand
    journal, game = _journal_with_game(tmp_path, events)
    with journal, pytest.raises(JournalError, match=f"journal game {game}.*QD"):
        replay(journal.open_game(), journal.events(game))  # type: ignore[arg-type]
