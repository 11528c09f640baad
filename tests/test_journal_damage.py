"""Damaged journals: found, named on one line, never read as a smaller or different game.

- a `-wal` deleted or garbled after a crash (SQLite would silently read the older main
  file): the sidecar record names the game and the events lost, `run` refuses to go on
  (`--new-game` goes on without them), `games` and `export` print what is kept and say it;
- a main file cut to 0 bytes: refused, not taken for a new journal;
- seeded bit flips anywhere in a journal: `games` and `export` either print exactly what
  the undamaged journal gives, or one line and exit 2; never a traceback;
- `games` and `export` open the journal read-only: nothing written or created, so they
  work on read-only media and with no room to write (RLIMIT_FSIZE 0 stands in for a full disk).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from referee.cli.main import main
from referee.live.journal import Journal, JournalDamaged
from referee.rules.script import event_to_json
from referee.sim.bots import VirtualTable

ROOT = Path(__file__).resolve().parent.parent
FLIPS = 120  # make test; benchmarks/bench_journal_damage.py flips 2,000


def _lines(seed: int = 55) -> tuple[dict, list[dict]]:
    table = VirtualTable(players=3, seed=seed)
    return table.spec.to_json(), [event_to_json(p.event) for p in table.play() if p.event is not None]


def journal_after_crash(folder: Path, events: int = 170, games: int = 2) -> None:
    """A journal killed mid-game: `games - 1` ended games, then an open one with `events`
    events, its -wal not yet checkpointed (as a SIGKILL leaves it)."""
    code = f"""
import os, sys
sys.path.insert(0, {str(ROOT)!r})
from referee.live.journal import Journal, WON
from tests.test_journal_damage import _lines
spec, lines = _lines()
journal = Journal.open({str(folder)!r})
journal._db.execute("PRAGMA synchronous=OFF")  # a process killed, not a power cut: no fsync needed
for g in range({games} - 1):
    game = journal.new_game(spec, "old")
    for seq, line in enumerate(lines[:40]):
        journal.append(game, seq, line)
    journal.end_game(game, WON, 1)
journal._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the ended games in the main file
game = journal.new_game(spec, "game.jsonl")
for seq, line in enumerate(lines[:{events}]):
    journal.append(game, seq, line, seq + 2)
