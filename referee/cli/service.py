"""The service's commands: `referee run`, `referee games`, `referee export GAME`."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import Any, TextIO

from referee.errors import UserError
from referee.live.clip_store import export_clips
from referee.live.journal import FILE_NAME, Journal
from referee.live.replay import export

EXIT_CAMERA_LOST = 3  # systemd restarts the service on this one; the journal resumes the game


def cmd_run(args: argparse.Namespace, out: TextIO) -> int:
    """The table service: judges until the game is won (a script) or it is stopped (the camera)."""
    # numpy, cv2 and gpiozero: for `run` only, not at every command's start.
    from hardware.frames import CameraLost
    from referee.live.service import RunSettings, run_service

    settings = RunSettings(args.config, args.lays_from, args.at_once, args.new_game, args.host)
    try:
        return run_service(settings, out)
    except CameraLost as e:
        print(f"{e}: the game stays open in the journal and resumes when the camera is back", file=sys.stderr)
        return EXIT_CAMERA_LOST


def _journal(args: argparse.Namespace) -> Any:
    from referee.live.config import default_data_dir, load_config  # cv2 (the camera's profile): only here

    if args.data_dir:
        folder = Path(args.data_dir)
    elif getattr(args, "demo", False):
        folder = default_data_dir() / "demo"  # where `referee demo` keeps its own journal
    elif args.config:
        folder = load_config(args.config).data_dir
    else:
        folder = default_data_dir()
    if not (folder / FILE_NAME).is_file():
        hint = ""
        mine = not args.data_dir and not args.config and not getattr(args, "demo", False)
        if mine and (folder / "demo" / FILE_NAME).is_file():
            hint = "; the demo's games: --demo"
        raise UserError(
            f"{folder / FILE_NAME}: no journal here (no game has been played with this data dir{hint})"
        )
    # Read-only: nothing is written or created, so these work on read-only media, on a full
    # disk, and while `referee run` writes the same journal.
    try:
        return Journal.open(folder, readonly=True)
    except UnicodeDecodeError:  # SQLite's message about a damaged file, itself damaged
        raise UserError(f"{folder / FILE_NAME}: cannot open the journal: the file is damaged") from None


def _damage(journal: Any) -> int:
    """After what could be read was printed: the journal's loss on one line, exit 2."""
    if journal.damage is None:
        return 0
    print(journal.damage, file=sys.stderr)
    return 2


@contextlib.contextmanager
def _damaged_lines(journal: Any) -> Iterator[None]:
    """A journal line that is not what the referee wrote (bad JSON, a field missing) as one
    line naming the journal, not a traceback. The reading itself is the journal's."""
    try:
        yield
    except (ValueError, KeyError, TypeError, IndexError, AttributeError, RecursionError) as e:
        if isinstance(e, UserError):
            raise
        why = str(e) if isinstance(e, ValueError) and str(e) else f"{type(e).__name__}: {e}"
        raise UserError(f"{journal.path}: a damaged entry: {why}") from None


def cmd_games(args: argparse.Namespace, out: TextIO) -> int:
    """Every game in the journal, one line each (JSON with --json)."""
    with _journal(args) as journal, _damaged_lines(journal):
        lays = journal.lays()
        # All checked before any is printed.
        lines = [_game_line(g, args.json, lays.get(g.id, 0)) for g in journal.games()]
        damage = journal.damage
    for line in lines:
        out.write(line + "\n")
    if not lines and not args.json:
        out.write("no games yet\n")
    if damage is not None:
        out.flush()
        print(damage, file=sys.stderr)
        return 2
    return 0


def _game_line(g: Any, as_json: bool, lays: int = 0, tz: tzinfo | None = None) -> str:
    """One game: when it started (local time: `tz`, or this machine's), how long it lasted
    (wall clock), its lays, and how it ended."""
    players = g.spec["game"]["players"]
    seconds = _duration_s(g.started, g.ended)
    if as_json:
        row = {
            "game": g.id,
            "started": g.started,
            "ended": g.ended,
            "status": g.status,
            "players": players,
            "rules": g.spec["game"].get("rules", "celtic"),
            "events": g.events,
            "lays": lays,
            "duration_s": seconds,
            "winner": g.winner,
            "source": g.source,
        }
        return json.dumps(row)
    result = g.status if g.winner is None else f"won by {players[g.winner]}"
    names = ", ".join(players)
    took = "-" if seconds is None else _duration_text(seconds)
    return (
        f"{g.id:>4}  {_local_time(g.started, tz)}  {took:>8}  {lays:>5} lays  {result:<16} {names}  "
        f"({g.source or '-'})"
    )


