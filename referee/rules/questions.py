"""A lay the camera cannot read for sure is asked, never guessed: judging holds at it.

Pure values and functions over the engine. `Judging` is the engine's table, the events
taken since the first lay still waiting for its card (in time order), and everything
taken since the game began. `take` feeds it one item:

- an event is judged at once, unless a question is open: then it waits;
- an `Unread` lay opens a question;
- `Named` answers one, and everything that waited behind it is judged then, in event
  time, as if the card had been read when it landed: a press made while the table was
  asked is judged against the stack as it was at the press, with the named card in it;
- `Named` for a lay whose card was already known corrects a misreading, and for a time
  at which no lay was seen adds the card the camera missed: the game is judged again from
  that lay on (a `Corrected` ruling, then the new rulings).

A lay judged after a question or a correction, that the answer makes impossible (a card
already on the stack: the camera misread it), is asked in its turn, not refused: the
answer could not be known when the lay was read.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from .engine import IllegalEvent, finish, step
from .events import Event, Lay, Named, Unread, Wait
from .rulings import Corrected, Ruling
from .state import State

Item = Event | Unread | Named
# Everything taken, newest first, as a cons list (each take adds a cell: no copying), with
# how many rulings each made final: (item, rulings, older).
Past = tuple[Item, int, "Past | None"]

NEVER_NAMED = 'this lay\'s card was never named (a "card" line for it)'


class NothingToName(ValueError):
    """A `Named` for a time at which no lay was seen."""


@dataclass(frozen=True, slots=True)
class Judging:
    """The engine's table, what waits behind the first open question (empty: none), the
    table the game began with (None: `state`) and everything taken since."""

    state: State
    waiting: tuple[Event | Unread, ...] = ()
    start: State | None = None
    past: Past | None = None

    @property
    def open(self) -> tuple[Unread, ...]:
        """The lays still waiting for their card, oldest first."""
        return tuple(e for e in self.waiting if type(e) is Unread)

    @property
    def holding(self) -> bool:
        return bool(self.waiting)

    def items(self) -> list[Item]:
        """Everything taken since the game began, oldest first (a correction rewritten in)."""
        return [item for item, _ in self._past()]

    def _past(self) -> list[tuple[Item, int]]:
        """Everything taken, oldest first, each with how many rulings it made final."""
        out: list[tuple[Item, int]] = []
        cell = self.past
        while cell is not None:
            out.append((cell[0], cell[1]))
            cell = cell[2]
        out.reverse()
        return out


def take(judging: Judging, item: Item) -> tuple[Judging, list[Ruling]]:
    """`judging` after `item`, and the rulings it made final.

    Raises IllegalEvent for an event the engine refuses (judged at once, or a named card
    that cannot be: it is already on the stack), NothingToName for a card named for a
    time at which no lay was seen.
    """
    if type(item) is Named:
        return _answer(judging, item)
    after, rulings = _take(judging, item, ask_impossible=False)
    return _remember(after, judging, item, rulings), rulings


def _remember(after: Judging, before: Judging, item: Item, rulings: list[Ruling]) -> Judging:
    start = before.start if before.start is not None else before.state
    return Judging(after.state, after.waiting, start, (item, len(rulings), before.past))


def _take(judging: Judging, item: Event | Unread, ask_impossible: bool) -> tuple[Judging, list[Ruling]]:
    """An event or an unread lay, without memory: judged, or waiting behind a question."""
    if judging.waiting:
        return Judging(judging.state, (*judging.waiting, item)), []
    if type(item) is Unread:
        return Judging(judging.state, (item,)), []
    try:
        state, rulings = step(judging.state, item)  # type: ignore[arg-type]
    except IllegalEvent:
        if not ask_impossible or type(item) is not Lay:
            raise
        return Judging(judging.state, (Unread(item.t, item.seat, item.card),)), []
    return Judging(state), rulings


def _answer(judging: Judging, named: Named) -> tuple[Judging, list[Ruling]]:
    waiting = list(judging.waiting)
    at = next((i for i, e in enumerate(waiting) if type(e) is Unread and e.t == named.lay_t), None)
    if at is None:
        return _correct(judging, named)
    unread = waiting[at]
    if named.card is None:
        del waiting[at]  # nothing was laid: what waited behind it goes on without it
    else:
        waiting[at] = Lay(unread.t, named.card, unread.seat)
    if at > 0:
        after = Judging(judging.state, tuple(waiting))  # an older question still holds
        return _remember(after, judging, named, []), []
    state = judging.state
    out: list[Ruling] = []
    rest = waiting
    if named.card is not None:
        state, out = step(state, waiting[0])  # the named card itself: a wrong name is refused
        rest = waiting[1:]
    after = Judging(state)
    for event in rest:
        after, rulings = _take(after, event, ask_impossible=True)
        out += rulings
    return _remember(after, judging, named, out), out


def _correct(judging: Judging, named: Named) -> tuple[Judging, list[Ruling]]:
    """A card named for a lay already read (or named), or for one the camera missed: the game
    judged again from that lay."""
    items = judging.items()
    at = None
    for i in range(len(items) - 1, -1, -1):
        item = items[i]
        if (type(item) is Lay and item.t == named.lay_t) or (
            type(item) is Named and item.lay_t == named.lay_t
        ):
            at = i
            break
    counts = [n for _, n in judging._past()]
    was = items[at].card if at is not None else None  # type: ignore[union-attr]
    if at is None:
        # A card the camera missed altogether: it goes in at its time, laid by the seat on turn.
        if named.card is None:
            raise NothingToName(f"no lay was seen at t={named.lay_t}")
        start = judging.start if judging.start is not None else judging.state
        if named.lay_t < start.now:
            raise NothingToName(f"t={named.lay_t} is before the game began")
        at = bisect.bisect_right([item.t for item in items], named.lay_t)
        items.insert(at, Lay(named.lay_t, named.card))
        counts.insert(at, 0)
        first = at
    else:
        if named.card == was:
            return judging, []  # the card it was read as: nothing to judge again
        first = at
        if type(items[at]) is Named:  # rulings from the lay it named on: from its unread lay
            first = next(i for i, e in enumerate(items) if type(e) is Unread and e.t == named.lay_t)
        if named.card is None and type(items[at]) is Lay:
            items[at] = Wait(items[at].t)  # nothing was laid there (a nudge read as a card): time passed
        else:  # the right card (an answer of "no card" may become one, and the other way round)
            items[at] = items[at]._replace(card=named.card)  # type: ignore[union-attr]
    start = judging.start if judging.start is not None else judging.state
    again = Judging(start)
    out: list[Ruling] = [Corrected(named.t, named.lay_t, named.card, was, sum(counts[first:]))]
    for i, item in enumerate(items):
        if type(item) is Named:
            again, rulings = _answer(again, item)
        else:
            # The corrected lay itself must be possible; a later one it makes impossible is asked.
            after, rulings = _take(again, item, ask_impossible=i > at)
            again = _remember(after, again, item, rulings)
        if i >= first:
            out += rulings
    return Judging(again.state, again.waiting, start, again.past), out


def end(judging: Judging) -> tuple[State, list[Ruling]]:
    """The game's end (the input is over): the last presses settled. Raises ValueError if a
    lay still waits for its card."""
    if judging.waiting:
        raise ValueError(NEVER_NAMED)
    return finish(judging.state)