os.kill(os.getpid(), 9)
"""
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=False)
    assert (folder / "journal.sqlite3-wal").stat().st_size > 0


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(argv))
    return status, out.getvalue(), err.getvalue()


def test_a_deleted_wal_after_a_crash_is_named_with_what_was_lost_and_never_rolled_back(
    tmp_path: Path,
) -> None:
    journal_after_crash(tmp_path)
    (tmp_path / "journal.sqlite3-wal").unlink()
    with pytest.raises(JournalDamaged) as e:
        Journal.open(tmp_path)
    message = str(e.value)
    assert "\n" not in message and "game 2 had 170 events committed" in message and "--new-game" in message
    # The readers print what can be proven (the ended game) and say what was lost: exit 2.
    status, out, err = cli("games", "--data-dir", str(tmp_path))
    assert status == 2 and "won by Bob" in out and len(err.strip().splitlines()) == 1
    assert "game 2 had 170 events committed" in err and "lost" in err
    status, out, err = cli("export", "1", "--data-dir", str(tmp_path))
    assert status == 2 and len(out.splitlines()) > 40 and "game 2" in err


def test_a_garbled_wal_is_named_with_the_events_it_lost_and_the_ones_kept(tmp_path: Path) -> None:
    journal_after_crash(tmp_path)
    wal = tmp_path / "journal.sqlite3-wal"
    data = bytearray(wal.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 64] = bytes(64)  # a frame's checksum breaks: SQLite stops reading there
    wal.write_bytes(bytes(data))
    with pytest.raises(
        JournalDamaged, match=r"game 2 had 170 events committed, but the journal holds \d+: events"
    ):
        Journal.open(tmp_path)


def test_new_game_goes_on_without_the_lost_events_and_says_so(tmp_path: Path) -> None:
    journal_after_crash(tmp_path)
    (tmp_path / "journal.sqlite3-wal").unlink()
    with Journal.open(tmp_path, accept_loss=True) as journal:
        assert journal.damage is not None and "game 2 had 170 events" in journal.damage
        journal.new_game({"game": {"players": ["A", "B"]}})
    with Journal.open(tmp_path) as journal:  # said once: the new game is whole
        assert journal.damage is None and [g.id for g in journal.games()] == [1, 2]


def test_a_main_file_cut_to_zero_bytes_is_refused_not_taken_for_a_new_journal(tmp_path: Path) -> None:
    journal_after_crash(tmp_path)
    (tmp_path / "journal.sqlite3").write_bytes(b"")
    with pytest.raises(JournalDamaged, match="empty"):
        Journal.open(tmp_path)
    (tmp_path / "journal.sqlite3-wal").unlink()
    with pytest.raises(JournalDamaged, match=r"empty \(0 bytes\), but game 2 had 170 events"):
        Journal.open(tmp_path)
    status, _, err = cli("games", "--data-dir", str(tmp_path))
    assert status == 2 and "empty (0 bytes)" in err
    assert (tmp_path / "journal.sqlite3").stat().st_size == 0  # nothing was written to it


def test_a_row_changed_in_the_file_is_named_not_read_as_another_game(tmp_path: Path) -> None:
    journal_after_crash(tmp_path, games=1, events=30)
    with Journal.open(tmp_path) as journal:
        journal.end_game(1, "stopped")
    path = tmp_path / "journal.sqlite3"
    data = path.read_bytes()
    at = data.index(b'"lay": "')  # a card in an event's line: still valid JSON, another card
    changed = data[: at + 8] + bytes([data[at + 8] ^ 0x01]) + data[at + 9 :]
    path.write_bytes(changed)
    status, _, err = cli("export", "1", "--data-dir", str(tmp_path))
    assert status == 2 and re.search(r"game 1, event \d+ is not what was written", err), err


def _flip_outcomes(pristine: Path, work: Path, flips: int, seed: int) -> dict[str, int]:
    """`flips` copies of a journal, each with one seeded bit flipped, read by `games` and `export`:
    each the same output as the undamaged one, or one line and exit 2."""
    want = [cli("games", "--data-dir", str(pristine)), cli("export", "1", "--data-dir", str(pristine))]
    assert all(status == 0 for status, _, _ in want)
    size = (pristine / "journal.sqlite3").stat().st_size
    rng = random.Random(seed)
    counts = {"same": 0, "named": 0}
    for i in range(flips):
        folder = work / f"flip{i}"
        shutil.copytree(pristine, folder)
        path = folder / "journal.sqlite3"
        data = bytearray(path.read_bytes())
        bit = rng.randrange(size * 8)
        data[bit // 8] ^= 1 << (bit % 8)
        path.write_bytes(bytes(data))
        for argv, good in zip((["games"], ["export", "1"]), want, strict=True):
            try:
                got = cli(*argv, "--data-dir", str(folder))
            except Exception as e:  # a traceback, in the shell
                raise AssertionError(f"bit {bit}: {argv[0]} raised {type(e).__name__}: {e}") from None
            if got == good:
                counts["same"] += 1
                continue
            status, _, err = got
            lines = err.strip().splitlines()
            assert status == 2 and len(lines) == 1, f"bit {bit}: {argv[0]} gave other output: {got}"
            assert "journal.sqlite3" in lines[0], lines
            counts["named"] += 1
        shutil.rmtree(folder)
    return counts


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("pristine")
    spec, lines = _lines()
    with Journal.open(folder) as journal:
        journal._db.execute("PRAGMA synchronous=OFF")  # no power cut here: spare the shared disk
        game = journal.new_game(spec, "game.jsonl")
        for seq, line in enumerate(lines[:120]):
            journal.append(game, seq, line, seq + 2)
        journal.end_game(game, "stopped")
    for name in ("journal.sqlite3.lock",):
        (folder / name).unlink()
    return folder


def test_bit_flips_give_the_same_output_or_one_line_never_a_traceback(pristine: Path, tmp_path: Path) -> None:
    counts = _flip_outcomes(pristine, tmp_path, FLIPS, 2026)
    assert counts["named"] > 0, counts  # the flips reach the rows, or this tests little
    print(counts)


def _no_writes() -> None:
    # No file may grow: what a full disk (or read-only media) does to a writer.
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


@pytest.mark.parametrize("crashed", [False, True], ids=["closed", "after a crash"])
def test_games_and_export_read_only_write_and_create_nothing(tmp_path: Path, crashed: bool) -> None:
    if crashed:
        journal_after_crash(tmp_path, games=1, events=50)
    else:
        spec, lines = _lines()
        with Journal.open(tmp_path) as journal:
            journal._db.execute("PRAGMA synchronous=OFF")
            game = journal.new_game(spec)
            for seq, line in enumerate(lines[:50]):
                journal.append(game, seq, line)
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in tmp_path.iterdir()}
    for argv in (["games"], ["export", "1"]):
        done = subprocess.run(
            [sys.executable, "-m", "referee", *argv, "--data-dir", str(tmp_path)],
            capture_output=True,
            cwd=ROOT,
            # After a crash SQLite must rebuild its shared index (-shm) in place to read the -wal:
            # that write is allowed; on a closed journal no write at all is.
            preexec_fn=None if crashed else _no_writes,
            check=False,
        )
        assert done.returncode == 0, done.stderr.decode()
        assert done.stdout.count(b"\n") >= (1 if argv == ["games"] else 51)
    after = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in tmp_path.iterdir()}
    if crashed:  # SQLite rebuilds its shared index (-shm) in place; nothing else changes
        before.pop("journal.sqlite3-shm", None), after.pop("journal.sqlite3-shm", None)
    assert after == before


def test_an_older_journal_is_given_its_checksums_once_and_then_checked(tmp_path: Path) -> None:
    import sqlite3

    spec, lines = _lines()
    db = sqlite3.connect(tmp_path / "journal.sqlite3", isolation_level=None)
    db.executescript(
        """CREATE TABLE games (id INTEGER PRIMARY KEY, spec TEXT NOT NULL, started TEXT NOT NULL, ended TEXT,
        status TEXT NOT NULL, winner INTEGER, source TEXT);
        CREATE TABLE events (game INTEGER NOT NULL, seq INTEGER NOT NULL, line TEXT NOT NULL, mark INTEGER,
        undone INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (game, seq)) WITHOUT ROWID;
        PRAGMA user_version=1;"""
    )
    db.execute("INSERT INTO games VALUES (1, ?, 'then', 'later', 'stopped', NULL, 'x')", (json.dumps(spec),))
    for seq, line in enumerate(lines[:10]):
        db.execute("INSERT INTO events (game, seq, line) VALUES (1, ?, ?)", (seq, json.dumps(line)))
    db.close()
    with Journal.open(tmp_path) as journal:
        assert [e.line for e in journal.events(1)] == lines[:10]
    with Journal.open(tmp_path, readonly=True) as journal:
        assert journal._checked and journal.games()[0].events == 10


# Read-only media after a power cut: the -wal is read, or one line says what to do -----------


def _read_only_mount_works() -> bool:
    """Whether `unshare` can give this test a read-only bind mount (a user and mount namespace:
    no root needed, and root is refused too: EROFS binds everyone, unlike chmod)."""
    if shutil.which("unshare") is None:
        return False
    probe = "mount --bind /tmp /tmp && mount -o remount,bind,ro /tmp && ! touch /tmp/.referee-probe"
    done = subprocess.run(["unshare", "-Urm", "sh", "-c", probe], capture_output=True, check=False)
    return done.returncode == 0


def _read(folder: Path, read_only_mount: bool = False) -> list[subprocess.CompletedProcess[str]]:
    runs = []
    for argv in (["games"], ["export", "2"]):
        command = [sys.executable, "-m", "referee", *argv, "--data-dir", str(folder)]
        if read_only_mount:
            mount = f'mount --bind {folder} {folder} && mount -o remount,bind,ro {folder} && exec "$@"'
            command = ["unshare", "-Urm", "sh", "-c", mount, "sh", *command]
        runs.append(subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False))
    return runs


def _files(folder: Path) -> dict[str, tuple[bytes, int] | str]:
    return {
        p.name: os.readlink(p) if p.is_symlink() else (p.read_bytes(), p.stat().st_mtime_ns)
        for p in folder.iterdir()
    }


def _as_read_where_writable(crashed: Path, tmp_path: Path) -> list[tuple[int, str, str]]:
    copy = tmp_path / "writable copy"
    shutil.copytree(crashed, copy)
    return [(r.returncode, r.stdout, r.stderr) for r in _read(copy)]


@pytest.mark.skipif(not _read_only_mount_works(), reason="no user namespaces here for a read-only mount")
@pytest.mark.parametrize("shm", [True, False], ids=["its -shm there", "no -shm"])
def test_a_crashed_journal_on_read_only_media_is_read_with_what_its_wal_holds(
    tmp_path: Path, shm: bool
) -> None:
    folder = tmp_path / "media"
    folder.mkdir()
    journal_after_crash(folder, events=60)
    if not shm:  # copied without it, or never made: SQLite cannot make one on read-only media
        (folder / "journal.sqlite3-shm").unlink()
    expected = _as_read_where_writable(folder, tmp_path)
    assert expected[0][0] == 0 and expected[1][0] == 0
    exported = [json.loads(line) for line in expected[1][1].splitlines()]
    assert sum(1 for line in exported if "t" in line and "event" not in line) == 60  # the -wal's game, whole
    before = _files(folder)
    assert [(r.returncode, r.stdout, r.stderr) for r in _read(folder, read_only_mount=True)] == expected
    assert _files(folder) == before


def test_a_wal_whose_shm_cannot_be_opened_or_made_is_still_read_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    # What read-only media does to SQLite, for any user, root included: the -shm can be neither
    # opened nor created (SQLite opens it with O_NOFOLLOW, so a dangling link is ELOOP either way).
    folder = tmp_path / "journal"
    folder.mkdir()
    journal_after_crash(folder, events=60)
    expected = _as_read_where_writable(folder, tmp_path)
    (folder / "journal.sqlite3-shm").unlink()
    (folder / "journal.sqlite3-shm").symlink_to(tmp_path / "nowhere" / "shm")
    before = _files(folder)
    assert [(r.returncode, r.stdout, r.stderr) for r in _read(folder)] == expected
    assert _files(folder) == before and not (tmp_path / "nowhere").exists()


def test_a_wal_that_cannot_be_read_at_all_is_one_line_saying_what_to_do(tmp_path: Path) -> None:
    journal_after_crash(tmp_path, events=60)
    wal = tmp_path / "journal.sqlite3-wal"
    wal.unlink()
    wal.mkdir()  # there, with a size, and no file SQLite can open
    (wal / "frames").write_bytes(b"x")
    status, out, err = cli("games", "--data-dir", str(tmp_path))
    assert status == 2 and out == "" and len(err.splitlines()) == 1
    assert "its -wal holds events not yet in the main file" in err and "copy the folder" in err


def test_a_writer_at_work_is_named_not_read_around_its_index(tmp_path: Path) -> None:
    from referee.live.journal import JournalError, _read_wal_without_shm

    journal_after_crash(tmp_path, events=10)
    path = tmp_path / "journal.sqlite3"
    with (
        Journal.open(tmp_path),  # holds the writer's lock, as `referee run` does
        pytest.raises(JournalError, match=rf"referee PID {os.getpid()} writes it"),
    ):
        _read_wal_without_shm(path, path.as_uri())
