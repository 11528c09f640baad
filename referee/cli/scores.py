"""`referee stats`: the night's scores in the terminal (rich), as CSV or as JSON; and the
journal reading the kiosk's night table shares with it (`read_night`, `NightFeed`).

The figures are `scores.py`'s (a pure replay of each journaled game); this module reads the
journal, picks the night's games and prints.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from datetime import datetime
from itertools import pairwise
from pathlib import Path
from typing import Any, TextIO

from referee.errors import UserError
from referee.kiosk.view import BIN_EDGES_MS
from referee.live.journal import FILE_NAME
from referee.live.scores import (
    Night,
    night_json,
    night_start,
    parse_since,
    read_night,
)

from .service import _damaged_lines, _journal

FORMATS = ("table", "csv", "json")
BLOCKS = "·▁▂▃▄▅▆▇█"  # an empty bin is a dot: the axis still shows
CSV_FIGURES = (
    "name",
    "games",
    "won",
    "stacks",
    "by_snap",
    "by_count_out",
    "by_other",
    "wrong_snaps",
    "valid_snaps",
    "dead_heats",
    "median_ms",
    "fastest_us",
    "fastest_game",
    "games_in_a_row",
    "stacks_in_a_row",
)


def cmd_stats(args: argparse.Namespace, out: TextIO) -> int:
    fmt = args.format
    if fmt not in FORMATS:
        raise UserError(f"--format: {fmt!r} is not one of {', '.join(FORMATS)}")
    try:
        since = (
            parse_since(args.since) if args.since is not None else night_start(datetime.now().astimezone())
        )
    except ValueError as e:
        raise UserError(str(e)) from None
    if args.journal is not None:
        args.data_dir = str(_journal_folder(Path(args.journal)))
    with _journal(args) as journal, _damaged_lines(journal):
        table = read_night(journal, since)
        damage = journal.damage
    if fmt == "json":
        out.write(json.dumps(night_json(table, since), ensure_ascii=False) + "\n")
    elif fmt == "csv":
        write_csv(table, out)
    else:
        print_table(table, since, out)
    if damage is not None:
        out.flush()
        print(damage, file=sys.stderr)
        return 2
    return 0


def _journal_folder(path: Path) -> Path:
    """`--journal`: the journal file itself, or the folder holding it."""
    if path.is_dir():
        return path
    if not path.exists():
        raise UserError(f"{path}: no such file or folder (give the journal, {FILE_NAME}, or its folder)")
    if path.name != FILE_NAME:
        raise UserError(f"{path}: not a journal: the referee's journal is a file named {FILE_NAME}")
    return path.parent


def bin_labels() -> list[str]:
    edges = BIN_EDGES_MS
    return [
        f"<{edges[0]}ms",
        *(f"{a}-{b}ms" for a, b in pairwise(edges)),
        f">={edges[-1]}ms",
    ]


def write_csv(table: Night, out: TextIO) -> None:
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*CSV_FIGURES, *bin_labels()])
    for row in night_json(table)["players"]:
        writer.writerow([_csv_value(row[k]) for k in CSV_FIGURES] + row["reaction_bins"])


def _csv_value(value: Any) -> Any:
    return "" if value is None else value


def spark(bins: list[int]) -> str:
    """A histogram as one line of block characters, the tallest bin a full block."""
    top = max(bins, default=0)
    if not top:
        return BLOCKS[0] * len(bins)
    return "".join(BLOCKS[math.ceil(n / top * (len(BLOCKS) - 1))] for n in bins)


def ms(us: int | None) -> str:
    return "-" if us is None else f"{us / 1000:.0f} ms" if us >= 10_000 else f"{us / 1000:.1f} ms"


def print_table(table: Night, since: datetime, out: TextIO) -> None:
    from rich.console import Console  # rich: only for the table, not at every command's start-up
    from rich.text import Text

    console = Console(file=out, highlight=False)
    if not console.is_terminal:  # a pipe or a file: wide enough for the whole table on one line each
        console = Console(file=out, highlight=False, width=150)
    when = since.strftime("%a %Y-%m-%d %H:%M")
    if not table.games:
        console.print(f"no games since {when}")
        return
    ids = [g.id for g in table.games]
    won = sum(1 for g in table.games if g.winner is not None)
    console.print(
        Text(f"The night's scores since {when}: {len(ids)} games ({_ranges(ids)}), {won} won", style="bold")
    )
    rows = night_json(table)["players"]
    console.print(_grid(rows))
    for line in record_lines(table):
        console.print(line)
    console.print()
    _print_reactions(console, rows)


HEADERS = (
    "Player",
    "Games",
    "Won",
    "Stacks",
    "by snap",
    "by count-out",
    "other",
    "Wrong snaps",
    "Valid snaps",
    "Median",
    "Fastest",
    "Games in a row",
    "Stacks in a row",
)


def _grid(rows: list[dict[str, Any]]) -> Any:
    """The players' figures as a rich table, a row each."""
    from rich.table import Table  # rich: only for the table

    grid = Table(title_justify="left")
    for header in HEADERS:
        grid.add_column(header, justify="left" if header == "Player" else "right")
    for p in rows:
        grid.add_row(
            p["name"],
            str(p["games"]),
            str(p["won"]),
            str(p["stacks"]),
            str(p["by_snap"]),
            str(p["by_count_out"]),
            str(p["by_other"]),
            str(p["wrong_snaps"]),
            str(p["valid_snaps"]),
            "-" if p["median_ms"] is None else f"{p['median_ms']:.0f} ms",
            ms(p["fastest_us"]),
            str(p["games_in_a_row"]),
            str(p["stacks_in_a_row"]),
        )
    return grid


