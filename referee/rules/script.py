"""The table script (JSONL) read line by line, and adjudicated as a stream.

Format: docs/table-script.md. Every mistake in a script becomes a `ScriptError`
whose message is the one line the user sees: `FILE:LINE: what is wrong`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from referee.cards import CardError, parse_card
from referee.errors import show_json

from .engine import IllegalEvent, SetupError
from .events import Event, Lay, Named, Snap, Unread, Wait
from .options import OptionError
from .player_names import check_names
from .presets import UnknownPreset, rules_for
from .questions import NEVER_NAMED, Judging, NothingToName, Past, end, take
from .rulings import Ruling
from .script_records import RULING, UNREAD, fast_item
from .state import State

GAME_KEYS = frozenset({"players", "rules", "options", "deck", "hand_sizes"})
EVENT_KEYS = {
    "cleared": frozenset({"t", "cleared"}),
    "lay": frozenset({"t", "lay", "seat", "confidence", "guess"}),
    "card": frozenset({"t", "card", "for"}),
    "snap": frozenset({"t", "snap"}),
    "wait": frozenset({"t", "wait"}),
}


MAX_LINE = 64 * 1024  # bytes: a game line with eight names and every option is under 2 KB


class ScriptError(ValueError):
    """A table script that cannot be adjudicated; str() is the one-line message."""


class CappedLines:
    """A binary stream's lines, none longer than `limit` bytes: a longer one (`/dev/zero`, a
    binary file, a line with no end) is a ScriptError naming its line, after reading at most
    `limit` bytes of it, so memory stays bounded whatever the input. `stream` stays the
    caller's: `close()` closes it."""

    def __init__(self, stream: Any, source: str, limit: int = MAX_LINE) -> None:
        self.stream = stream
        self.source = source
        self.limit = limit

    def __iter__(self) -> Iterator[bytes]:
        readline = self.stream.readline
        lineno = 0
        while True:
            line = readline(self.limit + 1)
            if not line:
                return
            lineno += 1
            if len(line) > self.limit and not (len(line) == self.limit + 1 and line.endswith(b"\n")):
                raise ScriptError(
                    f"{self.source}:{lineno}: a line longer than {self.limit // 1024} KiB: "
                    "not a table script (one JSON object a line)"
                )
            yield line

    def fileno(self) -> int:
        return self.stream.fileno()

    def close(self) -> None:
        self.stream.close()


class _LineError(ValueError):
    """A problem on the current line (its position is added by the reader)."""


@dataclass(frozen=True)
class GameSpec:
    """The `game` line: who plays, by which rules, with which deck."""

    players: tuple[str, ...]
    rules: str = "celtic"
    options: dict[str, Any] = field(default_factory=dict)
    deck: int = 52
    hand_sizes: tuple[int, ...] | None = None

    def new_game(self) -> State:
        return rules_for(self.rules, self.options).new_game(self.players, self.deck, self.hand_sizes)

    def to_json(self) -> dict[str, Any]:
        game: dict[str, Any] = {
            "players": list(self.players),
            "rules": self.rules,
            "options": dict(self.options),
        }
        if self.deck != 52:
            game["deck"] = self.deck
        if self.hand_sizes is not None:
            game["hand_sizes"] = list(self.hand_sizes)
        return {"game": game}


def event_to_json(event: Event | Unread | Named) -> dict[str, Any]:
    """An event as its table-script line."""
    kind = type(event)
    if kind is Unread:
        line: dict[str, Any] = {"t": event.t, "lay": UNREAD}
        if event.seat is not None:
            line["seat"] = event.seat
        if event.guess is not None:  # type: ignore[union-attr]
            line["guess"] = event.guess.code  # type: ignore[union-attr]
        return line
    if kind is Named:
        card = event.card  # type: ignore[union-attr]
        return {"t": event.t, "card": None if card is None else card.code, "for": event.lay_t}  # type: ignore[union-attr]
    if kind is Lay:
        out: dict[str, Any] = {"t": event.t, "lay": event.card.code}
        if event.seat is not None:
            out["seat"] = event.seat
        return out
    if type(event) is Snap:
        return {"t": event.t, "snap": event.seat}
    return {"t": event.t, "wait": True}


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


