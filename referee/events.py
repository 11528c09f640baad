"""What happens at the table, as the referee is told it: lays, snaps and the passing of time.

Times are integer microseconds on one monotonic clock; seats are indices 0..n-1.
"""

from __future__ import annotations

from typing import NamedTuple

from .cards import Card


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
