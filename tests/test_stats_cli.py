"""`referee stats`: the night's scores in the terminal, as CSV and JSON; its bad inputs (one
line, exit 2); tonight's start (06:00 local) and `--since`."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from referee.cli.main import main
from referee.cli.scores import axis, spark
from referee.live.journal import Journal
from referee.live.scores import night, night_json, night_start, parse_since, score_game
from referee.sim.demo import run_demo

from .test_demo import demo_args
from .test_scores import hand_night

CET = timezone(timedelta(hours=1))


@pytest.fixture
def night_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    hand_night(folder).close()
    return folder


def test_the_table_names_every_player_the_records_and_the_histograms(night_dir: Path, capsys) -> None:
    assert main(["stats", "--journal", str(night_dir)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("The night's scores since ") and "5 games (games 1-5), 4 won" in out
    rows = [line for line in out.splitlines() if line.startswith("│")]
    assert [row.split("│")[1].strip() for row in rows] == ["Cy", "Ann", "Bob", "Dee"]
    cy = [cell.strip() for cell in rows[0].split("│")[1:-1]]
    assert cy == ["Cy", "4", "3", "2", "2", "0", "0", "0", "3", "260 ms", "180 ms", "2", "2"]
    assert "Fastest snap: Cy, 180 ms after the card that made it good (game 1)" in out
    assert "Closest race: Cy beat Bob by 1.0 ms (game 1)" in out
    assert "Most games won in a row: Cy, 2" in out and "Most stacks won in a row: Cy, 2 (game 1)" in out
    assert "Cy   ····█··█·········█  3 valid snaps, median 260 ms" in out
    assert "Ann  ·········█········  1 valid snap, median 300 ms" in out


def test_csv_and_json_carry_the_same_figures(night_dir: Path, capsys) -> None:
    with Journal.open(night_dir, readonly=True) as journal:
        expected = night_json(night([score_game(g, journal.events(g.id)) for g in journal.games()]))
    assert main(["stats", "--journal", str(night_dir / "journal.sqlite3"), "--format", "json"]) == 0
    given = json.loads(capsys.readouterr().out)
    assert given["since"] is not None  # tonight's start
    assert {k: v for k, v in given.items() if k != "since"} == {
        k: v for k, v in expected.items() if k != "since"
    }
    assert main(["stats", "--data-dir", str(night_dir), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["name"] for r in rows] == ["Cy", "Ann", "Bob", "Dee"]
    for row, player in zip(rows, given["players"], strict=True):
        assert row["won"] == str(player["won"]) and row["valid_snaps"] == str(player["valid_snaps"])
        assert row["fastest_us"] == ("" if player["fastest_us"] is None else str(player["fastest_us"]))
        bins = [int(row[k]) for k in list(row)[-len(player["reaction_bins"]) :]]
        assert bins == player["reaction_bins"]
    assert list(rows[0])[-1] == ">=500ms" and list(rows[0])[15] == "<100ms"


def test_since_picks_the_games(night_dir: Path, capsys) -> None:
    assert main(["stats", "--journal", str(night_dir), "--since", "2999-01-01"]) == 0
    assert capsys.readouterr().out == "no games since Tue 2999-01-01 00:00\n"
    assert (
        main(["stats", "--journal", str(night_dir), "--since", "2000-01-01 20:00", "--format", "json"]) == 0
    )
    assert len(json.loads(capsys.readouterr().out)["games"]) == 5
    assert main(["stats", "--journal", str(night_dir), "--since", "2999-01-01", "--format", "csv"]) == 0
    assert capsys.readouterr().out.startswith("name,games,won,")  # the header only


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["--since", "2026-13-01"], "--since: '2026-13-01' is not a date or a time"),
        (["--since", "tonight"], "--since: 'tonight' is not a date or a time"),
        (["--format", "xml"], "--format: 'xml' is not one of table, csv, json"),
        (["--journal", "{dir}/nowhere"], "nowhere: no such file or folder"),
        (["--journal", "{dir}/notes.txt"], "notes.txt: not a journal: the referee's journal is a file named"),
        (["--journal", "{dir}/empty"], "journal.sqlite3: no journal here"),
        (["--journal", "{dir}/junk"], "journal.sqlite3: "),
        (["--data-dir", "{dir}/empty"], "journal.sqlite3: no journal here"),
        (["--config", "{dir}/missing.toml"], "missing.toml"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys, argv: list[str], line: str) -> None:
    (tmp_path / "notes.txt").write_text("hello\n")
    (tmp_path / "empty").mkdir()
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "journal.sqlite3").write_bytes(b"not a database, only words\n" * 100)
    argv = [a.replace("{dir}", str(tmp_path)) for a in argv]
    assert main(["stats", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err
    assert err.count("\n") == 1 and line in err and "Traceback" not in err


def test_the_demos_journal_with_demo(capsys) -> None:
    assert main(["stats"]) == 2  # no journal for `referee run` here: the hint names --demo
    assert "no journal here (no game has been played with this data dir)" in capsys.readouterr().err
    assert run_demo(demo_args(seed=3), io.StringIO()) == 0  # a whole game, won
    assert main(["stats"]) == 2
    assert capsys.readouterr().err.endswith(
        "(no game has been played with this data dir; the demo's games: --demo)\n"
    )
    assert main(["stats", "--demo", "--format", "json"]) == 0
    table = json.loads(capsys.readouterr().out)
    assert len(table["games"]) == 1 and table["games"][0]["status"] == "won"
    assert sum(p["won"] for p in table["players"]) == 1 and table["fastest"] is not None


def test_tonight_starts_at_the_last_six_oclock_local_time() -> None:
    assert night_start(datetime(2026, 11, 27, 23, 0, tzinfo=CET), CET) == datetime(
        2026, 11, 27, 6, 0, tzinfo=CET
    )
    assert night_start(datetime(2026, 11, 28, 1, 30, tzinfo=CET), CET) == datetime(
        2026, 11, 27, 6, 0, tzinfo=CET
    )
    assert night_start(datetime(2026, 11, 28, 6, 0, tzinfo=CET), CET) == datetime(
        2026, 11, 28, 6, 0, tzinfo=CET
    )
    # A time given in UTC is read in local time: 05:30 UTC is 06:30 in CET, past the cut-over.
    utc = datetime(2026, 11, 28, 5, 30, tzinfo=UTC)
    assert night_start(utc, CET) == datetime(2026, 11, 28, 6, 0, tzinfo=CET)
    # The night the clocks go back: its 06:00 is in summer time, the next in winter time.
    paris = ZoneInfo("Europe/Paris")
    start = night_start(datetime(2026, 10, 25, 4, 0, tzinfo=paris), paris)
    assert start == datetime(2026, 10, 24, 6, 0, tzinfo=paris) and start.utcoffset() == timedelta(hours=2)


def test_since_is_a_date_or_a_time_in_local_time() -> None:
    assert parse_since("2026-11-27", CET) == datetime(2026, 11, 27, 0, 0, tzinfo=CET)
    assert parse_since("2026-11-27 20:15", CET) == datetime(2026, 11, 27, 20, 15, tzinfo=CET)
    assert parse_since("2026-11-27T20:15", CET) == datetime(2026, 11, 27, 20, 15, tzinfo=CET)
    assert parse_since("2026-11-27T20:15+00:00", CET) == datetime(2026, 11, 27, 20, 15, tzinfo=UTC)
    for bad in ("", "27/11/2026", "2026-02-30", "20:15"):
        with pytest.raises(ValueError, match="is not a date or a time"):
            parse_since(bad, CET)


def test_a_histogram_in_one_line() -> None:
    assert spark([0, 1, 2, 4]) == "·▂▄█"
    assert spark([0, 0]) == "··"
    assert axis().startswith(" 100     300     500+ ms")