def _stamp(text: str | None) -> datetime | None:
    """A journal time (ISO 8601, UTC), or None when it is none or not one."""
    if not text:
        return None
    try:
        stamp = datetime.fromisoformat(text)
    except ValueError:
        return None
    return stamp if stamp.tzinfo is not None else stamp.replace(tzinfo=UTC)


def _local_time(text: str, tz: tzinfo | None = None) -> str:
    stamp = _stamp(text)
    return text if stamp is None else stamp.astimezone(tz).strftime("%Y-%m-%d %H:%M")


def _duration_s(started: str, ended: str | None) -> int | None:
    start, end = _stamp(started), _stamp(ended)
    return None if start is None or end is None else max(0, round((end - start).total_seconds()))


def _duration_text(seconds: int) -> str:
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}:{secs:02d}"


def cmd_export(args: argparse.Namespace, out: TextIO) -> int:
    """A game's table script with its rulings after each event: `referee adjudicate` replays it."""
    with _journal(args) as journal, _damaged_lines(journal):
        game = journal.game(args.game)
        if game is None:
            known = ", ".join(str(g.id) for g in journal.games()) or "none"
            raise UserError(f"{journal.path}: no game {args.game} (games: {known})")
        if getattr(args, "clips", None) is not None:
            return _export_clips(args, journal, game, out)
        for line in export(game, journal.events(game.id)):
            out.write(json.dumps(line) + "\n")
        out.flush()
        return _damage(journal)


def _export_clips(args: argparse.Namespace, journal: Any, game: Any, out: TextIO) -> int:
    """`export GAME --clips DIR`: the game's replay clips, their presses from the journal."""
    root = journal.path.parent / "clips"
    if args.config:
        from referee.live.config import load_config  # cv2, as above

        root = load_config(args.config).clips_dir
    lines = [e.line for e in journal.events(game.id)]
    dest = Path(args.clips)
    clips, frames = export_clips(root, game.id, game.spec["game"]["players"], lines, dest)
    out.write(f"game {game.id}: {clips} replay clips, {frames} frames, written to {dest} (index.json)\n")
    out.flush()
    return _damage(journal)


def _where(p: argparse.ArgumentParser) -> None:
    group = p.add_mutually_exclusive_group()
    group.add_argument("--config", metavar="FILE", help="the config (its data_dir holds the journal)")
    group.add_argument("--data-dir", metavar="DIR", help="the folder holding the journal")
    group.add_argument("--demo", action="store_true", help="the journal of `referee demo`'s games")


def add_commands(sub: Any) -> None:
    p = sub.add_parser(
        "run",
        help="the table service: camera or script, buttons, rulings, journal",
        description="Judge a live table: lays from the camera (or a rehearsal script), snaps from the "
        "buttons; every event is journaled before its rulings are announced, and an interrupted game "
        "resumes from the journal.",
    )
    p.add_argument("--config", required=True, metavar="FILE", help="the service's config (TOML)")
    p.add_argument(
        "--lays-from",
        metavar="FILE|-",
        help="rehearse without a camera: lays (and any snaps and waits) from a table script",
    )
    p.add_argument(
        "--at-once",
        action="store_true",
        help="judge the --lays-from script at once on virtual time, as `referee adjudicate` does",
    )
    p.add_argument("--new-game", action="store_true", help="abandon the open game (if any) and start anew")
    p.add_argument(
        "--listen",
        "--host",
        dest="host",
        metavar="ADDRESS",
        help="where the kiosk page listens: 0.0.0.0 lets phones on the network watch (default: the "
        "config's [kiosk] listen, 127.0.0.1: this machine only)",
    )
    p.set_defaults(run=cmd_run, stoppable=True)

    p = sub.add_parser("games", help="list the games in the journal", description="List the journal's games.")
    _where(p)
    p.add_argument("--json", action="store_true", help="one JSON object per game")
    p.set_defaults(run=cmd_games)

    p = sub.add_parser(
        "export",
        help="print a game as a table script with its rulings",
        description="Print a journaled game as a table script, each event's rulings after it; "
        "`referee adjudicate` skips the ruling lines and rules again, so the two can be compared.",
    )
    p.add_argument("game", type=int, metavar="GAME", help="the game's number (see `referee games`)")
    p.add_argument(
        "--clips",
        metavar="DIR",
        help="instead, write the game's replay clips into DIR (new or empty): each clip's frames as "
        "JPEG and an index.json of their times, rulings and the journal's presses",
    )
    _where(p)
    p.set_defaults(run=cmd_export)
