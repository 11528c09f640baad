"""The journal: every game's input events in SQLite, written before their rulings are announced.

The engine is pure, so a game is its `game` line plus the events it judged, in
order: replaying them rebuilds the table exactly, and the same future events
give the same future rulings. The journal keeps just that, one committed row per
event (WAL, synchronous=FULL: a row that was committed survives a power cut), so
after a crash `referee run` replays the open game and carries on.

Each event row keeps its table-script line and, for events read from a script
(`--lays-from`), the script's line number (`mark`), so a rehearsal resumes from
the line after the last one judged. Timer waits the live loop fires are events
too: without them a replay could not know when a claim window closed.

Three files sit next to `journal.sqlite3` (and SQLite's own `-wal` and `-shm`):

- `journal.sqlite3.lock`: one writer per journal. The writer holds an flock on it for
  its life and writes its PID there; the kernel drops the lock when the process dies,
  so a SIGKILL never leaves a stale one. Readers (`games`, `export`) take no lock.
- `journal.sqlite3.last`: what the writer last committed (the game, its event count
  and the last event's checksum) and how far that game's rulings were told. SQLite
  cannot tell a `-wal` deleted or damaged after a crash from one that never held
  anything: it silently reads the older main file. This record can: a journal that
  holds less than it says is named, with what was lost, and never used as if whole.
  It is rewritten in place at each commit, without an fsync of its own (a power cut
  may leave it behind the journal, which weakens the check but never raises it falsely).
- every row carries a CRC-32 of its values (`sum`), and each ended game its event
  count, so a bit flipped in the file is found and named rather than read as a
  different game.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import io
import json
import os
import sqlite3
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from referee.errors import UserError

FILE_NAME = "journal.sqlite3"
LOCK_SUFFIX = ".lock"
LAST_SUFFIX = ".last"
SCHEMA_VERSION = 2
OPEN, WON, STOPPED, ABANDONED = "open", "won", "stopped", "abandoned"
LAST_SIZE = 160  # the record's fixed size: rewritten in place, one pwrite

_SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY,
    spec TEXT NOT NULL,              -- the game line, as JSON
    started TEXT NOT NULL,           -- wall-clock time, for people (the game's own times are t)
    ended TEXT,
    status TEXT NOT NULL CHECK (status IN ('open', 'won', 'stopped', 'abandoned')),
    winner INTEGER,
    source TEXT,                     -- where the lays came from: camera, a script's path
    events INTEGER,                  -- how many events it has, once it has ended (v2)
    sum INTEGER                      -- CRC-32 of the row's values (v2)
);
CREATE TABLE IF NOT EXISTS events (
    game INTEGER NOT NULL REFERENCES games (id),
    seq INTEGER NOT NULL,            -- 0, 1, 2... in the order the engine judged them
    line TEXT NOT NULL,              -- the event's table-script line
    mark INTEGER,                    -- the script line it came from, if it came from one
    undone INTEGER NOT NULL DEFAULT 0,  -- 1: the host undid it (kept, but no longer judged)
    sum INTEGER,                     -- CRC-32 of the row's values (v2)
    PRIMARY KEY (game, seq)
) WITHOUT ROWID;
"""
_GAME_COLUMNS = "id, spec, started, ended, status, winner, source, events"
# The host's rules for the next new game (house rules from the kiosk), newest last. A table
# added without a new schema version: a referee that does not know it reads the rest as before.
_NEXT_GAME_SCHEMA = """
CREATE TABLE IF NOT EXISTS next_game (
    id INTEGER PRIMARY KEY,
    set_at TEXT NOT NULL,            -- wall-clock time, for people
    during INTEGER,                  -- the game being played when the host set it
    spec TEXT NOT NULL,              -- the next game's line, as JSON
    base TEXT NOT NULL,              -- the config's game line it was set over, as JSON
    sum INTEGER NOT NULL             -- CRC-32 of the row's values
);
"""


MAX_VALUE_BYTES = 1 << 20  # the longest text SQLite hands over: a journal's value is far shorter


