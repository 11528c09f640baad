"""A lay the camera cannot read for sure is asked, never guessed: judging holds at it.

Pure values and functions over the engine. `Judging` is the engine's table plus the
events taken since the first lay still waiting for its card, in time order. `take` feeds
it one item: an event is judged at once unless a question is open, when it waits; an
`Unread` lay opens a question; `Named` answers one, and everything that waited behind
it is judged then, in event time, as if the card had been read when it landed. So a
press made while the table was asked is judged against the stack as it was at the
press, with the named card in it.

A lay that waited behind a question and that the answer makes impossible (a card
already on the stack: the camera misread it) is asked in its turn, not refused: the
answer could not be known when the lay was read.
"""

from __future__ import annotations

from dataclasses import dataclass

from .engine import IllegalEvent, finish, step
from .events import Event, Lay, Named, Unread
from .rulings import Ruling
from .table import State

Item = Event | Unread | Named


NEVER_NAMED = 'this lay\'s card was never named (a "card" line for it)'


class NothingToName(ValueError):
    """A `Named` for a time at which no lay is waiting for its card."""


@dataclass(frozen=True, slots=True)
class Judging:
    """The engine's table, and what waits behind the first open question (empty: none)."""

    state: State
    waiting: tuple[Event | Unread, ...] = ()

    @property
    def open(self) -> tuple[Unread, ...]:
        """The lays still waiting for their card, oldest first."""
        return tuple(e for e in self.waiting if type(e) is Unread)

    @property
    def holding(self) -> bool:
        return bool(self.waiting)


def take(judging: Judging, item: Item) -> tuple[Judging, list[Ruling]]:
    """`judging` after `item`, and the rulings it made final.

    Raises IllegalEvent for an event the engine refuses (judged at once, or a named card
    that cannot be: it is already on the stack), NothingToName for an answer to no question.
    """
    kind = type(item)
    if kind is Named:
        return _answer(judging, item)  # type: ignore[arg-type]
    if judging.waiting:
        return Judging(judging.state, (*judging.waiting, item)), []  # type: ignore[arg-type]
    if kind is Unread:
        return Judging(judging.state, (item,)), []  # type: ignore[arg-type]
    state, rulings = step(judging.state, item)  # type: ignore[arg-type]
    return Judging(state), rulings


def _answer(judging: Judging, named: Named) -> tuple[Judging, list[Ruling]]:
    waiting = list(judging.waiting)
    at = next((i for i, e in enumerate(waiting) if type(e) is Unread and e.t == named.lay_t), None)
    if at is None:
        raise NothingToName(f"no lay waits for its card at t={named.lay_t}")
    unread = waiting[at]
    if named.card is None:
        del waiting[at]  # nothing was laid: what waited behind it goes on without it
    else:
        waiting[at] = Lay(unread.t, named.card, unread.seat)
    if at > 0:
        return Judging(judging.state, tuple(waiting)), []  # an older question still holds
    state = judging.state
    out: list[Ruling] = []
    first = 0
    if named.card is not None:
        state, rulings = step(state, waiting[0])  # the named card itself: a wrong name is refused
        out += rulings
        first = 1
    for i in range(first, len(waiting)):
        event = waiting[i]
        if type(event) is Unread:
            return Judging(state, tuple(waiting[i:])), out
        try:
            state, rulings = step(state, event)
        except IllegalEvent:
            if type(event) is not Lay:
                raise
            # Read before the answer was known, and impossible with it: ask this one too.
            asked = Unread(event.t, event.seat, event.card)
            return Judging(state, (asked, *waiting[i + 1 :])), out
        out += rulings
    return Judging(state), out


def end(judging: Judging) -> tuple[State, list[Ruling]]:
    """The game's end (the input is over): the last presses settled. Raises ValueError if a
    lay still waits for its card."""
    if judging.waiting:
        raise ValueError(NEVER_NAMED)
    return finish(judging.state)