def read_game_line(raw: bytes | str, source: str, lineno: int) -> GameSpec | None:
    """The game a line sets up if it is a game line (checked in full), else None."""
    try:
        text = raw.decode("utf-8-sig") if isinstance(raw, bytes) else raw.removeprefix("\ufeff")
        obj = json.loads(text)
    except (ValueError, RecursionError):
        return None  # not a game line: read_script reports what is wrong with it
    if not isinstance(obj, dict) or "game" not in obj:
        return None
    try:
        spec = parse_game(obj)
        spec.new_game()  # the rules, options and deal are checked too
    except _USER_ERRORS as e:
        raise ScriptError(f"{source}:{lineno}: {e}") from None
    return spec


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

    Each line after the game's is first read by msgspec into a typed record
    (`script_records.fast_item`); a line it is not sure of (any mistake, and the rare good
    line it leaves to us, such as one with a NaN) is read again here with the precise checks
    that word the error.
    """
    state: State | None = None
    seats = 0
    lineno = 0
    last_t = 0
    fast = fast_item
    for lineno, raw in enumerate(lines, 1):
        if state is not None:
            item = fast(raw, seats)
            if item is not None:
                if item is RULING:
                    continue
                t = item.t  # type: ignore[union-attr]
                if t < last_t:
                    raise ScriptError(f"{source}:{lineno}: time goes backwards: t={t} after t={last_t}")
                last_t = t
                yield lineno, item  # type: ignore[misc]
                continue
        text = _text(raw, lineno, source)
        if not text.strip():
            continue
        try:
            obj = _loads(text)
            if state is None and (game is None or (isinstance(obj, dict) and "game" in obj)):
                state = parse_game(obj).new_game()
                seats = state.seats
                yield lineno, state
                continue
            if state is None:
                assert game is not None
                state = game.new_game()
                seats = state.seats
                yield 0, state
            if isinstance(obj, dict) and "event" in obj and "game" not in obj:
                _check_ruling(obj)
                continue
            event = parse_event(obj, seats)
            if event.t < last_t:
                raise _LineError(f"time goes backwards: t={event.t} after t={last_t}")
            last_t = event.t
        except _USER_ERRORS as e:
            raise ScriptError(f"{source}:{lineno}: {e}") from None
        yield lineno, event
    if state is None:
        yield 0, _default_game(game, source, lineno)


def _text(raw: bytes | str, lineno: int, source: str) -> str:
    """A line as text; the first may start with a byte-order mark some editors write."""
    try:
        text = raw.decode("utf-8-sig" if lineno == 1 else "utf-8") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError:
        raise ScriptError(f"{source}:{lineno}: not UTF-8 text") from None
    return text.removeprefix("\ufeff") if lineno == 1 else text


def _default_game(game: GameSpec | None, source: str, lineno: int) -> State:
    """The table of a script with no game line: the given game's, else an error."""
    if game is None:
        raise ScriptError(
            f'{source}:{max(lineno, 1)}: empty input: expected a game line {{"game": {{"players": [...]}}}}'
        )
    return game.new_game()


def _loads(text: str) -> Any:
    """A line's JSON, or the _LineError that says why it is not JSON."""
    try:
        return json.loads(text)
    except ValueError as e:
        raise _LineError(f"not JSON: {e}") from None
    except RecursionError:  # arrays or objects nested thousands deep
        raise _LineError("not JSON: nested too deeply") from None


def adjudicate(lines: Iterable[bytes | str], source: str = "-") -> Iterator[Ruling]:
    """Rulings for a table script, each yielded as soon as it is final.

    Raises ScriptError (`source:LINE: what`) at the first bad line; every ruling
    yielded before it stands.
    """
    for batch in adjudicate_batches(lines, source):
        yield from batch


def adjudicate_batches(lines: Iterable[bytes | str], source: str = "-") -> Iterator[list[Ruling]]:
    """`adjudicate`'s rulings, an event's at a time: one resumption per event, not per ruling
    (`referee adjudicate` writes a long game in blocks). A batch is only good until the next
    is asked for: the list is used again."""
    items = read_script(lines, source)
    start: State = next(items)[1]  # type: ignore[assignment]
    # While no question is open, `questions.take` comes down to one engine step and one more
    # item of history. That is done here on a table of our own, judged in place (`apply`,
    # which `step` calls on a fresh copy for every event): nothing else sees it, and a bad
    # line ends the run. The history is kept in two lists and made into the Judging's cons
    # cells only when one is needed, for a question or a card line; the Judging is taken
    # apart again, onto a copy of its table, once nothing waits. This is the hot path.
    table = start.copy()
    apply = start.rules.apply
    past: Past | None = None  # the history up to the last Judging...
    taken: list[Event] = []  # ...and the events taken since, with how many rulings each made
    made: list[int] = []
    judging: Judging | None = None
    lays: dict[int, int] = {}  # a lay's time -> its line: an unread lay's, or one asked later
    lineno = 0
    said: list[Ruling] = []  # one list for every event's rulings, emptied after they are yielded
    for lineno, event in items:
        kind = type(event)
        if kind is Lay or kind is Unread:
            lays.setdefault(event.t, lineno)
        try:
            if judging is None and kind is not Unread and kind is not Named:
                said.clear()
                rulings = said
                apply(table, event, rulings)  # type: ignore[arg-type]
                taken.append(event)  # type: ignore[arg-type]
                made.append(len(rulings))
            else:
                if judging is None:
                    for item, count in zip(taken, made, strict=True):
                        past = (item, count, past)
                    taken.clear()
                    made.clear()
                    judging = Judging(table, (), start, past)  # the table is the Judging's now
                judging, rulings = take(judging, event)  # type: ignore[arg-type]
                if not judging.waiting:
                    table, past = judging.state.copy(), judging.past
                    start = judging.start if judging.start is not None else judging.state
                    judging = None
        except (IllegalEvent, NothingToName) as e:
            raise ScriptError(f"{source}:{lineno}: {e}") from None
        if rulings:
            yield rulings
    if judging is None:
        judging = Judging(table)  # no question open: the end needs no history
    try:
        yield end(judging)[1]
    except ValueError:
        first = judging.open[0]
        line = lays.get(first.t, lineno)
        raise ScriptError(f"{source}:{line}: {NEVER_NAMED}") from None