class JournalError(UserError):
    """The journal cannot be opened or written; str() is one line naming the file."""


class JournalFull(JournalError):
    """The disk is full: no new game is started, and the current one cannot go on safely."""


class JournalBusy(JournalError):
    """Another process writes this journal (one writer per journal)."""


class JournalDamaged(JournalError):
    """The file holds less than was committed, or a row that is not what was written."""


@dataclass(frozen=True)
class GameRecord:
    id: int
    spec: dict[str, Any]  # the game line
    started: str
    ended: str | None
    status: str
    winner: int | None
    source: str | None
    events: int
    last_t: int | None
    last_mark: int | None


@dataclass(frozen=True)
class EventRecord:
    seq: int
    line: dict[str, Any]
    mark: int | None


@dataclass(frozen=True)
class Last:
    """The sidecar record: the last game written, its event count, the last event's sum,
    and how far its rulings were told: through the event `told_seq` (the first `told_count`
    of its rulings; -1 none yet), or all of them, its end's included (`told_all`)."""

    game: int
    events: int
    last_sum: int
    told_seq: int = -1
    told_count: int = 0
    told_all: bool = False

    def encode(self) -> bytes:
        body = json.dumps(
            [self.game, self.events, self.last_sum, self.told_seq, self.told_count, self.told_all]
        )
        text = json.dumps({"last": body, "sum": zlib.crc32(body.encode())})
        return text.encode().ljust(LAST_SIZE - 1) + b"\n"

    @staticmethod
    def decode(data: bytes) -> Last | None:
        """The record, or None when the bytes are not one whole record (say nothing, prove nothing)."""
        try:
            outer = json.loads(data.split(b"\n", 1)[0])
            body = outer["last"]
            if zlib.crc32(body.encode()) != outer["sum"]:
                return None
            game, events, last_sum, told_seq, told_count, told_all = json.loads(body)
            return Last(int(game), int(events), int(last_sum), int(told_seq), int(told_count), bool(told_all))
        except (ValueError, TypeError, KeyError, AttributeError):
            return None


def row_sum(*values: Any) -> int:
    """A row's checksum: its values with their types, so a flipped type byte shows too."""
    text = "\x1f".join("-" if v is None else f"{type(v).__name__[0]}{v}" for v in values)
    return zlib.crc32(text.encode("utf-8", "surrogatepass"))


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def loss(last: Last | None, games: dict[int, tuple[int, int | None]]) -> str | None:
    """What the journal lost, by the sidecar record, or None. `games`: each game's id -> (its
    event rows, the sum of the row `last.events - 1` if it has it). Pure."""
    if last is None:
        return None
    if last.game not in games:
        held = f"holds no game {last.game}" if games else "holds no game at all"
        return f"game {last.game} had {last.events} events committed, but the journal {held}"
    count, sum_at = games[last.game]
    if count < last.events:
        lost = f"event {count}" if last.events - count == 1 else f"events {count} to {last.events - 1}"
        return (
            f"game {last.game} had {last.events} events committed, but the journal holds {count}: "
            f"{lost} lost, the {count} before kept"
        )
    if last.events and sum_at != last.last_sum:
        return f"game {last.game}'s event {last.events - 1} is not the one committed"
    return None


