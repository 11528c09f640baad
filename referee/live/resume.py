"""Which game `referee run` goes on with: a new one, or the open one resumed from the journal.

An open game (one a crash or a power cut interrupted) is replayed from the journal, and a
rehearsal script resumes at the line after the last one judged. The rulings of a game that
may not have gone out before the restart are announced again, each marked so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from referee.errors import UserError
from referee.rules.questions import Judging
from referee.rules.rulings import Ruling
from referee.rules.script import GameSpec, read_game_line
from referee.rules.state import State

from .journal import OPEN, GameRecord, Journal
from .replay import replay, untold
from .sinks import RulingPrinter


@dataclass(frozen=True)
class Start:
    """The game `referee run` goes on with: new, or resumed from the journal."""

    game: int
    judging: Judging  # the table, and any lay still waiting for its card
    seq: int  # events already journaled
    skip_through: int  # script lines up to this one were judged before the crash (0: none)
    resumed: GameRecord | None
    mark_t: int | None = None  # the game time line `skip_through` was judged at (its offset kept)

    @property
    def state(self) -> State:
        return self.judging.state


def start_game(journal: Journal, spec: GameSpec, source: str, explicit: bool, new_game: bool) -> Start:
    """Resume the open game, or start `spec`. `explicit`: the input named its own game line,
    which an open game must then match (a different game's lays must not land in it)."""
    open_game = None if new_game else journal.open_game()
    if open_game is not None:
        if explicit and open_game.spec != spec.to_json():
            raise UserError(
                f"{source}: its game line is not the open game {open_game.id}'s in the journal "
                f"({journal.path}): add --new-game to abandon that game and start this one"
            )
        events = list(journal.events(open_game.id))
        judging = replay(open_game, events)
        skip = (open_game.last_mark or 0) if open_game.source == source else 0
        mark_t = next((e.line["t"] for e in reversed(events) if skip and e.mark == skip), None)
        return Start(open_game.id, judging, journal.next_seq(open_game.id), skip, open_game, mark_t)
    game = journal.new_game(spec.to_json(), source)
    return Start(game, Judging(spec.new_game()), 0, 0, None)


def announce_again(
    journal: Journal, game: GameRecord, printer: RulingPrinter, note: Callable[[str], Any]
) -> list[Ruling]:
    """The rulings of `game` that may not have gone out before a crash, announced again (each
    marked so on stdout, and said on stderr); the journal then notes them told."""
    told = journal.last_told(game.id)
    if told is None and game.status != OPEN:
        return []  # the journal does not say, and a game long ended was told at the time
    events = list(journal.events(game.id))
    rulings = untold(game, events, told)
    for ruling in rulings:
        printer.again(ruling)
    if rulings:
        note(
            f"game {game.id}: announced again: {len(rulings)} ruling{'s' if len(rulings) != 1 else ''} "
            "that may not have gone out before the restart"
        )
    if game.status != OPEN:
        journal.told_all(game.id)
    elif events:
        journal.told(game.id, journal.next_seq(game.id) - 1, 1 << 30)
    return rulings


def spec_of(line: dict[str, Any], default: GameSpec) -> GameSpec:
    """A journaled game line (`Journal.next_game`) as the next game's spec."""
    game = line.get("game", {})
    return GameSpec(
        tuple(game.get("players", default.players)),
        game.get("rules", default.rules),
        dict(game.get("options", {})),
    )


def game_of(stream: Iterable[bytes], name: str, default: GameSpec) -> tuple[Iterator[bytes], GameSpec, bool]:
    """The input's own game line if its first line is one, else the config's game."""
    lines = iter(stream)
    head: list[bytes] = []
    for lineno, raw in enumerate(lines, 1):
        head.append(raw)
        if raw.strip():
            spec = read_game_line(raw, name, lineno)
            return _chain(head, lines), spec or default, spec is not None
    return iter(head), default, False


def _chain(head: list[bytes], rest: Iterator[bytes]) -> Iterator[bytes]:
    yield from head
    yield from rest