def _print_reactions(console: Any, rows: list[dict[str, Any]]) -> None:
    """Each player's reaction times as a one-line histogram, the axis under them."""
    from rich.text import Text  # rich: only for the table

    width = max(len(p["name"]) for p in rows)
    edges = BIN_EDGES_MS
    step = edges[1] - edges[0]
    console.print(Text(f"Reaction times ({edges[0]} to {edges[-1]} ms, {step} ms a column)", style="bold"))
    for p in rows:
        median = "" if p["median_ms"] is None else f", median {p['median_ms']:.0f} ms"
        console.print(
            Text.assemble(
                (f"{p['name']:<{width}}  ", "bold"),
                (spark(p["reaction_bins"]), "green"),
                f"  {p['valid_snaps']} valid snap{'' if p['valid_snaps'] == 1 else 's'}{median}",
            )
        )
    console.print(Text(f"{'':<{width}}  {axis()}", style="dim"))


def axis() -> str:
    """The histogram's edges under its columns: the first, the middle and the last (edge k
    starts column k + 1)."""
    edges = BIN_EDGES_MS
    line = [" "] * (len(edges) + 8)
    mid = len(edges) // 2
    for k, label in ((0, str(edges[0])), (mid, str(edges[mid])), (len(edges) - 1, f"{edges[-1]}+ ms")):
        line[k + 1 : k + 1 + len(label)] = label
    return "".join(line).rstrip()


def record_lines(table: Night) -> list[str]:
    """The night's records in words (the terminal's; the kiosk says the same)."""
    lines = []
    if table.fastest is not None:
        name, us, game = table.fastest
        lines.append(f"Fastest snap: {name}, {ms(us)} after the card that made it good (game {game})")
    if table.closest is not None:
        name, beaten, us, game = table.closest
        against = f" beat {beaten}" if beaten is not None else " won"
        lines.append(f"Closest race: {name}{against} by {ms(us)} (game {game})")
    if table.games_streak is not None:
        name, count = table.games_streak
        lines.append(f"Most games won in a row: {name}, {count}")
    if table.stacks_streak is not None:
        name, count, game = table.stacks_streak
        lines.append(f"Most stacks won in a row: {name}, {count} (game {game})")
    return lines


def _ranges(ids: list[int]) -> str:
    """Game numbers as ranges: 1-3, 5."""
    parts: list[str] = []
    start = prev = ids[0]
    for n in [*ids[1:], None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        parts.append(f"{start}" if start == prev else f"{start}-{prev}")
        if n is not None:
            start = prev = n
    return "games " + ", ".join(parts) if len(ids) > 1 else f"game {ids[0]}"


def add_commands(sub: Any) -> None:
    p = sub.add_parser(
        "stats",
        help="the night's scores: games and stacks won, snaps, the fastest, the closest race, streaks",
        description="The night's scores from the journal: per player, games won, stacks won by snap "
        "and by count-out, wrong snaps, valid snaps and their reaction times, the fastest snap, the "
        "closest race and streaks. By default tonight's games: since 06:00 today, or yesterday "
        "before 06:00.",
    )
    p.add_argument(
        "--since",
        metavar="DATE",
        help="the games started since this date (YYYY-MM-DD, from midnight) or time ('YYYY-MM-DD "
        "HH:MM'), local time (default: tonight, since the last 06:00)",
    )
    group = p.add_mutually_exclusive_group()
    group.add_argument("--journal", metavar="PATH", help="the journal (journal.sqlite3) or its folder")
    group.add_argument("--config", metavar="FILE", help="the config (its data_dir holds the journal)")
    group.add_argument("--data-dir", metavar="DIR", help="the folder holding the journal")
    group.add_argument("--demo", action="store_true", help="the journal of `referee demo`'s games")
    p.add_argument(
        "--format",
        default="table",
        metavar="FORMAT",
        help="table (the default: for people), csv (a row per player, each histogram bin a column) "
        "or json (everything, one object)",
    )
    p.set_defaults(run=cmd_stats)