class Journal:
    """One SQLite file in the data directory. Used from one thread (the table loop's)."""

    def __init__(
        self,
        path: Path,
        connection: sqlite3.Connection,
        lock: io.FileIO | None = None,
        last: Last | None = None,
        checked: bool = False,
    ) -> None:
        self.path = path
        self._db = connection
        # No value the referee writes is near this (a script line is at most 64 KiB); a damaged
        # record's header can claim hundreds of MB, and reading it took the process to 1.2 GB.
        connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
        self._lock = lock  # None: read-only
        self._last = last
        self._checked = checked  # rows carry sums (schema v2)
        self._last_fd: int | None = None
        self.damage: str | None = None  # what a read-only open found lost (the writer refuses)

    @classmethod
    def open(cls, data_dir: str | Path, readonly: bool = False, accept_loss: bool = False) -> Journal:
        """The journal in `data_dir`: the one writer's (locked, made if missing), or, with
        `readonly`, a reader's (no lock, no write, nothing created: works on read-only media
        and a full disk). A writer refuses a journal that lost committed events with
        `JournalDamaged`, unless `accept_loss` (then `damage` says what was lost)."""
        folder = Path(data_dir)
        path = folder / FILE_NAME
        if readonly:
            return cls._open_readonly(path)
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise JournalError(f"{path}: cannot open the journal: {_why(e)}") from None
        lock = _lock(path)
        try:
            return cls._open_writer(path, lock, accept_loss)
        except BaseException:
            lock.close()
            raise

    @classmethod
    def _open_writer(cls, path: Path, lock: io.FileIO, accept_loss: bool) -> Journal:
        last = _read_last(path)
        _refuse_truncated(path, last)
        try:
            db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as e:
            raise JournalError(f"{path}: cannot open the journal: {_why(e)}") from None
        journal = cls(path, db, lock, last)
        try:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            # Compared with the record before anything is written: a journal that lost its
            # -wal must not be "repaired" into a smaller one.
            loss = journal._verify(version)
            if loss is not None:
                if not accept_loss:
                    raise JournalDamaged(loss + ": --new-game goes on without them")
                journal.damage = loss
            # WAL: a commit is one append and one fsync; FULL: that fsync happens at every
            # commit, so an event acknowledged is an event on the disk.
            mode = db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if mode != "wal":
                raise sqlite3.OperationalError(f"cannot use write-ahead logging here (got {mode})")
            db.execute("PRAGMA synchronous=FULL")
            db.execute("PRAGMA foreign_keys=ON")
            _migrate(db, version)
            journal._checked = True
            journal._last_fd = os.open(path.with_name(FILE_NAME + LAST_SUFFIX), os.O_RDWR | os.O_CREAT, 0o644)
            if journal.damage is not None:
                journal._last = None  # what was lost is said once; the next write starts afresh
        except sqlite3.Error as e:
            journal.close()
            raise _error(path, e, "cannot open the journal") from None
        except BaseException:
            journal.close()
            raise
        return journal

    def _verify(self, version: int) -> str | None:
        """The journal as found on opening: of a version this referee reads, whole by SQLite's
        quick check, and holding what the record says was committed; the loss's line, if any."""
        if version > SCHEMA_VERSION:
            raise sqlite3.DatabaseError(
                f"written by a newer referee (journal version {version}, this one reads {SCHEMA_VERSION})"
            )
        _quick_check(self._db, self.path)
        self._checked = _has_sums(self._db)
        lost = self._loss()
        return None if lost is None else _loss_line(self.path, lost)

    @classmethod
    def _open_readonly(cls, path: Path) -> Journal:
        last = _read_last(path)
        try:
            size = path.stat().st_size
        except OSError as e:
            raise JournalError(f"{path}: cannot read the journal: {_why(e)}") from None
        wal = _size(path.with_name(FILE_NAME + "-wal"))
        if size == 0:
            _refuse_truncated(path, last)
        # A -wal with frames needs SQLite's shared index (-shm) to be read; with none, the main
        # file is all there is, and `immutable` reads it without creating or locking anything.
        uri = path.resolve().as_uri() + ("?mode=ro" if wal else "?mode=ro&immutable=1")
        try:
            db, version = _connect_readonly(uri)
        except sqlite3.Error as e:
            if not (wal and _cannot_open(e)):
                raise _error(path, e, "cannot read the journal") from None
            # Read-only media after a power cut: the -wal is there, but SQLite can neither
            # open its -shm nor make one. Its index of the -wal is then built in this
            # process's memory instead (no -shm at all: "exclusive" locking, which the
            # `unix-none` VFS grants without taking a lock the read-only file cannot take).
            # That is safe only with no writer at work, and a writer needs a -shm it can write.
            db, version = _read_wal_without_shm(path, uri)
        journal = cls(path, db, None, last)
        try:
            journal.damage = journal._verify(version)
        except sqlite3.Error as e:
            journal.close()
            raise _error(path, e, "cannot read the journal") from None
        except BaseException:
            journal.close()
            raise
        return journal

    def close(self) -> None:
        self._db.close()
        if self._last_fd is not None:
            os.close(self._last_fd)
            self._last_fd = None
        if self._lock is not None:
            self._lock.close()  # the lock goes with the file
            self._lock = None

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # Writing ---------------------------------------------------------------------------------

    def new_game(self, spec: dict[str, Any], source: str | None = None) -> int:
        """Start a game (any game still open is left as abandoned). Refused on a full disk."""
        with self._write("cannot start a new game"):
            self._db.execute("BEGIN IMMEDIATE")
            for (gid,) in self._db.execute("SELECT id FROM games WHERE status = ?", (OPEN,)).fetchall():
                self._set_game(gid, status=ABANDONED, ended=_now())
            game = (self._db.execute("SELECT max(id) FROM games").fetchone()[0] or 0) + 1
            row = (game, json.dumps(spec), _now(), None, OPEN, None, source, None)
            self._db.execute(
                f"INSERT INTO games ({_GAME_COLUMNS}, sum) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (*row, row_sum(*row)),
            )
            self._db.execute("COMMIT")
        self._write_last(Last(game, 0, 0))
        return game

    def append(self, game: int, seq: int, line: dict[str, Any], mark: int | None = None) -> None:
        """One judged event, committed (and on the disk) when this returns."""
        text = json.dumps(line)
        total = row_sum(game, seq, text, mark, 0)
        with self._write("cannot record an event"):
            self._db.execute(
                "INSERT INTO events (game, seq, line, mark, sum) VALUES (?, ?, ?, ?, ?)",
                (game, seq, text, mark, total),
            )
        last = self._last
        told = (last.told_seq, last.told_count) if last is not None and last.game == game else (-1, 0)
        self._write_last(Last(game, seq + 1, total, *told))

    def undo(self, game: int, seqs: list[int]) -> None:
        """The host undid these events: kept in the file, left out of every replay."""
        with self._write("cannot undo"):
            self._db.execute("BEGIN IMMEDIATE")
            changed = []
            for seq in seqs:
                row = self._db.execute(
                    "SELECT line, mark FROM events WHERE game = ? AND seq = ?", (game, seq)
                ).fetchone()
                if row is not None:
                    changed.append((row_sum(game, seq, row[0], row[1], 1), game, seq))
            self._db.executemany("UPDATE events SET undone = 1, sum = ? WHERE game = ? AND seq = ?", changed)
            self._db.execute("COMMIT")
        last = self._last
        if last is not None and last.game == game:
            for total, _, seq in changed:
                if seq == last.events - 1:
                    self._write_last(Last(game, last.events, total, last.told_seq, last.told_count))

    def next_seq(self, game: int) -> int:
        """The number the game's next event gets (undone events keep theirs)."""
        (last,) = self._read("SELECT max(seq) FROM events WHERE game = ?", (game,))[0]
        return 0 if last is None else last + 1

    def end_game(self, game: int, status: str, winner: int | None = None) -> None:
        with self._write("cannot close the game"):
            self._db.execute("BEGIN IMMEDIATE")
            self._set_game(game, status=status, winner=winner, ended=_now())
            self._db.execute("COMMIT")

    def set_next_game(self, spec: dict[str, Any], base: dict[str, Any], during: int | None = None) -> None:
        """The host's game line for the next new game (rules, options, players), set over the
        config's own (`base`) while game `during` was played; committed when this returns."""
        row = (_now(), during, json.dumps(spec), json.dumps(base))
        with self._write("cannot keep the next game's rules"):
            self._db.execute(
                "INSERT INTO next_game (set_at, during, spec, base, sum) VALUES (?, ?, ?, ?, ?)",
                (*row, row_sum(*row)),
            )

    def next_game(self, base: dict[str, Any]) -> dict[str, Any] | None:
        """The game line the host last set for the next new game, if it was set over this same
        config game line (`base`): a config changed since then is the operator's newer word.
        None when there is none (or an older journal, which has no such table)."""
        if not _has_table(self._db, "next_game"):
            return None
        rows = self._read("SELECT set_at, during, spec, base, sum FROM next_game ORDER BY id DESC LIMIT 1")
        if not rows:
            return None
        set_at, during, spec, given_base, total = rows[0]
        if total != row_sum(set_at, during, spec, given_base):
            raise self._damaged("the next game's rules (a row is not what was written)")
        if self._json(given_base, "the next game's rules") != base:
            return None
        return self._json(spec, "the next game's rules")

    def told(self, game: int, seq: int, count: int) -> None:
        """The first `count` rulings of event `seq` have been announced (printed, shown): a
        restart announces again only what comes after. A note in the sidecar record, not a
        commit: losing it costs a ruling announced twice, never one lost."""
        last = self._last
        if last is not None and last.game == game:
            self._write_last(Last(game, last.events, last.last_sum, seq, count))

    def told_all(self, game: int) -> None:
        """Every ruling of `game`, its end's included, has been announced."""
        last = self._last
        if last is not None and last.game == game:
            self._write_last(Last(game, last.events, last.last_sum, last.events - 1, 1 << 30, True))

    def last_told(self, game: int) -> tuple[int, int, bool] | None:
        """How far `game`'s rulings were announced before this start: (seq, rulings of it,
        all), or None when the record does not say (an older journal, or another game)."""
        last = self._last
        if last is None or last.game != game:
            return None
        return last.told_seq, last.told_count, last.told_all

    def _set_game(self, game: int, **changes: Any) -> None:
        """Change a game's row in the open transaction, its event count and sum made again."""
        row = self._db.execute(f"SELECT {_GAME_COLUMNS} FROM games WHERE id = ?", (game,)).fetchone()
        if row is None:
            return
        values = dict(zip(_GAME_COLUMNS.split(", "), row, strict=True)) | changes
        values["events"] = None
        if values["status"] != OPEN:
            values["events"] = self._db.execute(
                "SELECT count(*) FROM events WHERE game = ?", (game,)
            ).fetchone()[0]
        new = tuple(values.values())
        self._db.execute(
            "UPDATE games SET ended = ?, status = ?, winner = ?, events = ?, sum = ? WHERE id = ?",
            (values["ended"], values["status"], values["winner"], values["events"], row_sum(*new), game),
        )

    def _write_last(self, last: Last) -> None:
        self._last = last
        if self._last_fd is None:
            return
        with contextlib.suppress(OSError):  # a full disk: the journal says so at its next write
            os.pwrite(self._last_fd, last.encode(), 0)

    def _write(self, what: str) -> _Writing:
        if self._lock is None:
            raise JournalError(f"{self.path}: {what}: the journal was opened read-only")
        return _Writing(self, what)

    # Reading ---------------------------------------------------------------------------------

    def games(self) -> list[GameRecord]:
        if not _has_table(self._db, "games"):
            return []  # a new (or empty) file: no game yet
        if self._checked:
            rows = self._read(
                f"""SELECT {_GAME_COLUMNS}, sum, (SELECT count(*) FROM events e WHERE e.game = g.id)
                    FROM games g ORDER BY id"""
            )
            for n, row in enumerate(rows, 1):
                self._check_game(n, row)
        rows = self._read(
            """SELECT g.id, g.spec, g.started, g.ended, g.status, g.winner, g.source,
                      count(e.seq), max(e.seq), max(e.mark)
               FROM games g LEFT JOIN events e ON e.game = g.id AND e.undone = 0
               GROUP BY g.id ORDER BY g.id"""
        )
        return [self._record(row) for row in rows]

    def _check_game(self, n: int, row: tuple[Any, ...]) -> None:
        *values, total, count = row
        gid, status, events = values[0], values[4], values[7]
        if gid != n:
            raise self._damaged(f"game {n} is missing from the games (the next is {gid})")
        if total != row_sum(*values):
            raise self._damaged(f"game {gid}'s row is not what was written (its checksum differs)")
        if status != OPEN and events is not None and events != count:
            raise self._damaged(f"game {gid} ended with {events} events, but the journal holds {count}")

    def game(self, game: int) -> GameRecord | None:
        return next((g for g in self.games() if g.id == game), None)

    def lays(self) -> dict[int, int]:
        """Per game, the lay events still standing (`referee games` shows them). Each row is
        checked against its sum, as `events` checks it: a damaged one is named (JournalDamaged),
        never counted as something else. The lines are not parsed: a lay line holds `"lay":`."""
        if not _has_table(self._db, "events"):
            return {}
        counts: dict[int, int] = {}
        if not self._checked:  # an older journal: no sums to check
            rows = self._read(
                """SELECT game, count(*) FROM events WHERE undone = 0 AND instr(line, '"lay":') > 0
                   GROUP BY game"""
            )
            return {game: n for game, n in rows}
        for game, seq, line, mark, undone, total in self._read(
            "SELECT game, seq, line, mark, undone, sum FROM events ORDER BY game, seq"
        ):
            if total != row_sum(game, seq, line, mark, undone):
                where = f"game {game}, event {seq}"
                raise self._damaged(f"{where} is not what was written (its checksum differs)")
            if not undone and isinstance(line, str) and '"lay":' in line:
                counts[game] = counts.get(game, 0) + 1
        return counts

    def open_game(self) -> GameRecord | None:
        """The game a crash or a power cut interrupted, if any."""
        return next((g for g in reversed(self.games()) if g.status == OPEN), None)

    def events(self, game: int) -> Iterator[EventRecord]:
        if not _has_table(self._db, "events"):
            return
        if not self._checked:
            for seq, line, mark in self._read(
                "SELECT seq, line, mark FROM events WHERE game = ? AND undone = 0 ORDER BY seq", (game,)
            ):
                yield EventRecord(seq, self._json(line, f"game {game}, event {seq}"), mark)
            return
        rows = self._read(
            "SELECT seq, line, mark, undone, sum FROM events WHERE game = ? ORDER BY seq", (game,)
        )
        for n, (seq, line, mark, undone, total) in enumerate(rows):
            where = f"game {game}, event {n}"
            if seq != n:
                raise self._damaged(f"{where} is missing (the next is {seq})")
            if total != row_sum(game, seq, line, mark, undone):
                raise self._damaged(f"{where} is not what was written (its checksum differs)")
            if not undone:
                yield EventRecord(seq, self._json(line, where), mark)

    def _record(self, row: tuple[Any, ...]) -> GameRecord:
        gid, spec, started, ended, status, winner, source, count, last_seq, last_mark = row
        last_t = None
        if last_seq is not None:
            (line,) = self._read("SELECT line FROM events WHERE game = ? AND seq = ?", (gid, last_seq))[0]
            event = self._json(line, f"game {gid}, event {last_seq}")
            last_t = event.get("t") if isinstance(event, dict) else None
        return GameRecord(
            gid,
            self._json(spec, f"game {gid}"),
            started,
            ended,
            status,
            winner,
            source,
            count,
            last_t,
            last_mark,
        )

    def _json(self, text: Any, where: str) -> Any:
        try:
            value = json.loads(text)
        except (TypeError, ValueError):
            raise self._damaged(f"{where} is not a JSON line") from None
        if not isinstance(value, dict):
            raise self._damaged(f"{where} is not a JSON object")
        return value

    def _damaged(self, what: str) -> JournalDamaged:
        return JournalDamaged(
            f"{self.path}: the journal is damaged: {what} (move it aside to start a new one)"
        )

    def _loss(self) -> str | None:
        last = self._last
        if last is None:
            return None
        if not _has_table(self._db, "games"):
            return loss(last, {})
        held: dict[int, tuple[int, int | None]] = {}
        for (gid,) in self._read("SELECT id FROM games WHERE id = ?", (last.game,)):
            (count,) = self._read("SELECT count(*) FROM events WHERE game = ?", (gid,))[0]
            sum_at = None
            if self._checked and last.events:
                rows = self._read("SELECT sum FROM events WHERE game = ? AND seq = ?", (gid, last.events - 1))
                sum_at = rows[0][0] if rows else None
            held[gid] = (count, sum_at if self._checked else last.last_sum)
        return loss(last, held)

    def _read(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        try:
            return self._db.execute(sql, params).fetchall()
        except sqlite3.Error as e:
            raise _error(self.path, e, "cannot read the journal") from None


class _Writing:
    """Turns SQLite's errors inside a write into one-line JournalErrors (a full disk its own)."""

    def __init__(self, journal: Journal, what: str) -> None:
        self.journal = journal
        self.what = what

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: object) -> bool:
        if error is None or not isinstance(error, sqlite3.Error):
            return False
        db = self.journal._db
        if db.in_transaction:
            with contextlib.suppress(sqlite3.Error):  # the error being reported is the one that matters
                db.execute("ROLLBACK")
        raise _error(self.journal.path, error, self.what) from None


