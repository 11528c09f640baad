"""A journaled game replayed: the table it reached, and its script with every ruling.

Pure functions over the journal's plain records. The engine is pure, so stepping
the same events from the same deal gives the same table and the same rulings:
this is how `referee run` resumes after a crash and how `referee export` shows a
game for a dispute.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from referee.rules.engine import IllegalEvent
from referee.rules.events import Event, Named, Unread
from referee.rules.questions import Judging, NothingToName, end, take
from referee.rules.rulings import Ruling
from referee.rules.script import ScriptError, event_to_json, read_script
from referee.rules.state import State

from .journal import OPEN, EventRecord, GameRecord, JournalError


def _items(
    game: GameRecord, events: Iterable[EventRecord]
) -> Iterator[tuple[int, State | Event | Unread | Named]]:
    lines = [json.dumps(game.spec), *(json.dumps(e.line) for e in events)]
    try:
        yield from read_script(lines, f"journal game {game.id}")
    except ScriptError as e:
        raise JournalError(f"{e} (the journal was changed by hand?)") from None


def replay(game: GameRecord, events: Iterable[EventRecord]) -> Judging:
    """The table after the journaled events, with any lay still waiting for its card (no
    ruling is announced again)."""
    items = _items(game, events)
    judging = Judging(next(items)[1])  # type: ignore[arg-type]
    for lineno, event in items:
        try:
            judging, _ = take(judging, event)  # type: ignore[arg-type]
        except (IllegalEvent, NothingToName) as e:
            raise JournalError(f"journal game {game.id}, event {lineno - 1}: {e}") from None
    return judging


def export(game: GameRecord, events: Iterable[EventRecord]) -> Iterator[dict[str, Any]]:
    """The game as a table script, each event's rulings after it (`referee adjudicate` skips
    them and rules again, so a dispute is settled by comparing). A game that has ended gets
    the rulings its end settled; an open one stops at its last event."""
    items = _items(game, events)
    judging = Judging(next(items)[1])  # type: ignore[arg-type]
    yield game.spec
    for lineno, event in items:
        yield event_to_json(event)  # type: ignore[arg-type]
        try:
            judging, rulings = take(judging, event)  # type: ignore[arg-type]
        except (IllegalEvent, NothingToName) as e:
            raise JournalError(f"journal game {game.id}, event {lineno - 1}: {e}") from None
        for ruling in rulings:
            yield ruling.to_json()
    if game.status != OPEN and not judging.holding:
        for ruling in end(judging)[1]:
            yield ruling.to_json()


def undo_last(game: GameRecord, events: list[EventRecord]) -> tuple[list[int], Judging]:
    """What undoing the last ruling takes back, and the table without it: every event from
    the last settled table before that ruling on (a snap's ruling comes when time moves
    on, so the press goes back with the moment that settled it). Their seqs, and the table
    without them (with what the game took before, so a later correction can reach back)."""
    items = list(_items(game, events))
    judging = Judging(items[0][1])  # type: ignore[arg-type]
    states = [judging]
    last_ruled = -1
    for i, (_, event) in enumerate(items[1:]):
        judging, rulings = take(judging, event)  # type: ignore[arg-type]
        states.append(judging)
        if rulings:
            last_ruled = i
    if last_ruled < 0:
        raise ValueError("there is no ruling to undo in this game")
    cut = last_ruled
    while cut > 0 and (
        states[cut].holding
        or states[cut].state.pending_t is not None
        or states[cut].state.deferred is not None
    ):
        cut -= 1  # presses still waiting here (or behind a question) belong to the ruling taken back
    return [e.seq for e in events[cut:]], states[cut]


def untold(
    game: GameRecord, events: Iterable[EventRecord], told: tuple[int, int, bool] | None
) -> list[Ruling]:
    """The rulings of a journaled game that may not have been announced before a restart.

    `told` is how far they were (`Journal.last_told`): through event `seq`, the first `count`
    of its rulings (an ended game's end counts as its last event's), or all of them. When
    the journal does not say (an older journal), the last event's rulings: the only ones a
    crash can have cut off, since each event is judged only after the last one's rulings
    went out."""
    if told is not None and told[2]:
        return []
    events = list(events)
    items = _items(game, events)
    judging = Judging(next(items)[1])  # type: ignore[arg-type]
    by_event: list[tuple[int, list[Ruling]]] = []
    for (lineno, event), record in zip(items, events, strict=True):
        try:
            judging, rulings = take(judging, event)  # type: ignore[arg-type]
        except (IllegalEvent, NothingToName) as e:
            raise JournalError(f"journal game {game.id}, event {lineno - 1}: {e}") from None
        by_event.append((record.seq, list(rulings)))
    if game.status != OPEN and not judging.holding and by_event:
        by_event[-1][1].extend(end(judging)[1])
    if told is None:
        return by_event[-1][1] if by_event else []
    seq, count, _ = told
    out: list[Ruling] = []
    for event_seq, rulings in by_event:
        if event_seq > seq:
            out += rulings
        elif event_seq == seq:
            out += rulings[count:]
    return out
