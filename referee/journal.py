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
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .errors import UserError

FILE_NAME = "journal.sqlite3"
SCHEMA_VERSION = 1
OPEN, WON, STOPPED, ABANDONED = "open", "won", "stopped", "abandoned"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY,
    spec TEXT NOT NULL,              -- the game line, as JSON
    started TEXT NOT NULL,           -- wall-clock time, for people (the game's own times are t)
    ended TEXT,
    status TEXT NOT NULL CHECK (status IN ('open', 'won', 'stopped', 'abandoned')),
    winner INTEGER,
    source TEXT                      -- where the lays came from: camera, a script's path
);
CREATE TABLE IF NOT EXISTS events (
    game INTEGER NOT NULL REFERENCES games (id),
    seq INTEGER NOT NULL,            -- 0, 1, 2... in the order the engine judged them
    line TEXT NOT NULL,              -- the event's table-script line
    mark INTEGER,                    -- the script line it came from, if it came from one
    undone INTEGER NOT NULL DEFAULT 0,  -- 1: the host undid it (kept, but no longer judged)
    PRIMARY KEY (game, seq)
) WITHOUT ROWID;
"""


class JournalError(UserError):
    """The journal cannot be opened or written; str() is one line naming the file."""


class JournalFull(JournalError):
    """The disk is full: no new game is started, and the current one cannot go on safely."""


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


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class Journal:
    """One SQLite file in the data directory. Used from one thread (the table loop's)."""

    def __init__(self, path: Path, connection: sqlite3.Connection) -> None:
        self.path = path
        self._db = connection

    @classmethod
    def open(cls, data_dir: str | Path) -> Journal:
        folder = Path(data_dir)
        path = folder / FILE_NAME
        try:
            folder.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        except (OSError, sqlite3.Error) as e:
            raise JournalError(f"{path}: cannot open the journal: {_why(e)}") from None
        try:
            # WAL: a commit is one append and one fsync; FULL: that fsync happens at every
            # commit, so an event acknowledged is an event on the disk.
            mode = db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if mode != "wal":
                raise sqlite3.OperationalError(f"cannot use write-ahead logging here (got {mode})")
            db.execute("PRAGMA synchronous=FULL")
            db.execute("PRAGMA foreign_keys=ON")
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise sqlite3.DatabaseError(
                    f"written by a newer referee (journal version {version}, this one reads {SCHEMA_VERSION})"
                )
            db.executescript(_SCHEMA)
            db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            db.execute("SELECT count(*) FROM games").fetchone()
        except sqlite3.Error as e:
            db.close()
            raise _error(path, e, "cannot open the journal") from None
        return cls(path, db)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # Writing ---------------------------------------------------------------------------------

    def new_game(self, spec: dict[str, Any], source: str | None = None) -> int:
        """Start a game (any game still open is left as abandoned). Refused on a full disk."""
        with self._write("cannot start a new game"):
            self._db.execute("BEGIN IMMEDIATE")
            self._db.execute(
                "UPDATE games SET status = ?, ended = ? WHERE status = ?", (ABANDONED, _now(), OPEN)
            )
            cursor = self._db.execute(
                "INSERT INTO games (spec, started, status, source) VALUES (?, ?, ?, ?)",
                (json.dumps(spec), _now(), OPEN, source),
            )
            self._db.execute("COMMIT")
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def append(self, game: int, seq: int, line: dict[str, Any], mark: int | None = None) -> None:
        """One judged event, committed (and on the disk) when this returns."""
        with self._write("cannot record an event"):
            self._db.execute(
                "INSERT INTO events (game, seq, line, mark) VALUES (?, ?, ?, ?)",
                (game, seq, json.dumps(line), mark),
            )

    def undo(self, game: int, seqs: list[int]) -> None:
        """The host undid these events: kept in the file, left out of every replay."""
        with self._write("cannot undo"):
            self._db.execute("BEGIN IMMEDIATE")
            self._db.executemany(
                "UPDATE events SET undone = 1 WHERE game = ? AND seq = ?", [(game, q) for q in seqs]
            )
            self._db.execute("COMMIT")

    def next_seq(self, game: int) -> int:
        """The number the game's next event gets (undone events keep theirs)."""
        (last,) = self._read("SELECT max(seq) FROM events WHERE game = ?", (game,))[0]
        return 0 if last is None else last + 1

    def end_game(self, game: int, status: str, winner: int | None = None) -> None:
        with self._write("cannot close the game"):
            self._db.execute(
                "UPDATE games SET status = ?, winner = ?, ended = ? WHERE id = ?",
                (status, winner, _now(), game),
            )

    def _write(self, what: str) -> _Writing:
        return _Writing(self, what)

    # Reading ---------------------------------------------------------------------------------

    def games(self) -> list[GameRecord]:
        rows = self._read(
            """SELECT g.id, g.spec, g.started, g.ended, g.status, g.winner, g.source,
                      count(e.seq), max(e.seq), max(e.mark)
               FROM games g LEFT JOIN events e ON e.game = g.id AND e.undone = 0
               GROUP BY g.id ORDER BY g.id"""
        )
        return [self._record(row) for row in rows]

    def game(self, game: int) -> GameRecord | None:
        return next((g for g in self.games() if g.id == game), None)

    def open_game(self) -> GameRecord | None:
        """The game a crash or a power cut interrupted, if any."""
        return next((g for g in reversed(self.games()) if g.status == OPEN), None)

    def events(self, game: int) -> Iterator[EventRecord]:
        for seq, line, mark in self._read(
            "SELECT seq, line, mark FROM events WHERE game = ? AND undone = 0 ORDER BY seq", (game,)
        ):
            yield EventRecord(seq, json.loads(line), mark)

    def _record(self, row: tuple[Any, ...]) -> GameRecord:
        gid, spec, started, ended, status, winner, source, count, last_seq, last_mark = row
        last_t = None
        if last_seq is not None:
            (line,) = self._read("SELECT line FROM events WHERE game = ? AND seq = ?", (gid, last_seq))[0]
            last_t = json.loads(line)["t"]
        return GameRecord(
            gid, json.loads(spec), started, ended, status, winner, source, count, last_t, last_mark
        )

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


def _error(path: Path, error: BaseException, what: str) -> JournalError:
    text = _why(error)
    if isinstance(error, sqlite3.Error) and (
        getattr(error, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL or "disk is full" in text
    ):
        return JournalFull(f"{path}: {what}: the disk is full (free some space and start again)")
    if "not a database" in text or "malformed" in text:
        text += " (the file is damaged: move it aside to start a new journal)"
    return JournalError(f"{path}: {what}: {text}")


def _why(error: BaseException) -> str:
    if isinstance(error, OSError):
        return error.strerror or str(error)
    return str(error)