def _lock(path: Path) -> io.FileIO:
    """The journal's writer lock, held until the returned file is closed (or the process ends)."""
    name = path.with_name(FILE_NAME + LOCK_SUFFIX)
    try:
        fd = os.open(name, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as e:
        raise JournalError(f"{path}: cannot open the journal: {name.name}: {_why(e)}") from None
    lock = io.FileIO(fd, "r+")
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        holder = _holder(lock)
        lock.close()
        if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            raise JournalBusy(
                f"{path}: in use by another referee (PID {holder}): one writer per journal; "
                "stop that one first, or give this one another data dir"
            ) from None
        raise JournalError(f"{path}: cannot lock the journal: {_why(e)}") from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return lock


def _holder(lock: io.FileIO) -> str:
    try:
        text = os.pread(lock.fileno(), 32, 0).decode("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return "unknown"
    return text if text.isdigit() else "unknown"


def _connect_readonly(uri: str, exclusive: bool = False) -> tuple[sqlite3.Connection, int]:
    """A read-only connection and the journal's version (the first read, when SQLite opens
    the -wal and its index)."""
    db = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    try:
        if exclusive:
            db.execute("PRAGMA locking_mode=EXCLUSIVE")
        return db, db.execute("PRAGMA user_version").fetchone()[0]
    except BaseException:
        db.close()
        raise


def _cannot_open(error: sqlite3.Error) -> bool:
    code = getattr(error, "sqlite_errorcode", 0) & 0xFF
    return code in (sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_IOERR) or any(
        w in str(error) for w in ("unable to open", "disk I/O", "readonly")
    )


def _read_wal_without_shm(path: Path, uri: str) -> tuple[sqlite3.Connection, int]:
    """The journal and its -wal read with SQLite's index of the -wal in memory, not in a -shm;
    or one line saying why not, and what to do."""
    holder = _writer_at_work(path)
    if holder is not None:
        raise JournalError(
            f"{path}: cannot read the journal: referee PID {holder} writes it, and its shared "
            "index (-shm) cannot be opened here: read it as the user the service runs as"
        )
    try:
        return _connect_readonly(uri.replace("?mode=ro", "?mode=ro&vfs=unix-none", 1), exclusive=True)
    except sqlite3.Error as e:
        raise JournalError(
            f"{path}: cannot read the journal: its -wal holds events not yet in the main file, and "
            f"they cannot be read here ({_why(e)}): copy the folder somewhere writable and read that"
        ) from None


def _writer_at_work(path: Path) -> str | None:
    """The PID in the writer's lock file while a writer holds it; None when none does (or
    there is no lock file to ask). Opened read-only, created never, held not at all."""
    try:
        lock = io.FileIO(os.open(path.with_name(FILE_NAME + LOCK_SUFFIX), os.O_RDONLY | os.O_CLOEXEC))
    except OSError:
        return None
    with lock:
        try:
            fcntl.flock(lock.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as e:
            return _holder(lock) if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN) else None
        fcntl.flock(lock.fileno(), fcntl.LOCK_UN)
    return None


def _read_last(path: Path) -> Last | None:
    try:
        with open(path.with_name(FILE_NAME + LAST_SUFFIX), "rb") as f:
            return Last.decode(f.read(LAST_SIZE))
    except OSError:
        return None


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _refuse_truncated(path: Path, last: Last | None) -> None:
    """A main file of 0 bytes is refused when games were committed to it. SQLite would take it
    for a new database, and delete a -wal it finds next to it."""
    if _size(path) != 0 or not path.exists():
        return
    if last is not None:
        raise JournalDamaged(
            _loss_line(path, f"the file is empty (0 bytes), but game {last.game} had {last.events} events")
            + ": move it aside to start a new journal"
        )
    if _size(path.with_name(FILE_NAME + "-wal")):
        raise JournalDamaged(
            f"{path}: the file is empty (0 bytes), but its -wal is not: the file was truncated; "
            "move both aside to start a new journal"
        )


def _loss_line(path: Path, what: str) -> str:
    return (
        f"{path}: the journal lost committed events ({what}; its -wal was deleted or damaged after a crash?)"
    )


def _quick_check(db: sqlite3.Connection, path: Path) -> None:
    problems = [row[0] for row in db.execute("PRAGMA quick_check(3)").fetchall()]
    if problems != ["ok"]:
        what = "; ".join(" ".join(str(p).split()) for p in problems)  # one line, as SQLite says it
        raise JournalDamaged(f"{path}: the journal is damaged: {what} (move it aside to start a new one)")


def _has_table(db: sqlite3.Connection, table: str) -> bool:
    return (
        db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone()
        is not None
    )


def _has_sums(db: sqlite3.Connection) -> bool:
    if not _has_table(db, "events"):
        return False
    return any(row[1] == "sum" for row in db.execute("PRAGMA table_info(events)").fetchall())


def _migrate(db: sqlite3.Connection, version: int) -> None:
    """Make the schema this referee writes: new tables, or a version 1 journal given its sums."""
    db.execute("BEGIN IMMEDIATE")
    try:
        if _has_table(db, "games") and not _has_sums(db):
            db.execute("ALTER TABLE games ADD COLUMN events INTEGER")
            db.execute("ALTER TABLE games ADD COLUMN sum INTEGER")
            db.execute("ALTER TABLE events ADD COLUMN sum INTEGER")
            db.execute(
                "UPDATE games SET events = (SELECT count(*) FROM events e WHERE e.game = games.id) "
                "WHERE status != ?",
                (OPEN,),
            )
            rows = db.execute(f"SELECT {_GAME_COLUMNS} FROM games").fetchall()
            db.executemany("UPDATE games SET sum = ? WHERE id = ?", [(row_sum(*r), r[0]) for r in rows])
            rows = db.execute("SELECT game, seq, line, mark, undone FROM events").fetchall()
            db.executemany(
                "UPDATE events SET sum = ? WHERE game = ? AND seq = ?",
                [(row_sum(*r), r[0], r[1]) for r in rows],
            )
        for statement in (_SCHEMA + _NEXT_GAME_SCHEMA).split(";"):
            if statement.strip():
                db.execute(statement)
        if version != SCHEMA_VERSION:
            db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        db.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            db.execute("ROLLBACK")
        raise


def _error(path: Path, error: BaseException, what: str) -> JournalError:
    text = _why(error)
    if isinstance(error, sqlite3.Error) and (
        getattr(error, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL or "disk is full" in text
    ):
        return JournalFull(f"{path}: {what}: the disk is full (free some space and start again)")
    if "too big" in text:  # MAX_VALUE_BYTES: a record's header claims a value no journal holds
        text = "a value longer than the referee ever writes"
    if "not a database" in text or "malformed" in text or "longer than" in text:
        text += " (the file is damaged: move it aside to start a new journal)"
    return JournalError(f"{path}: {what}: {text}")


def _why(error: BaseException) -> str:
    if isinstance(error, OSError):
        return error.strerror or str(error)
    return " ".join(str(error).split())  # one line, whatever SQLite said
