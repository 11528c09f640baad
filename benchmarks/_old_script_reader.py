"""The table script's reader as it was before msgspec (commit f5f1174), kept for two jobs only:
`benchmarks/bench_adjudicate.py` times it beside the new one, and
`tests/test_script_records.py` checks that the new reader accepts, reads and words the
errors of every line exactly as this one does. Not imported by the referee.

Copied from referee/rules/script.py (parse_game, parse_event, read_script, adjudicate), referee/
questions.py (take) and referee/cli/main.py (cmd_adjudicate) as they were; only the imports
changed, so that the classes a caller sees (ScriptError, GameSpec, the events) are the
referee's own.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Iterator
from typing import Any, TextIO

from referee.cards import CardError, parse_card
from referee.cli.main import EXIT_OK
from referee.errors import UserError, show_json
from referee.live.script_file import open_script as _open_input
from referee.rules.engine import IllegalEvent, SetupError
from referee.rules.events import Event, Lay, Named, Snap, Unread, Wait
from referee.rules.options import OptionError
from referee.rules.player_names import check_names
from referee.rules.presets import UnknownPreset
from referee.rules.questions import NEVER_NAMED, Item, Judging, NothingToName, _answer, _remember, _take, end
from referee.rules.rulings import Ruling
from referee.rules.script import GameSpec, ScriptError
from referee.rules.state import State

GAME_KEYS = frozenset({"players", "rules", "options", "deck", "hand_sizes"})
EVENT_KEYS = {
    "cleared": frozenset({"t", "cleared"}),
    "lay": frozenset({"t", "lay", "seat", "confidence", "guess"}),
    "card": frozenset({"t", "card", "for"}),
    "snap": frozenset({"t", "snap"}),
    "wait": frozenset({"t", "wait"}),
}
UNREAD = "?"


class _LineError(ValueError):
    """A problem on the current line (its position is added by the reader)."""


def parse_game(obj: Any) -> GameSpec:
    if not isinstance(obj, dict) or set(obj) != {"game"}:
        raise _LineError('expected the game line first: {"game": {"players": [...], ...}}')
    game = obj["game"]
    if not isinstance(game, dict):
        raise _LineError('"game" must be an object')
    unknown = set(game) - GAME_KEYS
    if unknown:
        raise _LineError(
            f"unknown key {sorted(unknown)[0]!r} in the game line (known: {', '.join(sorted(GAME_KEYS))})"
        )
    players = game.get("players")
    if (
        not isinstance(players, list)
        or not players
        or not all(isinstance(p, str) and p.strip() for p in players)
    ):
        raise _LineError('"players" must be a list of player names')
    try:
        check_names(players)
    except ValueError as e:
        raise _LineError(str(e)) from None
    rules = game.get("rules", "celtic")
    options = game.get("options", {})
    if not isinstance(options, dict):
        raise _LineError('"options" must be an object')
    deck = game.get("deck", 52)
    if isinstance(deck, bool) or deck not in (52, 54):
        raise _LineError(f'"deck" must be 52 or 54, not {show_json(deck)}')
    hand_sizes = game.get("hand_sizes")
    if hand_sizes is not None and not isinstance(hand_sizes, list):
        raise _LineError('"hand_sizes" must be a list of card counts')
    return GameSpec(
        tuple(players), rules, options, deck, tuple(hand_sizes) if hand_sizes is not None else None
    )


def parse_event(obj: Any, seats: int) -> Event | Unread | Named:
    """One event line (already JSON-decoded), checked against the contract."""
    if not isinstance(obj, dict):
        raise _LineError("expected a JSON object")
    if "game" in obj:
        raise _LineError("a second game line: one script holds one game")
    kinds = [k for k in ("lay", "snap", "wait", "cleared", "card") if k in obj]
    if len(kinds) != 1:
        raise _LineError(
            'an event line needs exactly one of "lay", "snap", "wait" or "card"'
            if not kinds
            else f"one event per line, not {' and '.join(kinds)}"
        )
    kind = kinds[0]
    unknown = obj.keys() - EVENT_KEYS[kind]
    if unknown:
        raise _LineError(f"unknown key {sorted(unknown)[0]!r} in a {kind} line")
    t = obj.get("t")
    if type(t) is not int or t < 0:
        raise _LineError(f'"t" must be whole microseconds, 0 or more, not {show_json(t)}')
    if kind == "lay":
        seat = obj.get("seat")
        if seat is not None:
            _check_seat(seat, seats)
        confidence = obj.get("confidence", 1)
        if (
            isinstance(confidence, bool)
            or not isinstance(confidence, (int, float))
            or not 0 <= confidence <= 1
        ):
            raise _LineError(f'"confidence" must be a number from 0 to 1, not {show_json(confidence)}')
        card = obj["lay"]
        if not isinstance(card, str):
            raise _LineError(f'"lay" must be a card code such as "QS", or "?", not {show_json(card)}')
        if card == UNREAD:
            guess = obj.get("guess")
            if guess is not None and not isinstance(guess, str):
                raise _LineError(f'"guess" must be a card code such as "QS", not {show_json(guess)}')
            return Unread(t, seat, parse_card(guess) if guess is not None else None)
        if "guess" in obj:
            raise _LineError('"guess" belongs to a lay whose card is "?"')
        return Lay(t, parse_card(card), seat)
    if kind == "card":
        card, lay_t = obj["card"], obj.get("for")
        if card is not None and not isinstance(card, str):
            raise _LineError(f'"card" must be a card code such as "QS", or null, not {show_json(card)}')
        if type(lay_t) is not int or not 0 <= lay_t <= t:
            raise _LineError(
                f'"for" must be the time of the lay it names, at most "t", not {show_json(lay_t)}'
            )
        return Named(t, lay_t, parse_card(card) if card is not None else None)
    if kind == "snap":
        seat = obj["snap"]
        _check_seat(seat, seats)
        return Snap(t, seat)
    if obj[kind] is not True:
        raise _LineError(f'"{kind}" must be true, not {show_json(obj[kind])}')
    # `cleared` is the camera seeing the stack taken: the referee already knows who won it,
    # so it only says that time has reached t.
    return Wait(t)


def _check_ruling(obj: dict[str, Any]) -> None:
    """A ruling line is skipped, but only if it is one: a time and the name of a ruling."""
    if type(obj.get("t")) is not int or not isinstance(obj["event"], str):
        raise _LineError('a ruling line needs "t" (microseconds) and "event" (the ruling\'s name)')


def _check_seat(seat: Any, seats: int) -> None:
    if type(seat) is not int or not 0 <= seat < seats:
        raise _LineError(f"seat {show_json(seat)} is out of range 0..{seats - 1}")


_USER_ERRORS = (_LineError, IllegalEvent, SetupError, CardError, OptionError, UnknownPreset)


def read_script(
    lines: Iterable[bytes | str], source: str = "-", game: GameSpec | None = None
) -> Iterator[tuple[int, State | Event | Unread | Named]]:
    """The script's items with their line numbers: first the table after the deal, then events.

    Checks everything a line can show on its own, and that time never goes back;
    what only the game can tell (a card already on the stack) is the engine's.
    `game`: the game to play when the script has no game line (`referee run --lays-from`),
    yielded with line number 0. Ruling lines (with an "event" key, as `referee export` and
    `demo --json` write them after each event) are skipped: the rulings are recomputed.
    """
    state: State | None = None
    lineno = 0
    last_t = 0
    loads = json.loads
    for lineno, raw in enumerate(lines, 1):
        try:
            text = raw.decode("utf-8-sig" if lineno == 1 else "utf-8") if isinstance(raw, bytes) else raw
            if lineno == 1:
                text = text.removeprefix("\ufeff")  # a byte-order mark some editors write
        except UnicodeDecodeError:
            raise ScriptError(f"{source}:{lineno}: not UTF-8 text") from None
        if not text.strip():
            continue
        try:
            try:
                obj = loads(text)
            except ValueError as e:
                raise _LineError(f"not JSON: {e}") from None
            except RecursionError:  # arrays or objects nested thousands deep
                raise _LineError("not JSON: nested too deeply") from None
            if state is None and (game is None or (isinstance(obj, dict) and "game" in obj)):
                state = parse_game(obj).new_game()
                yield lineno, state
                continue
            if state is None:
                assert game is not None
                state = game.new_game()
                yield 0, state
            if isinstance(obj, dict) and "event" in obj and "game" not in obj:
                _check_ruling(obj)
                continue
            event = parse_event(obj, state.seats)
            if event.t < last_t:
                raise _LineError(f"time goes backwards: t={event.t} after t={last_t}")
            last_t = event.t
        except _USER_ERRORS as e:
            raise ScriptError(f"{source}:{lineno}: {e}") from None
        yield lineno, event
    if state is None and game is not None:
        yield 0, game.new_game()
    elif state is None:
        raise ScriptError(
            f'{source}:{max(lineno, 1)}: empty input: expected a game line {{"game": {{"players": [...]}}}}'
        )


def adjudicate(lines: Iterable[bytes | str], source: str = "-") -> Iterator[Ruling]:
    """Rulings for a table script, each yielded as soon as it is final.

    Raises ScriptError (`source:LINE: what`) at the first bad line; every ruling
    yielded before it stands.
    """
    items = read_script(lines, source)
    judging = Judging(next(items)[1])  # type: ignore[arg-type]
    lays: dict[int, int] = {}  # a lay's time -> its line: an unread lay's, or one asked later
    lineno = 0
    for lineno, event in items:
        if type(event) in (Unread, Lay):
            lays.setdefault(event.t, lineno)
        try:
            judging, rulings = take(judging, event)  # type: ignore[arg-type]
        except (IllegalEvent, NothingToName) as e:
            raise ScriptError(f"{source}:{lineno}: {e}") from None
        yield from rulings
    try:
        yield from end(judging)[1]
    except ValueError:
        first = judging.open[0]
        line = lays.get(first.t, lineno)
        raise ScriptError(f"{source}:{line}: {NEVER_NAMED}") from None


def take(judging: Judging, item: Item) -> tuple[Judging, list[Ruling]]:
    """questions.take as it was: every event through `_take` and `_remember`."""
    if type(item) is Named:
        return _answer(judging, item)
    after, rulings = _take(judging, item, ask_impossible=False)
    return _remember(after, judging, item, rulings), rulings


def cmd_adjudicate(args: argparse.Namespace, out: TextIO) -> int:
    """cli.cmd_adjudicate as it was (without --pipeline): json.dumps of each ruling."""
    stream, name, live = _open_input(args.file)
    dumps = json.dumps
    write = out.write
    rulings = adjudicate(stream, name)
    try:
        for ruling in rulings:
            write(dumps(ruling.to_json()) + "\n")
            if live:
                out.flush()
    except ScriptError as e:
        out.flush()
        raise UserError(str(e)) from None
    finally:
        if stream.stream is not sys.stdin.buffer:
            stream.close()
    return EXIT_OK
