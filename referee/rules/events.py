"""What happens at the table, as the referee is told it: lays, snaps and the passing of time.

Times are integer microseconds on one monotonic clock; seats are indices 0..n-1.
"""

from __future__ import annotations

from typing import NamedTuple

from referee.cards import Card


class Lay(NamedTuple):
    """A card appeared on top of the stack; `seat` when it is known who laid it."""

    t: int
    card: Card
    seat: int | None = None


class Snap(NamedTuple):
    """Seat `seat` pressed its button at `t`."""

    t: int
    seat: int


class Wait(NamedTuple):
    """Time reached `t` with nothing else happening: timers may fire."""

    t: int


Event = Lay | Snap | Wait


class Unread(NamedTuple):
    """A card came to rest on the stack at `t` and the camera could not read it for sure.

    The referee holds judging at `t` until the card is named (`Named`); `guess` is the
    camera's best reading, shown to whoever names it and never acted on."""

    t: int
    seat: int | None = None
    guess: Card | None = None


class Named(NamedTuple):
    """At `t`, someone at the table named the card of the unread lay at `lay_t`; `card` None:
    nothing was laid there (the pile was only nudged)."""

    t: int
    lay_t: int
    card: Card | None


Asked = Unread | Named  # what the table says about the camera's questions, beside the events
